package api

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// windowStore is what the maintenance windows handler needs from the store.
type windowStore interface {
	ListMaintenanceWindows(ctx context.Context, orgID uuid.UUID, f store.WindowFilter, limit, offset int64) ([]store.MaintenanceWindow, int64, error)
	GetMaintenanceWindow(ctx context.Context, orgID, id uuid.UUID) (store.MaintenanceWindow, error)
	CreateMaintenanceWindow(ctx context.Context, actor store.Actor, orgID uuid.UUID, w store.MaintenanceWindow) (store.MaintenanceWindow, error)
	UpdateMaintenanceWindow(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, p store.WindowPatch) (store.MaintenanceWindow, error)
	DeleteMaintenanceWindow(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
}

var _ windowStore = (*store.Store)(nil)

// windowsHandler serves /v1/maintenance-windows (api/openapi/maintenance-windows.yaml).
type windowsHandler struct {
	st  windowStore
	now func() time.Time
}

func newWindowsHandler(d Deps) *windowsHandler {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &windowsHandler{st: d.Store, now: now}
}

// mwJSON is a window as lists show it; mwFullJSON adds the member ids.
type mwJSON struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	StartDate       string   `json:"start_date"`
	DurationMinutes int      `json:"duration_minutes"`
	Timezone        string   `json:"timezone"`
	DaysOfWeek      []string `json:"days_of_week"`
	Status          string   `json:"status"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

type mwFullJSON struct {
	mwJSON
	Checks     []string `json:"checks"`
	Heartbeats []string `json:"heartbeats"`
}

func toMWJSON(w store.MaintenanceWindow) mwJSON {
	days := make([]string, len(w.DaysOfWeek))
	for i, d := range w.DaysOfWeek {
		days[i] = recurrence.WeekdayName(d)
	}
	return mwJSON{ID: w.ID.String(), Name: w.Name, StartDate: formatTime(w.StartDate), DurationMinutes: w.DurationMinutes,
		Timezone: w.Timezone, DaysOfWeek: days, Status: w.Status, CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt)}
}

func toMWFullJSON(w store.MaintenanceWindow) mwFullJSON {
	return mwFullJSON{mwJSON: toMWJSON(w), Checks: windowUUIDStrings(w.Checks), Heartbeats: windowUUIDStrings(w.Heartbeats)}
}

func windowUUIDStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func (h *windowsHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	var f store.WindowFilter
	if f.Search, err = searchQuery(c, check.MaxNameLength); err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListMaintenanceWindows(c, orgID(c), f, p.PerPage, p.Offset())
	return listed(mapped(items, toMWJSON), p, total, err)
}

// timeOfDay matches a start_date given as HH:MM (24-hour).
var timeOfDay = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// parseTimeOfDay reads HH:MM as minutes after midnight.
func parseTimeOfDay(s string) (int, bool) {
	m := timeOfDay.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return h*60 + mi, true
}

// nextTimeOfDay is the next occurrence (after now) of minutes after midnight, in loc. On a day
// when that local time does not exist (a DST gap), time.Date moves it forward as the clock does.
func nextTimeOfDay(now time.Time, minutes int, loc *time.Location) time.Time {
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), minutes/60, minutes%60, 0, 0, loc)
	if !t.After(now) {
		t = time.Date(local.Year(), local.Month(), local.Day()+1, minutes/60, minutes%60, 0, 0, loc)
	}
	return t
}

// windowLocalTimestamp is a start_date without a zone, read in the window's time zone.
const windowLocalTimestamp = "2006-01-02T15:04:05"

// decodeWindow reads a create or PATCH body into p; cur is the stored window (nil on create),
// needed to read a zoneless start_date in the window's (possibly unchanged) time zone.
// now is the clock, for a start_date given as a time of day (HH:MM).
func decodeWindow(o *object, cur *store.MaintenanceWindow, create bool, now time.Time) store.WindowPatch {
	var p store.WindowPatch
	if create {
		for _, f := range []string{"name", "start_date", "duration_minutes", "timezone", "days_of_week"} {
			o.Require(f)
		}
	}
	if v, ok := nonNull[string](o, "name").Value(); ok {
		name := strings.TrimSpace(v)
		if n := utf8.RuneCountInString(name); n < 1 || n > check.MaxNameLength {
			o.Fail("name", "must be 1 to %d characters long", check.MaxNameLength)
		}
		p.Name = &name
	}
	loc := time.UTC
	if cur != nil {
		if l, err := time.LoadLocation(cur.Timezone); err == nil {
			loc = l
		}
	}
	if v, ok := nonNull[string](o, "timezone").Value(); ok {
		l, err := time.LoadLocation(v)
		if err != nil || v == "" || v == "Local" {
			o.Fail("timezone", "must be an IANA time zone name, e.g. Europe/Berlin")
		} else {
			loc = l
		}
		p.Timezone = &v
	}
	if v, ok := nonNull[string](o, "start_date").Value(); ok {
		t, err := parseTimestamp("start_date", v)
		if tod, ok := parseTimeOfDay(v); ok {
			// Extension: the older form of this API gave the daily start as HH:MM.
			t, err = nextTimeOfDay(now, tod, loc), nil
		}
		if err != nil {
			// A date-time without a zone is read in the window's time zone.
			lt, lerr := time.ParseInLocation(windowLocalTimestamp, strings.TrimSuffix(v, ".000"), loc)
			if lerr != nil {
				o.Fail("start_date", "must be an ISO 8601 date-time, e.g. 2026-01-05T09:00:00.000Z; its time of day in timezone is the daily start")
			}
			t = lt
		}
		p.StartDate = &t
	}
	if v, ok := nonNull[int](o, "duration_minutes").Value(); ok {
		if v < 1 || v > recurrence.MaxDurationMinutes {
			o.Fail("duration_minutes", "must be an integer from 1 to %d", recurrence.MaxDurationMinutes)
		}
		p.DurationMinutes = &v
	}
	if v, ok := nonNull[[]string](o, "days_of_week").Value(); ok {
		if len(v) == 0 {
			o.Fail("days_of_week", "must name at least one day")
		}
		p.DaysOfWeek = []time.Weekday{}
		for _, s := range v {
			d, err := recurrence.ParseWeekday(s)
			if err != nil {
				o.Fail("days_of_week", "%q %s", s, err.Error())
				continue
			}
			p.DaysOfWeek = append(p.DaysOfWeek, d)
		}
	}
	if v, ok := nonNull[string](o, "status").Value(); ok {
		if v != store.WindowEnabled && v != store.WindowDisabled {
			o.Fail("status", "must be one of ENABLED, DISABLED")
		}
		p.Status = &v
	}
	p.Checks = windowMemberIDs(o, "checks")
	p.Heartbeats = windowMemberIDs(o, "heartbeats")
	o.Strict()
	return p
}

// windowMemberIDs reads an array of resource ids; an id that is not one of ours cannot exist and is
// reported like an unknown one.
func windowMemberIDs(o *object, name string) *[]uuid.UUID {
	v, ok := nonNull[[]string](o, name).Value()
	if !ok {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(v))
	var bad []string
	for _, s := range v {
		id, err := uuid.Parse(s)
		if err != nil || len(s) != 36 {
			bad = append(bad, s)
			continue
		}
		ids = append(ids, id)
	}
	if len(bad) > 0 {
		o.Fail(name, "unknown ids: %s", strings.Join(bad, ", "))
	}
	return &ids
}

func (h *windowsHandler) create(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	p := decodeWindow(o, nil, true, h.now())
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	w := store.MaintenanceWindow{Name: *p.Name, StartDate: *p.StartDate, DurationMinutes: *p.DurationMinutes,
		Timezone: *p.Timezone, DaysOfWeek: p.DaysOfWeek, Status: store.WindowEnabled}
	if p.Status != nil {
		w.Status = *p.Status
	}
	if p.Checks != nil {
		w.Checks = *p.Checks
	}
	if p.Heartbeats != nil {
		w.Heartbeats = *p.Heartbeats
	}
	out, err := h.st.CreateMaintenanceWindow(c, actor(c), orgID(c), w)
	return rendered(http.StatusCreated, toMWFullJSON, out, err)
}

func (h *windowsHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	w, err := h.st.GetMaintenanceWindow(c, orgID(c), id)
	return rendered(http.StatusOK, toMWFullJSON, w, err)
}

// update is PATCH: every field optional; checks and heartbeats replace the associations; an
// empty body is a 400.
func (h *windowsHandler) update(c *gin.Context, id uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	if o.Empty() {
		return 0, nil, badRequest("no fields to update: the request body must change at least one field")
	}
	cur, err := h.st.GetMaintenanceWindow(c, orgID(c), id)
	if err != nil {
		return 0, nil, err
	}
	p := decodeWindow(o, &cur, false, h.now())
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	out, err := h.st.UpdateMaintenanceWindow(c, actor(c), orgID(c), id, p)
	return rendered(http.StatusOK, toMWFullJSON, out, err)
}

func (h *windowsHandler) remove(c *gin.Context, id uuid.UUID) (int, any, error) {
	return removed(id.String(), h.st.DeleteMaintenanceWindow(c, actor(c), orgID(c), id))
}
