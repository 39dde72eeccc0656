package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// checkStore is what the checks API needs from storage.
type checkStore interface {
	CreateCheck(ctx context.Context, actor store.Actor, orgID uuid.UUID, projectID *uuid.UUID, sp check.Spec) (store.Check, error)
	GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (store.Check, error)
	CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error)
	UpdateCheck(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, kind check.Kind, change func(*store.Check) error) (store.Check, error)
	DeleteCheck(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, kind check.Kind) error
	ListChecks(ctx context.Context, orgID uuid.UUID, f store.CheckFilter, limit, offset int64) ([]store.CheckSummary, int64, error)
	ListCheckIncidents(ctx context.Context, orgID, checkID uuid.UUID, from, to *time.Time, limit, offset int64) ([]store.CheckIncident, int64, error)
	ListCheckResults(ctx context.Context, orgID, checkID uuid.UUID, from, to time.Time, limit, offset int64) ([]store.CheckResult, int64, error)
}

var _ checkStore = (*store.Store)(nil)

// checksHandler serves /v1/checks: the generic routes of api/openapi/checks.yaml and the typed
// routes of every kind (/v1/checks/{uptime,browser,dns,tcp}, api/openapi/checks-*.yaml).
type checksHandler struct {
	st      checkStore
	changed func(uuid.UUID)
}

func newChecksHandler(d Deps) *checksHandler {
	return &checksHandler{st: d.Store, changed: d.checkChanged}
}

// list is GET /v1/checks.
func (h *checksHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	f := store.CheckFilter{Search: c.Query("search"), Status: checkListStatus(c.Query("filter"))}
	if f.ProjectID, f.Unassigned, err = projectQuery(c); err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListChecks(c, orgID(c), f, p.PerPage, p.Offset())
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	out := make([]checkListItemJSON, len(items))
	for i, it := range items {
		out[i] = renderCheckListItem(it)
	}
	return listed(out, p, total, nil)
}

// checkListStatus maps the list's filter to a status to match. NA, omitted and unrecognized
// values leave the status unfiltered (api/openapi); values are matched case-insensitively.
func checkListStatus(filter string) string {
	switch f := strings.ToUpper(strings.TrimSpace(filter)); f {
	case "DOWN", "MUTED", "PAUSED", "PENDING", "RECOVERING", "UP", "VERIFYING":
		return f
	}
	return ""
}

// createGeneric is POST /v1/checks: an uptime (default) or browser check, by `type`.
func (h *checksHandler) createGeneric(c *gin.Context) (int, any, error) {
	return h.createCheck(c, checkBody{create: true, generic: true})
}

// create is POST /v1/checks/<kind>.
func (h *checksHandler) create(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) { return h.createCheck(c, checkBody{create: true, kind: k}) }
}

func (h *checksHandler) createCheck(c *gin.Context, b checkBody) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	var in store.Check
	if err := decodeCheck(o, b, &in); err != nil {
		return 0, nil, err
	}
	chk, err := h.st.CreateCheck(c, actor(c), orgID(c), in.ProjectID, in.Spec)
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	h.changed(chk.ID)
	return http.StatusCreated, renderCheck(chk, false), nil
}

// get is GET /v1/checks/<kind>/{check_id}, and GET /v1/checks/{check_id} when k is "" (a check
// of any kind); a check of another kind is not found. The answer carries the check's script.
func (h *checksHandler) get(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, err := pathID(c, "check_id", minPathIDLen)
		if err != nil {
			return 0, nil, err
		}
		chk, err := h.st.GetCheck(c, orgID(c), id, true)
		if err == nil && k != "" && chk.Spec.Kind != k {
			err = store.ErrNotFound
		}
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, renderCheck(chk, true), nil
	}
}

