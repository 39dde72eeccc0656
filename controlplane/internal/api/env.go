package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// envStore is what the environment variables handler needs from the store.
type envStore interface {
	ListEnvVars(ctx context.Context, orgID uuid.UUID, f store.EnvVarFilter, limit, offset int64) ([]store.EnvVar, int64, error)
	GetEnvVar(ctx context.Context, orgID, id uuid.UUID) (store.EnvVar, error)
	CreateEnvVar(ctx context.Context, actor store.Actor, orgID uuid.UUID, in store.NewEnvVar) (store.EnvVar, error)
	UpdateEnvVar(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, p store.EnvVarPatch) (store.EnvVar, error)
	DeleteEnvVar(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	ChecksUsingEnvVar(ctx context.Context, orgID, varID uuid.UUID) ([]uuid.UUID, error)
}

var _ envStore = (*store.Store)(nil)

// envHandler serves /v1/env, the {{NAME}} environment variables (api/openapi/environment-variables.yaml).
type envHandler struct {
	st      envStore
	changed func(uuid.UUID)
}

func newEnvHandler(d Deps) *envHandler { return &envHandler{st: d.Store, changed: d.checkChanged} }

// maxEnvSearch is the longest search string of the variable list, in characters.
const maxEnvSearch = 64

// envVarJSON is the variable record. value is present only on single-variable responses of
// config variables; lists and secrets never carry it. project_id null is the organization-level
// scope that Unassigned checks use.
type envVarJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	HasValue  bool    `json:"has_value"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
	Value     *string `json:"value,omitempty"`
	ProjectID *string `json:"project_id"`
}

// toEnvVarJSON renders a variable; withValue allows the value of a config variable.
func toEnvVarJSON(v store.EnvVar, withValue bool) envVarJSON {
	out := envVarJSON{ID: v.ID.String(), Name: v.Name, Type: v.Type, HasValue: true,
		CreatedAt: formatTime(v.CreatedAt), UpdatedAt: formatTime(v.UpdatedAt)}
	if withValue && v.Type == store.EnvVarConfig && v.Value != nil {
		value := *v.Value
		out.Value = &value
	}
	if v.ProjectID != nil {
		s := v.ProjectID.String()
		out.ProjectID = &s
	}
	return out
}

// list is GET /v1/env: page, per_page, search (case-insensitive substring of the name) and
// project_id (a project id, or the literal "unassigned" for the organization-level scope;
// omitted lists every scope).
func (h *envHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	var f store.EnvVarFilter
	if f.Search, err = searchQuery(c, maxEnvSearch); err != nil {
		return 0, nil, err
	}
	if s, given := c.GetQuery("project_id"); given {
		f.Scoped = true
		if s != "unassigned" {
			id, err := parseProjectID("project_id", s)
			if err != nil {
				return 0, nil, err
			}
			f.ProjectID = &id
		}
	}
	items, total, err := h.st.ListEnvVars(c, orgID(c), f, p.PerPage, p.Offset())
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	out := make([]envVarJSON, len(items))
	for i, v := range items {
		out[i] = toEnvVarJSON(v, false)
	}
	return listed(out, p, total, nil)
}

// checkEnvName records a broken name rule.
func checkEnvName(o *object, name string) {
	if !check.VarNamePattern.MatchString(name) {
		o.Fail("name", "must match %s: 1 to 64 upper-case letters, digits and underscores, not starting with a digit", check.VarNamePattern.String())
	}
}

// checkEnvValue records a broken value rule.
func checkEnvValue(o *object, value string) {
	if len(value) > store.MaxEnvVarValueBytes {
		o.Fail("value", "must be at most %d bytes of UTF-8, got %d", store.MaxEnvVarValueBytes, len(value))
	}
}

// create is POST /v1/env: strict {name, type, value, project_id?}.
func (h *envHandler) create(c *gin.Context) (int, any, error) {
	in, err := decodeBody(c, decodeNewEnvVar)
	if err != nil {
		return 0, nil, err
	}
	v, err := h.st.CreateEnvVar(c, actor(c), orgID(c), in)
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	return http.StatusCreated, toEnvVarJSON(v, true), nil
}

func decodeNewEnvVar(o *object) store.NewEnvVar {
	var in store.NewEnvVar
	if o.Require("name") {
		if v, ok := field[string](o, "name").Value(); ok {
			checkEnvName(o, v)
			in.Name = v
		}
	}
	if o.Require("type") {
		if v, ok := field[string](o, "type").Value(); ok {
			if v != store.EnvVarConfig && v != store.EnvVarSecret {
				o.Fail("type", "must be one of config, secret")
			}
			in.Type = v
		}
	}
	if o.Require("value") {
		if v, ok := field[string](o, "value").Value(); ok {
			checkEnvValue(o, v)
			in.Value = v
		}
	}
	in.ProjectID = projectIDField(o, "project_id")
	return in
}

func (h *envHandler) get(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "environment_variable_id", 1)
	if err != nil {
		return 0, nil, err
	}
	v, err := h.st.GetEnvVar(c, orgID(c), id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toEnvVarJSON(v, true), nil
}

// update is PATCH /v1/env/{id}: strict {name?, value?}, at least one. type and project_id
// cannot be changed (a variable keeps its type and scope for life).
func (h *envHandler) update(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "environment_variable_id", 1)
	if err != nil {
		return 0, nil, err
	}
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	if o.Empty() {
		return 0, nil, badRequest("request body must change name or value")
	}
	var p store.EnvVarPatch
	if v := nonNull[string](o, "name"); v.Set {
		checkEnvName(o, v.V)
		p.Name = &v.V
	}
	if v := nonNull[string](o, "value"); v.Set {
		checkEnvValue(o, v.V)
		p.Value = &v.V
	}
	o.Forbid("type", "cannot be changed: delete the variable and create it again with the other type")
	o.Forbid("project_id", "cannot be changed: variables cannot be moved between projects")
	o.Strict()
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	v, err := h.st.UpdateEnvVar(c, actor(c), orgID(c), id, p)
	if err != nil {
		return 0, nil, err
	}
	// Jobs carry resolved values: checks using the variable must be rebuilt now. Best effort,
	// since the scheduler's periodic resync repairs a missed notification.
	if users, err := h.st.ChecksUsingEnvVar(c, orgID(c), id); err == nil {
		for _, checkID := range users {
			h.changed(checkID)
		}
	}
	return http.StatusOK, toEnvVarJSON(v, true), nil
}

func (h *envHandler) remove(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "environment_variable_id", 1)
	if err != nil {
		return 0, nil, err
	}
	return removed(id.String(), h.st.DeleteEnvVar(c, actor(c), orgID(c), id))
}
