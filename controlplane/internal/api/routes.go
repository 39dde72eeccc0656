package api

import (
	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/pkg/check"
)

// routes is the whole /v1 route table, and the invitation link (Deps.Invitations).
func routes(r *gin.Engine, d Deps) {
	checks := newChecksHandler(d)
	projects := newProjectsHandler(d)
	envVars := newEnvHandler(d)
	tokens := newTokensHandler(d)
	audit := newAuditHandler(d)
	limits := newRateLimits(d.Limiter, d.Now)
	limit := limits.org() // routes with a documented 429

	v1 := r.Group("/v1")
	v1.GET("/openapi.json", serveOpenAPI)
	v1.GET("/openapi.yaml", serveOpenAPIYAML)

	// Token introspection: a bearer token, no area, no organization selection (api/openapi/tokens.yaml).
	v1.GET("/tokens/verify", tokens.verify)
	v1.GET("/tokens/permissions", tokens.permissions)

	authed := v1.Group("", authenticate(d.Auth, d.Sessions))

	c := authed.Group("/checks", area(auth.UptimeChecks), resource("check"))
	series := newSeriesHandler(d)
	c.GET("", checks.list)
	c.GET("/overview", series.overview) // extension: openapi/console.yaml; Gin prefers it to /:check_id
	c.POST("", checks.createGeneric)
	c.GET("/:check_id", checks.getAny)
	c.PATCH("/:check_id", checks.patchGeneric)
	c.DELETE("/:check_id", checks.removeAny)
	c.POST("/:check_id/move", limit, projects.moveCheck)
	c.GET("/:check_id/results/:result_id/screenshot", newScreenshotsHandler(d).get) // extension: openapi/checks-browser.yaml
	artifacts := newArtifactsHandler(d)
	c.GET("/:check_id/results/:result_id/artifacts", artifacts.list)      // extension: openapi/artifacts.yaml
	c.GET("/:check_id/results/:result_id/artifacts/:name", artifacts.get) // extension: openapi/artifacts.yaml
	c.GET("/:check_id/regions", newRegionsHandler(d).get)                 // extension: openapi/detection.yaml
	slaReports := newSLAHandler(d)
	c.GET("/:check_id/sla", slaReports.check)         // extension: openapi/detection.yaml
	c.GET("/:check_id/timeseries", series.timeseries) // extension: openapi/console.yaml
	authed.Group("/reports", area(auth.UptimeChecks), resource("check")).GET("/sla", slaReports.org)
	// The organization's incidents across checks and heartbeats (extension: openapi/incidents.yaml):
	// the handler scopes the feed to the caller's grants, so it has no area of its own.
	authed.GET("/incidents", newIncidentFeedHandler(d).list)
	badgeCache := newBadgeCache(d.now)
	d.Auth.AddChangeListener(badgeCache) // badges disabled through any replica leave its cache
	badges := newBadgesHandler(d, badgeCache)
	c.GET("/:check_id/badge", badges.get) // extension: openapi/badges.yaml
	c.POST("/:check_id/badge", badges.enable)
	c.DELETE("/:check_id/badge", badges.disable)
	for _, k := range check.Kinds {
		seg := "/" + k.PathSegment()
		typed := c.Group(seg, resource(kindNoun[k]))
		typed.POST("", checks.create(k))
		typed.GET("/:check_id", checks.get(k))
		typed.PATCH("/:check_id", checks.patch(k))
		typed.DELETE("/:check_id", checks.remove(k))
		typed.GET("/:check_id/incidents", checks.incidents(k))
		typed.GET("/:check_id/results", checks.results(k))
	}

	p := authed.Group("/projects", area(auth.Projects), resource("project"), limit)
	p.GET("", projects.list)
	p.POST("", projects.create)
	p.GET("/:project_id", projects.get)
	p.PATCH("/:project_id", projects.update)
	p.DELETE("/:project_id", projects.remove)

	e := authed.Group("/env", area(auth.EnvironmentVariables), resource("environment variable"), limit)
	e.GET("", envVars.list)
	e.POST("", envVars.create)
	e.GET("/:environment_variable_id", envVars.get)
	e.PATCH("/:environment_variable_id", envVars.update)
	e.DELETE("/:environment_variable_id", envVars.remove)

	t := authed.Group("/tokens", area(auth.APITokens), resource("token"))
	t.GET("", tokens.list)
	t.POST("", tokens.create)
	t.GET("/:token_id", tokens.get)
	t.DELETE("/:token_id", tokens.remove)

	authed.GET("/audit_logs", area(auth.People), audit.list)

	// The deployment's agents: an operators' area, not an organization's (extension).
	authed.GET("/agents", area(auth.Agents), newAgentsHandler(d).list)
	authed.GET("/regions/unhealthy", area(auth.Agents), unhealthyRegions(d.Store)) // extension: openapi/detection.yaml

	// -- webhooks --
	wh := newWebhooksHandler(d)
	w := authed.Group("/webhooks", area(auth.Webhooks), resource("webhook"))
	w.GET("", wh.list)
	w.POST("", wh.create)
	w.GET("/:webhook_id", wh.get)
	w.PATCH("/:webhook_id", wh.update)
	w.DELETE("/:webhook_id", wh.remove)
	w.GET("/:webhook_id/deliveries", wh.deliveries)
	w.POST("/:webhook_id/deliveries/:delivery_id/resend", wh.resend)

	// -- integrations (extension) --
	ih := newIntegrationsHandler(d)
	in := authed.Group("/integrations", area(auth.Integrations), resource("integration"))
	in.GET("", ih.list)
	in.POST("", ih.create)
	in.GET("/:integration_id", ih.get)
	in.PATCH("/:integration_id", ih.update)
	in.DELETE("/:integration_id", ih.remove)
	in.GET("/:integration_id/deliveries", ih.deliveries)
	in.POST("/:integration_id/test", limits.integrationTest(), ih.test)

	// -- heartbeats and maintenance windows --
	heartbeats := newHeartbeatsHandler(d)
	hb := authed.Group("/heartbeats", area(auth.HeartbeatChecks), resource("heartbeat"))
	hb.GET("", heartbeats.list)
	hb.POST("", heartbeats.create)
	hb.GET("/:heartbeat_id", heartbeats.get)
	hb.PATCH("/:heartbeat_id", heartbeats.patch)
	hb.DELETE("/:heartbeat_id", heartbeats.remove)
	hb.POST("/:heartbeat_id/move", limit, heartbeats.move)

	windows := newWindowsHandler(d)
	mw := authed.Group("/maintenance-windows", area(auth.MaintenanceWindows), resource("maintenance window"))
	mw.GET("", windows.list)
	mw.POST("", windows.create)
	mw.GET("/:maintenance_window_id", windows.get)
	mw.PATCH("/:maintenance_window_id", windows.update)
	mw.DELETE("/:maintenance_window_id", windows.remove)

	// -- status pages --
	pages := newStatusPagesHandler(d)
	// The public summary needs no credentials. It shares the :status_page_id position with the
	// authenticated routes (gin needs one parameter name per position); the handler reads the
	// value as the page's subdomain.
	v1.GET("/status_pages/:status_page_id/summary", pages.summary)
	sp := authed.Group("/status_pages", area(auth.StatusPages), resource("status page"))
	sp.GET("", pages.list)
	sp.POST("", pages.create)
	sp.GET("/:status_page_id", pages.get)
	sp.POST("/:status_page_id", pages.update)
	sp.PATCH("/:status_page_id", pages.update)
	sp.DELETE("/:status_page_id", pages.remove)
	sp.GET("/:status_page_id/custom_domain", pages.customDomain)
	sp.POST("/:status_page_id/custom_domain/verify", pages.verifyCustomDomain)
	spc := sp.Group("/:status_page_id/components", resource("status page component"))
	spc.GET("", pages.listComponents)
	spc.POST("", pages.createComponent)
	spc.PUT("/sort-order", pages.sortComponents)
	spc.GET("/:status_page_component_id", pages.getComponent)
	spc.PATCH("/:status_page_component_id", pages.patchComponent)
	spc.DELETE("/:status_page_component_id", pages.removeComponent)
	// component_groups is an alias of groups (an extension): the name real clients use.
	for _, seg := range []string{"/:status_page_id/groups", "/:status_page_id/component_groups"} {
		spg := sp.Group(seg, resource("component group"))
		spg.GET("", pages.listGroups)
		spg.POST("", pages.createGroup)
		spg.PUT("/sort-order", pages.sortGroups)
		spg.GET("/:group_id", pages.getGroup)
		spg.PATCH("/:group_id", pages.patchGroup)
		spg.DELETE("/:group_id", pages.removeGroup)
		spg.PUT("/:group_id/sort-order", pages.sortGroupComponents)
	}
	sps := sp.Group("/:status_page_id/subscribers", resource("subscriber"))
	sps.GET("", pages.listSubscribers)
	sps.POST("", pages.createSubscriber)
	sps.DELETE("/:subscriber_id", pages.removeSubscriber)
	spi := sp.Group("/:status_page_id/incidents", resource("incident"))
	spi.GET("", pages.listIncidents)
	spi.POST("", pages.createIncident)
	spi.GET("/:status_page_incident_id", pages.getIncident)
	spi.PATCH("/:status_page_incident_id", pages.patchIncident)
	spi.DELETE("/:status_page_incident_id", pages.removeIncident)
	spu := spi.Group("/:status_page_incident_id/updates", resource("incident update"))
	spu.GET("", pages.listUpdates)
	spu.POST("", pages.createUpdate)
	spu.GET("/:incident_update_id", pages.getUpdate)
	spu.PATCH("/:incident_update_id", pages.patchUpdate)
	spu.DELETE("/:incident_update_id", pages.removeUpdate)
	spm := sp.Group("/:status_page_id/scheduled_maintenance", resource("scheduled maintenance"))
	spm.POST("", pages.createMaintenance)
	spm.GET("/:scheduled_maintenance_id", pages.getMaintenance)
	spm.PATCH("/:scheduled_maintenance_id", pages.patchMaintenance)
	spm.DELETE("/:scheduled_maintenance_id", pages.removeMaintenance)

	// -- people --
	people := newPeopleHandler(d)
	pu := authed.Group("/users", area(auth.People), resource("user"))
	pu.GET("", people.listUsers)
	pu.DELETE("/:user_id", people.removeUser)
	pi := authed.Group("/invitations", area(auth.People), resource("invitation"))
	pi.GET("", people.listInvitations)
	pi.POST("", people.createInvitation)

	// The public badges: outside /v1 and the OpenAPI document, authenticated by their token.
	public := newPublicBadges(d, badgeCache)
	r.GET("/badges/:token/:file", public.serve)
	r.HEAD("/badges/:token/:file", public.serve)

	// The invitation e-mail's link: an HTML page outside /v1, not part of the REST contract.
	if d.Invitations != nil {
		accept := gin.WrapH(d.Invitations)
		r.GET("/invitations/accept", accept)
		r.POST("/invitations/accept", accept)
	}
}

// kindNoun names each kind in "<noun> not found" messages of the typed routes.
var kindNoun = map[check.Kind]string{check.Uptime: "uptime check", check.Browser: "browser check", check.DNS: "DNS check", check.TCP: "TCP check",
	check.Multistep: "multistep check", check.Ping: "ping check", check.GRPC: "gRPC check", check.WebSocket: "WebSocket check"}
