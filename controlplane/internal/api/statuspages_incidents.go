package api

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// incidentTitle records a broken title rule (1..256 characters).
func incidentTitle(o *object, v string) {
	if n := utf8.RuneCountInString(v); n < 1 || n > 256 {
		o.Fail("title", "must be 1 to 256 characters")
	}
}

// oneOf records a broken enum rule.
func oneOf(o *object, name, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		o.Fail(name, "must be one of %s", strings.Join(allowed, ", "))
	}
}

// componentChanges decodes [{id, status}] (both required per item).
func componentChanges(o *object, name string) []store.ComponentChange {
	items, set, null := objects(o, name)
	if !set || null {
		return nil
	}
	out := make([]store.ComponentChange, 0, len(items))
	seen := map[uuid.UUID]bool{}
	for _, it := range items {
		var ch store.ComponentChange
		if it.Require("id") {
			if v, ok := field[string](it, "id").Value(); ok {
				id, err := uuid.Parse(v)
				switch {
				case err != nil || len(v) != 36:
					it.Fail("id", "%q is not a component id", v)
				case seen[id]:
					it.Fail("id", "the component is listed twice")
				}
				seen[id], ch.ID = true, id
			}
		}
		if it.Require("status") {
			if v, ok := field[string](it, "status").Value(); ok {
				componentStatus(it, "status", v)
				ch.Status = v
			}
		}
		it.Strict()
		out = append(out, ch)
	}
	return out
}

// timestampField decodes an optional ISO 8601 date-time field.
func timestampField(o *object, name string) *time.Time {
	v := nonNull[string](o, name)
	if !v.Set {
		return nil
	}
	t, err := parseTimestamp(o.name(name), v.V)
	if err != nil {
		o.Fail(name, "must be an ISO 8601 date-time with a time zone and at most 3 fractional digits, e.g. 2026-01-02T15:04:05.000Z")
		return nil
	}
	return &t
}

// Path ids of an incident, of one of its updates and of a scheduled maintenance, in route order.
var (
	incidentPath    = []string{"status_page_id", "status_page_incident_id"}
	updatePath      = []string{"status_page_id", "status_page_incident_id", "incident_update_id"}
	maintenancePath = []string{"status_page_id", "scheduled_maintenance_id"}
)

func (h *statusPagesHandler) listIncidents(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListIncidents(c, orgID(c), pageID, search, p.PerPage, p.Offset())
	return listed(items, p, total, err)
}

func (h *statusPagesHandler) createIncident(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	in, err := decodeBody(c, decodeNewIncident)
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateIncident(c, actor(c), orgID(c), pageID, in))
}

func decodeNewIncident(o *object) statuspage.NewIncident {
	in := statuspage.NewIncident{NotifySubscribers: true}
	if o.Require("title") {
		if v, ok := field[string](o, "title").Value(); ok {
			incidentTitle(o, v)
			in.Title = v
		}
	}
	if o.Require("description") {
		in.Description, _ = field[string](o, "description").Value()
	}
	if o.Require("status") {
		if v, ok := field[string](o, "status").Value(); ok {
			oneOf(o, "status", v, statuspage.IncidentCreateStatuses)
			in.Status = v
		}
	}
	in.Components = componentChanges(o, "components")
	if v := nonNull[bool](o, "notify_subscribers"); v.Set {
		in.NotifySubscribers = v.V
	}
	return in
}

func (h *statusPagesHandler) getIncident(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return done(h.pages.GetIncident(c, orgID(c), p[0], p[1]))
}

// patchIncident takes title and impact, both required (api/openapi/status-page-incidents.yaml).
func (h *statusPagesHandler) patchIncident(c *gin.Context, p []uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	var title, impact string
	if o.Require("title") {
		if v, ok := field[string](o, "title").Value(); ok {
			incidentTitle(o, v)
			title = v
		}
	}
	if o.Require("impact") {
		if v, ok := field[string](o, "impact").Value(); ok {
			oneOf(o, "impact", v, statuspage.Impacts)
			impact = v
		}
	}
	o.Strict()
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	return done(h.pages.UpdateIncident(c, actor(c), orgID(c), p[0], p[1], title, impact))
}

