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
	v1.GET("/openapi.json", wrap(serveOpenAPI))
	v1.GET("/openapi.yaml", wrap(serveOpenAPIYAML))

	// Token introspection: a bearer token, no area, no organization selection (api/openapi/tokens.yaml).
	v1.GET("/tokens/verify", wrap(tokens.verify))
	v1.GET("/tokens/permissions", wrap(tokens.permissions))

	authed := v1.Group("", authenticate(d.Auth, d.Sessions))

	c := authed.Group("/checks", area(auth.UptimeChecks), resource("check"))
	series := newSeriesHandler(d)
	c.GET("", wrap(checks.list))
	c.GET("/overview", wrap(series.overview)) // extension: openapi/console.yaml; Gin prefers it to /:check_id
	c.POST("", wrap(checks.createGeneric))
	c.GET("/:check_id", wrap(checks.get("")))
	c.PATCH("/:check_id", wrap(checks.patch("")))
	c.DELETE("/:check_id", wrap(checks.remove("")))
	c.POST("/:check_id/move", limit, wrap(projects.moveCheck))
	c.GET("/:check_id/results/:result_id/screenshot", wrap(newScreenshotsHandler(d).get)) // extension: openapi/checks-browser.yaml
	artifacts := newArtifactsHandler(d)
	c.GET("/:check_id/results/:result_id/artifacts", wrap(artifacts.list))          // extension: openapi/artifacts.yaml
	c.GET("/:check_id/results/:result_id/artifacts/:name", wrap(artifacts.get))     // extension: openapi/artifacts.yaml
	c.GET("/:check_id/regions", wrap(withID("check_id", newRegionsHandler(d).get))) // extension: openapi/detection.yaml
	slaReports := newSLAHandler(d)
	c.GET("/:check_id/sla", wrap(withID("check_id", slaReports.check)))         // extension: openapi/detection.yaml
	c.GET("/:check_id/timeseries", wrap(withID("check_id", series.timeseries))) // extension: openapi/console.yaml
	authed.Group("/reports", area(auth.UptimeChecks), resource("check")).GET("/sla", wrap(slaReports.org))
	// The organization's incidents across checks and heartbeats (extension: openapi/incidents.yaml):
	// the handler scopes the feed to the caller's grants, so it has no area of its own.
	authed.GET("/incidents", wrap(newIncidentFeedHandler(d).list))
	badgeCache := newBadgeCache(d.now)
	d.Auth.AddChangeListener(badgeCache) // badges disabled through any replica leave its cache
	badges := newBadgesHandler(d, badgeCache)
	c.GET("/:check_id/badge", wrap(withID("check_id", badges.get))) // extension: openapi/badges.yaml
	c.POST("/:check_id/badge", wrap(withID("check_id", badges.enable)))
	c.DELETE("/:check_id/badge", wrap(withID("check_id", badges.disable)))
	for _, k := range check.Kinds {
		seg := "/" + k.PathSegment()
		typed := c.Group(seg, resource(kindNoun[k]))
		typed.POST("", wrap(checks.create(k)))
		typed.GET("/:check_id", wrap(checks.get(k)))
		typed.PATCH("/:check_id", wrap(checks.patch(k)))
		typed.DELETE("/:check_id", wrap(checks.remove(k)))
		typed.GET("/:check_id/incidents", wrap(checks.incidents(k)))
		typed.GET("/:check_id/results", wrap(checks.results(k)))
	}

	p := authed.Group("/projects", area(auth.Projects), resource("project"), limit)
	p.GET("", wrap(projects.list))
	p.POST("", wrap(projects.create))
	p.GET("/:project_id", wrap(projects.get))
	p.PATCH("/:project_id", wrap(projects.update))
	p.DELETE("/:project_id", wrap(projects.remove))

	e := authed.Group("/env", area(auth.EnvironmentVariables), resource("environment variable"), limit)
	e.GET("", wrap(envVars.list))
	e.POST("", wrap(envVars.create))
	e.GET("/:environment_variable_id", wrap(envVars.get))
	e.PATCH("/:environment_variable_id", wrap(envVars.update))
	e.DELETE("/:environment_variable_id", wrap(envVars.remove))

	t := authed.Group("/tokens", area(auth.APITokens), resource("token"))
	t.GET("", wrap(tokens.list))
	t.POST("", wrap(tokens.create))
	t.GET("/:token_id", wrap(tokens.get))
	t.DELETE("/:token_id", wrap(tokens.remove))

	authed.GET("/audit_logs", area(auth.People), wrap(audit.list))

	// The deployment's agents: an operators' area, not an organization's (extension).
	authed.GET("/agents", area(auth.Agents), wrap(newAgentsHandler(d).list))
	authed.GET("/regions/unhealthy", area(auth.Agents), wrap(unhealthyRegions(d.Store))) // extension: openapi/detection.yaml

	// -- webhooks --
	wh := newWebhooksHandler(d)
	w := authed.Group("/webhooks", area(auth.Webhooks), resource("webhook"))
	w.GET("", wrap(wh.list))
	w.POST("", wrap(wh.create))
	w.GET("/:webhook_id", wrap(withID("webhook_id", wh.get)))
	w.PATCH("/:webhook_id", wrap(withID("webhook_id", wh.update)))
	w.DELETE("/:webhook_id", wrap(withID("webhook_id", wh.remove)))
	w.GET("/:webhook_id/deliveries", wrap(withID("webhook_id", wh.deliveries)))
	w.POST("/:webhook_id/deliveries/:delivery_id/resend", wrap(withID("webhook_id", wh.resend)))

	// -- integrations (extension) --
	ih := newIntegrationsHandler(d)
	in := authed.Group("/integrations", area(auth.Integrations), resource("integration"))
	in.GET("", wrap(ih.list))
	in.POST("", wrap(ih.create))
	in.GET("/:integration_id", wrap(withID("integration_id", ih.get)))
	in.PATCH("/:integration_id", wrap(withID("integration_id", ih.update)))
	in.DELETE("/:integration_id", wrap(withID("integration_id", ih.remove)))
	in.GET("/:integration_id/deliveries", wrap(withID("integration_id", ih.deliveries)))
	in.POST("/:integration_id/test", limits.integrationTest(), wrap(withID("integration_id", ih.test)))

	// -- heartbeats and maintenance windows --
	heartbeats := newHeartbeatsHandler(d)
	hb := authed.Group("/heartbeats", area(auth.HeartbeatChecks), resource("heartbeat"))
	hb.GET("", wrap(heartbeats.list))
	hb.POST("", wrap(heartbeats.create))
	hb.GET("/:heartbeat_id", wrap(withID("heartbeat_id", heartbeats.get)))
	hb.PATCH("/:heartbeat_id", wrap(withID("heartbeat_id", heartbeats.patch)))
	hb.DELETE("/:heartbeat_id", wrap(withID("heartbeat_id", heartbeats.remove)))
	hb.POST("/:heartbeat_id/move", limit, wrap(withID("heartbeat_id", heartbeats.move)))

	windows := newWindowsHandler(d)
	mw := authed.Group("/maintenance-windows", area(auth.MaintenanceWindows), resource("maintenance window"))
	mw.GET("", wrap(windows.list))
	mw.POST("", wrap(windows.create))
	mw.GET("/:maintenance_window_id", wrap(withID("maintenance_window_id", windows.get)))
	mw.PATCH("/:maintenance_window_id", wrap(withID("maintenance_window_id", windows.update)))
	mw.DELETE("/:maintenance_window_id", wrap(withID("maintenance_window_id", windows.remove)))

	// -- status pages --
	pages := newStatusPagesHandler(d)
	// The public summary needs no credentials. It shares the :status_page_id position with the
	// authenticated routes (gin needs one parameter name per position); the handler reads the
	// value as the page's subdomain.
	v1.GET("/status_pages/:status_page_id/summary", wrap(pages.summary))
	sp := authed.Group("/status_pages", area(auth.StatusPages), resource("status page"))
	sp.GET("", wrap(pages.list))
	sp.POST("", wrap(pages.create))
	sp.GET("/:status_page_id", wrap(onPage(pages.get)))
	sp.POST("/:status_page_id", wrap(onPage(pages.update)))
	sp.PATCH("/:status_page_id", wrap(onPage(pages.update)))
	sp.DELETE("/:status_page_id", wrap(onPage(pages.remove)))
	sp.GET("/:status_page_id/custom_domain", wrap(onPage(pages.customDomain)))
	sp.POST("/:status_page_id/custom_domain/verify", wrap(onPage(pages.verifyCustomDomain)))
	spc := sp.Group("/:status_page_id/components", resource("status page component"))
	spc.GET("", wrap(onPage(pages.listComponents)))
	spc.POST("", wrap(onPage(pages.createComponent)))
	spc.PUT("/sort-order", wrap(onPage(pages.sortComponents)))
	spc.GET("/:status_page_component_id", wrap(withIDs(pages.getComponent, componentPath...)))
	spc.PATCH("/:status_page_component_id", wrap(withIDs(pages.patchComponent, componentPath...)))
	spc.DELETE("/:status_page_component_id", wrap(withIDs(pages.removeComponent, componentPath...)))
	// component_groups is an alias of groups (an extension): the name real clients use.
	for _, seg := range []string{"/:status_page_id/groups", "/:status_page_id/component_groups"} {
		spg := sp.Group(seg, resource("component group"))
		spg.GET("", wrap(onPage(pages.listGroups)))
		spg.POST("", wrap(onPage(pages.createGroup)))
		spg.PUT("/sort-order", wrap(onPage(pages.sortGroups)))
		spg.GET("/:group_id", wrap(withIDs(pages.getGroup, groupPath...)))
		spg.PATCH("/:group_id", wrap(withIDs(pages.patchGroup, groupPath...)))
		spg.DELETE("/:group_id", wrap(withIDs(pages.removeGroup, groupPath...)))
		spg.PUT("/:group_id/sort-order", wrap(withIDs(pages.sortGroupComponents, groupPath...)))
	}
	sps := sp.Group("/:status_page_id/subscribers", resource("subscriber"))
	sps.GET("", wrap(pages.onSubscriberPage(pages.listSubscribers)))
	sps.POST("", wrap(pages.onSubscriberPage(pages.createSubscriber)))
	sps.DELETE("/:subscriber_id", wrap(pages.onSubscriberPage(pages.removeSubscriber)))
	spi := sp.Group("/:status_page_id/incidents", resource("incident"))
	spi.GET("", wrap(onPage(pages.listIncidents)))
	spi.POST("", wrap(onPage(pages.createIncident)))
	spi.GET("/:status_page_incident_id", wrap(withIDs(pages.getIncident, incidentPath...)))
	spi.PATCH("/:status_page_incident_id", wrap(withIDs(pages.patchIncident, incidentPath...)))
	spi.DELETE("/:status_page_incident_id", wrap(withIDs(pages.removeIncident, incidentPath...)))
	spu := spi.Group("/:status_page_incident_id/updates", resource("incident update"))
	spu.GET("", wrap(withIDs(pages.listUpdates, incidentPath...)))
	spu.POST("", wrap(withIDs(pages.createUpdate, incidentPath...)))
	spu.GET("/:incident_update_id", wrap(withIDs(pages.getUpdate, updatePath...)))
	spu.PATCH("/:incident_update_id", wrap(withIDs(pages.patchUpdate, updatePath...)))
	spu.DELETE("/:incident_update_id", wrap(withIDs(pages.removeUpdate, updatePath...)))
	spm := sp.Group("/:status_page_id/scheduled_maintenance", resource("scheduled maintenance"))
	spm.POST("", wrap(onPage(pages.createMaintenance)))
	spm.GET("/:scheduled_maintenance_id", wrap(withIDs(pages.getMaintenance, maintenancePath...)))
	spm.PATCH("/:scheduled_maintenance_id", wrap(withIDs(pages.patchMaintenance, maintenancePath...)))
	spm.DELETE("/:scheduled_maintenance_id", wrap(withIDs(pages.removeMaintenance, maintenancePath...)))

	// -- people --
	people := newPeopleHandler(d)
	pu := authed.Group("/users", area(auth.People), resource("user"))
	pu.GET("", wrap(people.listUsers))
	pu.DELETE("/:user_id", wrap(people.removeUser))
	pi := authed.Group("/invitations", area(auth.People), resource("invitation"))
	pi.GET("", wrap(people.listInvitations))
	pi.POST("", wrap(people.createInvitation))

	// The public badges: outside /v1 and the OpenAPI document, authenticated by their token.
	public := newPublicBadges(d, badgeCache)
	r.GET("/badges/:token/:file", wrap(public.serve))
	r.HEAD("/badges/:token/:file", wrap(public.serve))

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
