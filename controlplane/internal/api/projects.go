package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// projectStore is what the projects handler needs from the store.
type projectStore interface {
	ListProjects(ctx context.Context, orgID uuid.UUID, limit, offset int64) ([]store.Project, int64, error)
	GetProject(ctx context.Context, orgID, id uuid.UUID) (store.Project, error)
	CreateProject(ctx context.Context, actor store.Actor, orgID uuid.UUID, name string) (store.Project, error)
	RenameProject(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, name string) (store.Project, error)
	DeleteProject(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	MoveCheck(ctx context.Context, actor store.Actor, orgID, checkID uuid.UUID, dest *uuid.UUID) (store.MoveResult, error)
}

var _ projectStore = (*store.Store)(nil)

// projectsHandler serves /v1/projects (api/openapi/projects.yaml) and the check move (api/openapi/projects.yaml).
type projectsHandler struct {
	st      projectStore
	changed func(uuid.UUID)
}

func newProjectsHandler(d Deps) *projectsHandler {
	return &projectsHandler{st: d.Store, changed: d.checkChanged}
}

// projectJSON is the project record.
//
// is_default is always false: Vantage keeps the public contract's "Unassigned" model (api/openapi/projects.yaml), where
// a resource without a project is Unassigned rather than in an organization's Default project.
// The field stays because the project record of the contract carries it, and clients key on it.
type projectJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	IsDefault bool   `json:"is_default"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func toProjectJSON(p store.Project) projectJSON {
	return projectJSON{ID: p.ID.String(), Name: p.Name, IsDefault: p.IsDefault,
		CreatedAt: formatTime(p.CreatedAt), UpdatedAt: formatTime(p.UpdatedAt)}
}

// maxProjectName is the longest project name, in characters.
const maxProjectName = 255

// projectIDShape is the contract's project id format (api/openapi/openapi.yaml): 16–128 letters, digits
// and hyphens, at least one of them a letter or a hyphen. (RE2 has no lookahead; the "at least
// one" part is projectIDHasLetter.)
var (
	projectIDShape     = regexp.MustCompile(`^[a-zA-Z0-9-]{16,128}$`)
	projectIDHasLetter = regexp.MustCompile(`[a-zA-Z-]`)
)

// parseProjectID reads a project id given by a client (path, body or query), named name in
// messages. A value outside the contract's format, or a well-formed one that is not how Vantage
// writes its ids (a lowercase UUID), is a 400; whether the project exists is the store's call.
func parseProjectID(name, s string) (uuid.UUID, error) {
	if !projectIDShape.MatchString(s) || !projectIDHasLetter.MatchString(s) {
		return uuid.Nil, fieldErrors{{name, "must be a project id: 16 to 128 letters, digits or hyphens"}}
	}
	id, err := uuid.Parse(s)
	if err != nil || id.String() != s {
		return uuid.Nil, fieldErrors{{name, "is not a canonical project id (a lowercase UUID such as 0192f7c4-8d3e-7a55-9b1e-3f5a2c7d9e01)"}}
	}
	return id, nil
}

// projectIDField decodes an optional body field that holds a project id or null; it returns
// nil when the field is absent, null or broken (the problem is recorded on o).
func projectIDField(o *object, name string) *uuid.UUID {
	v, given := field[string](o, name).Value()
	if !given {
		return nil
	}
	id, err := parseProjectID(o.name(name), v)
	if err != nil {
		o.Fail(name, "%s", err.(fieldErrors)[0].Message)
		return nil
	}
	return &id
}

// projectQuery reads the project_id query parameter of lists and reports: a project id, or
// "unassigned" for what is in no project; absent, neither.
func projectQuery(c *gin.Context) (id *uuid.UUID, unassigned bool, err error) {
	v, given := c.GetQuery("project_id")
	if !given || v == "unassigned" {
		return nil, given, nil
	}
	pid, err := parseProjectID("project_id", v)
	if err != nil {
		return nil, false, err
	}
	return &pid, false, nil
}

// projectNotFound names the project in a 404 when a project given as input does not exist.
func projectNotFound(err error) error {
	if errors.Is(err, store.ErrProjectNotFound) {
		return notFound("project")
	}
	return err
}

func (h *projectsHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListProjects(c, orgID(c), p.PerPage, p.Offset())
	return listed(mapped(items, toProjectJSON), p, total, err)
}

// readProjectBody reads the strict {name} body of create and update.
func readProjectBody(c *gin.Context) (string, error) {
	o, err := readObject(c)
	if err != nil {
		return "", err
	}
	var name string
	if o.Require("name") {
		if v, ok := nonNull[string](o, "name").Value(); ok {
			if n := utf8.RuneCountInString(v); n < 1 || n > maxProjectName {
				o.Fail("name", "must be 1 to %d characters long", maxProjectName)
			}
			name = v
		}
	}
	o.Strict()
	return name, o.Err()
}

func (h *projectsHandler) create(c *gin.Context) (int, any, error) {
	name, err := readProjectBody(c)
	if err != nil {
		return 0, nil, err
	}
	p, err := h.st.CreateProject(c, actor(c), orgID(c), name)
	return rendered(http.StatusCreated, toProjectJSON, p, err)
}

func (h *projectsHandler) get(c *gin.Context) (int, any, error) {
	id, err := parseProjectID("project_id", c.Param("project_id"))
	if err != nil {
		return 0, nil, err
	}
	p, err := h.st.GetProject(c, orgID(c), id)
	return rendered(http.StatusOK, toProjectJSON, p, err)
}

func (h *projectsHandler) update(c *gin.Context) (int, any, error) {
	id, err := parseProjectID("project_id", c.Param("project_id"))
	if err != nil {
		return 0, nil, err
	}
	name, err := readProjectBody(c)
	if err != nil {
		return 0, nil, err
	}
	p, err := h.st.RenameProject(c, actor(c), orgID(c), id, name)
	return rendered(http.StatusOK, toProjectJSON, p, err)
}

func (h *projectsHandler) remove(c *gin.Context) (int, any, error) {
	id, err := parseProjectID("project_id", c.Param("project_id"))
	if err != nil {
		return 0, nil, err
	}
	return removed(id.String(), h.st.DeleteProject(c, actor(c), orgID(c), id))
}

// moveJSON is the result of a move: where the check now is (project_id null = Unassigned).
type moveJSON struct {
	ID        string  `json:"id"`
	ProjectID *string `json:"project_id"`
}

// moveCheck is POST /v1/checks/{check_id}/move: strict {project_id}, a project id or null
// (Unassigned), required. A move to where the check already is answers 200 and changes nothing.
func (h *projectsHandler) moveCheck(c *gin.Context) (int, any, error) {
	checkID, err := pathID(c, "check_id", minPathIDLen)
	if err != nil {
		return 0, nil, err
	}
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	var dest *uuid.UUID
	if !o.Has("project_id") {
		o.Require("project_id")
	} else {
		dest = projectIDField(o, "project_id")
	}
	o.Strict()
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	res, err := h.st.MoveCheck(c, actor(c), orgID(c), checkID, dest)
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	h.changed(checkID)
	out := moveJSON{ID: res.ID.String()}
	if res.ProjectID != nil {
		s := res.ProjectID.String()
		out.ProjectID = &s
	}
	return http.StatusOK, out, nil
}