func (h *statusPagesHandler) removeIncident(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return removed(p[1].String(), h.pages.DeleteIncident(c, actor(c), orgID(c), p[0], p[1], false))
}

func (h *statusPagesHandler) listUpdates(c *gin.Context, p []uuid.UUID) (int, any, error) {
	pg, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListIncidentUpdates(c, orgID(c), p[0], p[1], search, pg.PerPage, pg.Offset())
	return listed(items, pg, total, err)
}

// minOne records a broken "min 1" rule of a string field.
func minOne(o *object, name, v string) {
	if v == "" {
		o.Fail(name, "must not be empty")
	}
}

func (h *statusPagesHandler) createUpdate(c *gin.Context, p []uuid.UUID) (int, any, error) {
	in, err := decodeBody(c, decodeNewUpdate)
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateIncidentUpdate(c, actor(c), orgID(c), p[0], p[1], in))
}

func decodeNewUpdate(o *object) statuspage.NewIncidentUpdate {
	in := statuspage.NewIncidentUpdate{NotifySubscribers: true}
	if o.Require("status") {
		if v, ok := field[string](o, "status").Value(); ok {
			oneOf(o, "status", v, statuspage.UpdateStatuses)
			in.Status = v
		}
	}
	if o.Require("description") {
		if v, ok := field[string](o, "description").Value(); ok {
			minOne(o, "description", v)
			in.Description = v
		}
	}
	if v := nonNull[bool](o, "notify_subscribers"); v.Set {
		in.NotifySubscribers = v.V
	}
	in.Components = componentChanges(o, "components_affected")
	in.DateHappened = timestampField(o, "date_happened")
	return in
}

func (h *statusPagesHandler) getUpdate(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return done(h.pages.GetIncidentUpdate(c, orgID(c), p[0], p[1], p[2]))
}

func (h *statusPagesHandler) patchUpdate(c *gin.Context, p []uuid.UUID) (int, any, error) {
	patch, err := decodeBody(c, decodeUpdatePatch)
	if err != nil {
		return 0, nil, err
	}
	return done(h.pages.UpdateIncidentUpdate(c, actor(c), orgID(c), p[0], p[1], p[2], patch))
}

func decodeUpdatePatch(o *object) store.IncidentUpdatePatch {
	var patch store.IncidentUpdatePatch
	if v := nonNull[string](o, "status"); v.Set {
		oneOf(o, "status", v.V, statuspage.UpdateStatuses)
		patch.Status = &v.V
	}
	if v := nonNull[string](o, "description"); v.Set {
		minOne(o, "description", v.V)
		patch.Description = &v.V
	}
	patch.DateHappened = timestampField(o, "date_happened")
	return patch
}

func (h *statusPagesHandler) removeUpdate(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return removed(p[2].String(), h.pages.DeleteIncidentUpdate(c, actor(c), orgID(c), p[0], p[1], p[2]))
}

// durationField decodes an integer ≥ 1.
func durationField(o *object, name string) *int {
	v := nonNull[int](o, name)
	if !v.Set {
		return nil
	}
	if v.V < 1 || v.V > 525_600 {
		o.Fail(name, "must be an integer from 1 to 525600 (one year)")
	}
	return &v.V
}

func (h *statusPagesHandler) createMaintenance(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	in, err := decodeBody(c, decodeNewMaintenance)
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateMaintenance(c, actor(c), orgID(c), pageID, in))
}

