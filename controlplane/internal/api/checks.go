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
func (h *checksHandler) list(c *gin.Context) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		fail(c, err)
		return
	}
	f := store.CheckFilter{Search: c.Query("search"), Status: checkListStatus(c.Query("filter"))}
	if v, given := c.GetQuery("project_id"); given {
		if v == "unassigned" {
			f.Unassigned = true
		} else {
			id, err := parseProjectID("project_id", v)
			if err != nil {
				fail(c, err)
				return
			}
			f.ProjectID = &id
		}
	}
	items, total, err := h.st.ListChecks(c, orgID(c), f, p.PerPage, p.Offset())
	if err != nil {
		fail(c, projectNotFound(err))
		return
	}
	out := make([]checkListItemJSON, len(items))
	for i, it := range items {
		out[i] = renderCheckListItem(it)
	}
	okList(c, out, p, total)
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
func (h *checksHandler) createGeneric(c *gin.Context) {
	h.createCheck(c, checkBody{create: true, generic: true})
}

// create is POST /v1/checks/<kind>.
func (h *checksHandler) create(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) { h.createCheck(c, checkBody{create: true, kind: k}) }
}

func (h *checksHandler) createCheck(c *gin.Context, b checkBody) {
	o, err := readObject(c)
	if err != nil {
		fail(c, err)
		return
	}
	var in store.Check
	if err := decodeCheck(o, b, &in); err != nil {
		fail(c, err)
		return
	}
	chk, err := h.st.CreateCheck(c, actor(c), orgID(c), in.ProjectID, in.Spec)
	if err != nil {
		fail(c, projectNotFound(err))
		return
	}
	h.changed(chk.ID)
	ok(c, http.StatusCreated, renderCheck(chk, false))
}

// getAny is GET /v1/checks/{check_id}: a check of any kind, with its script.
func (h *checksHandler) getAny(c *gin.Context) { h.getCheck(c, "") }

// get is GET /v1/checks/<kind>/{check_id}; a check of another kind is not found.
func (h *checksHandler) get(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) { h.getCheck(c, k) }
}

func (h *checksHandler) getCheck(c *gin.Context, k check.Kind) {
	id, err := pathID(c, "check_id", minPathIDLen)
	if err != nil {
		fail(c, err)
		return
	}
	chk, err := h.st.GetCheck(c, orgID(c), id, true)
	if err == nil && k != "" && chk.Spec.Kind != k {
		err = store.ErrNotFound
	}
	if err != nil {
		fail(c, err)
		return
	}
	ok(c, http.StatusOK, renderCheck(chk, true))
}

// patchGeneric is PATCH /v1/checks/{check_id}: the body of the stored check's kind, plus
// project_id (a string moves the check, null makes it Unassigned) and, for uptime and browser
// checks, `type` to switch between the two.
func (h *checksHandler) patchGeneric(c *gin.Context) { h.patchCheck(c, "") }

// patch is PATCH /v1/checks/<kind>/{check_id}.
func (h *checksHandler) patch(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) { h.patchCheck(c, k) }
}

func (h *checksHandler) patchCheck(c *gin.Context, k check.Kind) {
	id, err := pathID(c, "check_id", minPathIDLen)
	if err != nil {
		fail(c, err)
		return
	}
	o, err := readObject(c)
	if err != nil {
		fail(c, err)
		return
	}
	chk, err := h.st.UpdateCheck(c, actor(c), orgID(c), id, k, func(cur *store.Check) error {
		b := checkBody{kind: k}
		if k == "" {
			b = checkBody{generic: true, kind: cur.Spec.Kind}
		}
		return decodeCheck(o, b, cur)
	})
	if err != nil {
		fail(c, projectNotFound(err))
		return
	}
	h.changed(chk.ID)
	ok(c, http.StatusOK, renderCheck(chk, false))
}

// removeAny is DELETE /v1/checks/{check_id}.
func (h *checksHandler) removeAny(c *gin.Context) { h.removeCheck(c, "") }

// remove is DELETE /v1/checks/<kind>/{check_id}.
func (h *checksHandler) remove(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) { h.removeCheck(c, k) }
}

func (h *checksHandler) removeCheck(c *gin.Context, k check.Kind) {
	id, err := pathID(c, "check_id", minPathIDLen)
	if err != nil {
		fail(c, err)
		return
	}
	if err := h.st.DeleteCheck(c, actor(c), orgID(c), id, k); err != nil {
		fail(c, err)
		return
	}
	h.changed(id)
	deleted(c, id.String())
}

// historyCheck reads the path id of an incident or result list and makes sure the check is
// one of this organization's checks of kind k.
func (h *checksHandler) historyCheck(c *gin.Context, k check.Kind) (uuid.UUID, error) {
	// Incident and result lists take check ids of one character or more (api/openapi/openapi.yaml);
	// every other route takes minPathIDLen.
	id, err := pathID(c, "check_id", 1)
	if err != nil {
		return id, err
	}
	kind, err := h.st.CheckKind(c, orgID(c), id)
	if err == nil && kind != k {
		err = store.ErrNotFound
	}
	return id, err
}

// incidents is GET /v1/checks/<kind>/{check_id}/incidents: incidents overlapping [from, to),
// newest first.
func (h *checksHandler) incidents(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := parsePage(c, historyPages)
		if err != nil {
			fail(c, err)
			return
		}
		r, err := parseRange(c, false)
		if err != nil {
			fail(c, err)
			return
		}
		id, err := h.historyCheck(c, k)
		if err != nil {
			fail(c, err)
			return
		}
		items, total, err := h.st.ListCheckIncidents(c, orgID(c), id, r.From, r.To, p.PerPage, p.Offset())
		if err != nil {
			fail(c, err)
			return
		}
		out := make([]checkIncidentJSON, len(items))
		for i, in := range items {
			out[i] = checkIncidentJSON{ID: in.ID.String(), CheckID: in.CheckID.String(),
				StartedAt: formatTime(in.StartedAt), EndedAt: formatTimePtr(in.EndedAt), CausedBy: uuidString(in.CausedBy)}
		}
		okList(c, out, p, total)
	}
}

// results is GET /v1/checks/<kind>/{check_id}/results: the results of [from, to) (both
// required, at most seven days), oldest first, as a result page.
func (h *checksHandler) results(k check.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := parsePage(c, historyPages)
		if err != nil {
			fail(c, err)
			return
		}
		r, err := parseRange(c, true)
		if err != nil {
			fail(c, err)
			return
		}
		id, err := h.historyCheck(c, k)
		if err != nil {
			fail(c, err)
			return
		}
		items, total, err := h.st.ListCheckResults(c, orgID(c), id, *r.From, *r.To, p.PerPage, p.Offset())
		if err != nil {
			fail(c, err)
			return
		}
		out := resultPageJSON{CheckID: id.String(), CheckType: string(k),
			Window:     windowJSON{From: formatTime(*r.From), To: formatTime(*r.To)},
			Results:    make([]any, len(items)),
			ResultInfo: resultInfo{Page: p.Page, PerPage: p.PerPage, Count: len(items), TotalCount: total}}
		for i, res := range items {
			out.Results[i] = renderResult(k, res)
		}
		ok(c, http.StatusOK, out)
	}
}
