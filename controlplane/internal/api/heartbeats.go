package api

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/heartbeat"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// heartbeatStore is what the heartbeats handler needs from the store.
type heartbeatStore interface {
	ListHeartbeats(ctx context.Context, orgID uuid.UUID, f store.HeartbeatFilter, limit, offset int64, now time.Time) ([]store.Heartbeat, int64, error)
	GetHeartbeat(ctx context.Context, orgID, id uuid.UUID, now time.Time) (store.Heartbeat, error)
	CreateHeartbeat(ctx context.Context, actor store.Actor, orgID uuid.UUID, h store.Heartbeat) (store.Heartbeat, error)
	UpdateHeartbeat(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, change func(*store.Heartbeat) error) (store.Heartbeat, error)
	DeleteHeartbeat(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	MoveHeartbeat(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, dest *uuid.UUID) (store.MoveResult, error)
	HeartbeatsInMaintenance(ctx context.Context, ids []uuid.UUID, now time.Time) (map[uuid.UUID]bool, error)
}

var _ heartbeatStore = (*store.Store)(nil)

// heartbeatsHandler serves /v1/heartbeats (api/openapi/heartbeats.yaml) and the heartbeat move (api/openapi/projects.yaml).
// The public ping endpoint is heartbeat.PingHandler, on its own listener.
type heartbeatsHandler struct {
	st  heartbeatStore
	now func() time.Time
}

func newHeartbeatsHandler(d Deps) *heartbeatsHandler {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &heartbeatsHandler{st: d.Store, now: now}
}

// Bounds of heartbeat fields (our choices; the contract states only the minimums).
const (
	maxHeartbeatSeconds      = 366 * 24 * 3600 // report_period and grace_period: at most a year
	maxHeartbeatSearch       = 255
	defaultHeartbeatReminder = 1440
)

func (h *heartbeatsHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	var f store.HeartbeatFilter
	if f.Search, err = searchQuery(c, maxHeartbeatSearch); err != nil {
		return 0, nil, err
	}
	if f.ProjectID, f.Unassigned, err = projectQuery(c); err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListHeartbeats(c, orgID(c), f, p.PerPage, p.Offset(), h.now())
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	out := make([]heartbeat.Summary, len(items))
	for i, it := range items {
		out[i] = heartbeat.Summarize(it)
	}
	return listed(out, p, total, nil)
}

// decodeHeartbeat applies a create (create true: defaults already in hb) or PATCH body to hb.
//
// Scheduling: exactly one of report_period and report_period_cron must be set afterwards.
// Setting one to a value while the body does not mention the other switches the mode (the other
// is cleared); both non-null in one body is a 400, and so is a result with neither.
func decodeHeartbeat(o *object, hb *store.Heartbeat, create bool) {
	if create && !o.Require("name") {
		o.Ignore("name")
	} else if v, ok := nonNull[string](o, "name").Value(); ok {
		name := strings.TrimSpace(v)
		if n := utf8.RuneCountInString(name); n < 1 || n > check.MaxNameLength {
			o.Fail("name", "must be 1 to %d characters long", check.MaxNameLength)
		}
		hb.Name = name
	}
	if create && !o.Require("grace_period") {
		o.Ignore("grace_period")
	} else if v, ok := nonNull[int](o, "grace_period").Value(); ok {
		if v < 1 || v > maxHeartbeatSeconds {
			o.Fail("grace_period", "must be an integer from 1 to %d (seconds)", maxHeartbeatSeconds)
		}
		hb.GracePeriod = v
	}
	period := field[int](o, "report_period")
	cron := field[string](o, "report_period_cron")
	tz := field[string](o, "timezone")
	if v, ok := period.Value(); ok && (v < 1 || v > maxHeartbeatSeconds) {
		o.Fail("report_period", "must be an integer from 1 to %d (seconds)", maxHeartbeatSeconds)
	}
	if _, ok := period.Value(); ok {
		if _, both := cron.Value(); both {
			o.Fail("report_period_cron", "cannot be set together with report_period: a heartbeat has one schedule")
		}
	}
	if period.Set {
		hb.ReportPeriod = period.Ptr()
		if !cron.Set && hb.ReportPeriod != nil {
			hb.ReportPeriodCron = nil
		}
	}
	if cron.Set {
		hb.ReportPeriodCron = cron.Ptr()
		if !period.Set && hb.ReportPeriodCron != nil {
			hb.ReportPeriod = nil
		}
	}
	if tz.Set {
		hb.Timezone = tz.Ptr()
		if hb.Timezone != nil {
			if _, err := heartbeat.LoadTimezone(*hb.Timezone); err != nil || *hb.Timezone == "" {
				o.Fail("timezone", "must be an IANA time zone name, e.g. America/New_York")
			}
		}
	}
	if v, ok := nonNull[int](o, "reminder_alert_interval_minutes").Value(); ok {
		if v < -1 {
			o.Fail("reminder_alert_interval_minutes", "must be -1 (never) or a number of minutes ≥ 0")
		}
		hb.ReminderAlertIntervalMinutes = &v
	}
	if v, ok := nonNull[string](o, "alert_priority").Value(); ok {
		if v != "LOW" && v != "HIGH" {
			o.Fail("alert_priority", "must be one of LOW, HIGH")
		}
		hb.AlertPriority = v
	}
	for _, l := range hb.Alerts.Lists() {
		if v, ok := nonNull[[]string](o, l.Field).Value(); ok {
			*l.IDs = v
		}
	}
	if v, ok := nonNull[bool](o, "paused").Value(); ok {
		hb.Paused = v
	}
	if v, ok := nonNull[bool](o, "muted").Value(); ok {
		hb.Muted = v
	}
	if len(*o.errs) > 0 {
		return
	}
	switch {
	case hb.ReportPeriod == nil && hb.ReportPeriodCron == nil:
		o.Fail("report_period", "one of report_period or report_period_cron is required")
	case hb.ReportPeriodCron != nil:
		zone := ""
		if hb.Timezone != nil {
			zone = *hb.Timezone
		}
		if _, err := heartbeat.ParseCron(*hb.ReportPeriodCron, zone); err != nil {
			o.Fail("report_period_cron", "%s", err.Error())
		}
	}
}

// create is POST /v1/heartbeats.
func (h *heartbeatsHandler) create(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	reminder := defaultHeartbeatReminder
	hb := store.Heartbeat{AlertPriority: "LOW", ReminderAlertIntervalMinutes: &reminder}
	decodeHeartbeat(o, &hb, true)
	hb.ProjectID = projectIDField(o, "project_id")
	o.Strict()
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	out, err := h.st.CreateHeartbeat(c, actor(c), orgID(c), hb)
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	return http.StatusCreated, heartbeat.Render(out), nil
}

func (h *heartbeatsHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	hb, err := h.st.GetHeartbeat(c, orgID(c), id, h.now())
	return rendered(http.StatusOK, heartbeat.Render, hb, err)
}

// patch is PATCH /v1/heartbeats/{id}: every field optional, no defaults; null clears
// report_period, report_period_cron and timezone; project_id is refused (use move).
func (h *heartbeatsHandler) patch(c *gin.Context, id uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	if o.Empty() {
		return 0, nil, badRequest("request body must change at least one field")
	}
	out, err := h.st.UpdateHeartbeat(c, actor(c), orgID(c), id, func(hb *store.Heartbeat) error {
		paused := hb.Paused
		decodeHeartbeat(o, hb, false)
		o.Forbid("project_id", "cannot be changed here; use POST /v1/heartbeats/{heartbeat_id}/move")
		o.Strict()
		if paused && !hb.Paused {
			heartbeat.Resume(hb, h.now())
		}
		return o.Err()
	})
	if err != nil {
		return 0, nil, err
	}
	m, err := h.st.HeartbeatsInMaintenance(c, []uuid.UUID{id}, h.now())
	if err != nil {
		return 0, nil, err
	}
	out.InMaintenance = m[id]
	return http.StatusOK, heartbeat.Render(out), nil
}

func (h *heartbeatsHandler) remove(c *gin.Context, id uuid.UUID) (int, any, error) {
	return removed(id.String(), h.st.DeleteHeartbeat(c, actor(c), orgID(c), id))
}

// move is POST /v1/heartbeats/{heartbeat_id}/move: strict {project_id}, a project id or null
// (Unassigned), required. The ping URL stays the same; there is no variable conflict.
func (h *heartbeatsHandler) move(c *gin.Context, id uuid.UUID) (int, any, error) {
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
	res, err := h.st.MoveHeartbeat(c, actor(c), orgID(c), id, dest)
	if err != nil {
		return 0, nil, projectNotFound(err)
	}
	return http.StatusOK, moveJSON{ID: res.ID.String(), ProjectID: uuidString(res.ProjectID)}, nil
}