func decodeNewMaintenance(o *object) statuspage.NewMaintenance {
	in := statuspage.NewMaintenance{Notifications: statuspage.Notifications{AtStart: true, AtEnd: true}, ComponentIDs: []uuid.UUID{}}
	if o.Require("title") {
		if v, ok := field[string](o, "title").Value(); ok {
			incidentTitle(o, v)
			in.Title = v
		}
	}
	if o.Require("description") {
		if v, ok := field[string](o, "description").Value(); ok {
			minOne(o, "description", v)
			in.Description = v
		}
	}
	if o.Require("start_date") {
		if t := timestampField(o, "start_date"); t != nil {
			in.StartDate = *t
		}
	}
	if o.Require("duration_minutes") {
		if d := durationField(o, "duration_minutes"); d != nil {
			in.DurationMinutes = *d
		}
	}
	if list, ok := spIDList(o, "components_affected"); ok {
		in.ComponentIDs = list
	}
	n := decodeNotifications(o)
	setIf(&in.Notifications.AnHourBefore, n.AnHourBefore)
	setIf(&in.Notifications.AtStart, n.AtStart)
	setIf(&in.Notifications.AtEnd, n.AtEnd)
	return in
}

// notificationFlags is the notifications object of maintenance bodies; nil flags are not given.
type notificationFlags struct{ AnHourBefore, AtStart, AtEnd *bool }

// decodeNotifications reads the notifications object (null or absent: nothing given).
func decodeNotifications(o *object) notificationFlags {
	var n notificationFlags
	if items, set, null := objectField(o, "notifications"); set && !null {
		n.AnHourBefore = nonNull[bool](items, "an_hour_before").Ptr()
		n.AtStart = nonNull[bool](items, "at_start").Ptr()
		n.AtEnd = nonNull[bool](items, "at_end").Ptr()
		items.Strict()
	}
	return n
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// objectField decodes a nested object field, with its own prefix for messages.
func objectField(o *object, name string) (nested *object, set, null bool) {
	o.read[name] = true
	raw, ok := o.raw[name]
	if !ok {
		return nil, false, false
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, true, true
	}
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &m) != nil {
		o.Fail(name, "must be an object")
		return nil, false, false
	}
	return &object{prefix: o.prefix + name + ".", raw: m, read: map[string]bool{}, errs: o.errs}, true, false
}

func (h *statusPagesHandler) getMaintenance(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return done(h.pages.GetMaintenance(c, orgID(c), p[0], p[1]))
}

// patchMaintenance changes title, start_date or duration_minutes of a maintenance that has
// not started (400 once it has), and, as an extension, its description, components_affected
// and notifications.
func (h *statusPagesHandler) patchMaintenance(c *gin.Context, p []uuid.UUID) (int, any, error) {
	patch, err := decodeBody(c, decodeMaintenancePatch)
	if err != nil {
		return 0, nil, err
	}
	return done(h.pages.UpdateMaintenance(c, actor(c), orgID(c), p[0], p[1], patch))
}

func decodeMaintenancePatch(o *object) store.MaintenancePatch {
	var patch store.MaintenancePatch
	if v := nonNull[string](o, "title"); v.Set {
		incidentTitle(o, v.V)
		patch.Title = &v.V
	}
	patch.StartDate = timestampField(o, "start_date")
	patch.DurationMinutes = durationField(o, "duration_minutes")
	// Extension (real clients send the create body's other fields on PATCH too): description,
	// components_affected and notifications are applied as the change they describe.
	if v := nonNull[string](o, "description"); v.Set {
		minOne(o, "description", v.V)
		patch.Description = &v.V
	}
	if list, ok := spIDList(o, "components_affected"); ok {
		patch.ComponentIDs = list
	}
	n := decodeNotifications(o)
	patch.AnHourBefore, patch.AtStart, patch.AtEnd = n.AnHourBefore, n.AtStart, n.AtEnd
	return patch
}

func (h *statusPagesHandler) removeMaintenance(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return removed(p[1].String(), h.pages.DeleteIncident(c, actor(c), orgID(c), p[0], p[1], true))
}
