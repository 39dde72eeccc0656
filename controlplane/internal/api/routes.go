package api

import (
	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/pkg/check"
)

// routes is the whole /v1 route table.
func routes(r *gin.Engine, d Deps) {
	checks := newChecksHandler(d)
	projects := newProjectsHandler(d)
	envVars := newEnvHandler(d)
	tokens := newTokensHandler(d)
	audit := newAuditHandler(d)
	limit := newOrgRateLimiter(defaultOrgRate, defaultOrgBurst, d.Now) // routes with a documented 429

	v1 := r.Group("/v1")
	v1.GET("/openapi.json", serveOpenAPI)

	// Token introspection: a bearer token, no area, no organization selection (supplement §2.1).
	v1.GET("/tokens/verify", tokens.verify)
	v1.GET("/tokens/permissions", tokens.permissions)

	authed := v1.Group("", authenticate(d.Auth))

	c := authed.Group("/checks", area(auth.UptimeChecks), resource("check"))
	c.GET("", checks.list)
	c.POST("", checks.createGeneric)
	c.GET("/:check_id", checks.getAny)
	c.PATCH("/:check_id", checks.patchGeneric)
	c.DELETE("/:check_id", checks.removeAny)
	c.POST("/:check_id/move", limit.middleware(), projects.moveCheck)
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

	p := authed.Group("/projects", area(auth.Projects), resource("project"), limit.middleware())
	p.GET("", projects.list)
	p.POST("", projects.create)
	p.GET("/:project_id", projects.get)
	p.PATCH("/:project_id", projects.update)
	p.DELETE("/:project_id", projects.remove)

	e := authed.Group("/env", area(auth.EnvironmentVariables), resource("environment variable"), limit.middleware())
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

	// -- webhooks --

	// -- heartbeats and maintenance windows --

	// -- status pages --
}

// kindNoun names each kind in "<noun> not found" messages of the typed routes.
var kindNoun = map[check.Kind]string{check.Uptime: "uptime check", check.Browser: "browser check", check.DNS: "DNS check", check.TCP: "TCP check"}