// patch is PATCH /v1/checks/<kind>/{check_id}, and PATCH /v1/checks/{check_id} when k is "":
// the body of the stored check's kind, plus project_id (a string moves the check, null makes
// it Unassigned) and, for uptime and browser checks, `type` to switch between the two.
func (h *checksHandler) patch(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, err := pathID(c, "check_id", minPathIDLen)
		if err != nil {
			return 0, nil, err
		}
		o, err := readObject(c)
		if err != nil {
			return 0, nil, err
		}
		chk, err := h.st.UpdateCheck(c, actor(c), orgID(c), id, k, func(cur *store.Check) error {
			b := checkBody{kind: k}
			if k == "" {
				b = checkBody{generic: true, kind: cur.Spec.Kind}
			}
			return decodeCheck(o, b, cur)
		})
		if err != nil {
			return 0, nil, projectNotFound(err)
		}
		h.changed(chk.ID)
		return http.StatusOK, renderCheck(chk, false), nil
	}
}

// remove is DELETE /v1/checks/<kind>/{check_id}, and DELETE /v1/checks/{check_id} when k is "".
func (h *checksHandler) remove(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, err := pathID(c, "check_id", minPathIDLen)
		if err != nil {
			return 0, nil, err
		}
		if err := h.st.DeleteCheck(c, actor(c), orgID(c), id, k); err != nil {
			return 0, nil, err
		}
		h.changed(id)
		return removed(id.String(), nil)
	}
}

// history reads the query and path of an incident or result list (page, per_page, from and
// to, required when rangeRequired) and makes sure the check is one of this organization's
// checks of kind k.
func (h *checksHandler) history(c *gin.Context, k check.Kind, rangeRequired bool) (uuid.UUID, page, timeRange, error) {
	p, err := parsePage(c, historyPages)
	if err != nil {
		return uuid.Nil, p, timeRange{}, err
	}
	r, err := parseRange(c, rangeRequired)
	if err != nil {
		return uuid.Nil, p, r, err
	}
	// Incident and result lists take check ids of one character or more (api/openapi/openapi.yaml);
	// every other route takes minPathIDLen.
	id, err := pathID(c, "check_id", 1)
	if err != nil {
		return id, p, r, err
	}
	kind, err := h.st.CheckKind(c, orgID(c), id)
	if err == nil && kind != k {
		err = store.ErrNotFound
	}
	return id, p, r, err
}

// incidents is GET /v1/checks/<kind>/{check_id}/incidents: incidents overlapping [from, to),
// newest first.
func (h *checksHandler) incidents(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, p, r, err := h.history(c, k, false)
		if err != nil {
			return 0, nil, err
		}
		items, total, err := h.st.ListCheckIncidents(c, orgID(c), id, r.From, r.To, p.PerPage, p.Offset())
		if err != nil {
			return 0, nil, err
		}
		out := make([]checkIncidentJSON, len(items))
		for i, in := range items {
			out[i] = checkIncidentJSON{ID: in.ID.String(), CheckID: in.CheckID.String(),
				StartedAt: formatTime(in.StartedAt), EndedAt: formatTimePtr(in.EndedAt), CausedBy: uuidString(in.CausedBy)}
		}
		return listed(out, p, total, nil)
	}
}

// results is GET /v1/checks/<kind>/{check_id}/results: the results of [from, to) (both
// required, at most seven days), oldest first, as a result page.
func (h *checksHandler) results(k check.Kind) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, p, r, err := h.history(c, k, true)
		if err != nil {
			return 0, nil, err
		}
		items, total, err := h.st.ListCheckResults(c, orgID(c), id, *r.From, *r.To, p.PerPage, p.Offset())
		if err != nil {
			return 0, nil, err
		}
		out := resultPageJSON{CheckID: id.String(), CheckType: string(k),
			Window:     windowJSON{From: formatTime(*r.From), To: formatTime(*r.To)},
			Results:    make([]any, len(items)),
			ResultInfo: resultInfo{Page: p.Page, PerPage: p.PerPage, Count: len(items), TotalCount: total}}
		for i, res := range items {
			out.Results[i] = renderResult(k, res)
		}
		return http.StatusOK, out, nil
	}
}
