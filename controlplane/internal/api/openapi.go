package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument describes every route of the route table as OpenAPI 3.1. It is written by hand
// from api.md and the supplement; TestOpenAPICoversEveryRoute fails when a route is missing.
//
//go:embed openapi.json
var openAPIDocument []byte

// serveOpenAPI serves the OpenAPI document at GET /v1/openapi.json, without authentication.
func serveOpenAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIDocument)
}
