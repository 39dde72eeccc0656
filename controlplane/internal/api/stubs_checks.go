package api

// PLACEHOLDER owned by the checks-API work: replaced by checks.go.

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/pkg/check"
)

func notImplemented(c *gin.Context) {
	fail(c, &apiError{Status: http.StatusNotImplemented, Type: "not_implemented", Message: "not implemented"})
}

type checksHandler struct{}

func newChecksHandler(Deps) *checksHandler                    { return &checksHandler{} }
func (h *checksHandler) list(c *gin.Context)                  { notImplemented(c) }
func (h *checksHandler) createGeneric(c *gin.Context)         { notImplemented(c) }
func (h *checksHandler) getAny(c *gin.Context)                { notImplemented(c) }
func (h *checksHandler) patchGeneric(c *gin.Context)          { notImplemented(c) }
func (h *checksHandler) removeAny(c *gin.Context)             { notImplemented(c) }
func (h *checksHandler) create(check.Kind) gin.HandlerFunc    { return notImplemented }
func (h *checksHandler) get(check.Kind) gin.HandlerFunc       { return notImplemented }
func (h *checksHandler) patch(check.Kind) gin.HandlerFunc     { return notImplemented }
func (h *checksHandler) remove(check.Kind) gin.HandlerFunc    { return notImplemented }
func (h *checksHandler) incidents(check.Kind) gin.HandlerFunc { return notImplemented }
func (h *checksHandler) results(check.Kind) gin.HandlerFunc   { return notImplemented }
