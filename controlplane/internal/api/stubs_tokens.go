package api

// PLACEHOLDER owned by the tokens/audit work: replaced by tokens.go, audit.go and openapi.go.

import "github.com/gin-gonic/gin"

type tokensHandler struct{}

func newTokensHandler(Deps) *tokensHandler          { return &tokensHandler{} }
func (h *tokensHandler) verify(c *gin.Context)      { notImplemented(c) }
func (h *tokensHandler) permissions(c *gin.Context) { notImplemented(c) }
func (h *tokensHandler) list(c *gin.Context)        { notImplemented(c) }
func (h *tokensHandler) create(c *gin.Context)      { notImplemented(c) }
func (h *tokensHandler) get(c *gin.Context)         { notImplemented(c) }
func (h *tokensHandler) remove(c *gin.Context)      { notImplemented(c) }

type auditHandler struct{}

func newAuditHandler(Deps) *auditHandler    { return &auditHandler{} }
func (h *auditHandler) list(c *gin.Context) { notImplemented(c) }

func serveOpenAPI(c *gin.Context) { notImplemented(c) }
