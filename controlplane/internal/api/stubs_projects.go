package api

// PLACEHOLDER owned by the projects/variables work: replaced by projects.go and env.go.

import "github.com/gin-gonic/gin"

type projectsHandler struct{}

func newProjectsHandler(Deps) *projectsHandler      { return &projectsHandler{} }
func (h *projectsHandler) list(c *gin.Context)      { notImplemented(c) }
func (h *projectsHandler) create(c *gin.Context)    { notImplemented(c) }
func (h *projectsHandler) get(c *gin.Context)       { notImplemented(c) }
func (h *projectsHandler) update(c *gin.Context)    { notImplemented(c) }
func (h *projectsHandler) remove(c *gin.Context)    { notImplemented(c) }
func (h *projectsHandler) moveCheck(c *gin.Context) { notImplemented(c) }

type envHandler struct{}

func newEnvHandler(Deps) *envHandler        { return &envHandler{} }
func (h *envHandler) list(c *gin.Context)   { notImplemented(c) }
func (h *envHandler) create(c *gin.Context) { notImplemented(c) }
func (h *envHandler) get(c *gin.Context)    { notImplemented(c) }
func (h *envHandler) update(c *gin.Context) { notImplemented(c) }
func (h *envHandler) remove(c *gin.Context) { notImplemented(c) }
