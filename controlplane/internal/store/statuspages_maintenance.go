package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Scheduled maintenance: incidents with a schedule, moved through SCHEDULED → IN_PROGRESS →
// COMPLETED by package statuspage.

// NewMaintenance is a scheduled maintenance to store.
type NewMaintenance struct {
	Title              string
	StartDate          time.Time
	DurationMinutes    int
	ComponentIDs       []uuid.UUID // components of the page (a ValidationError otherwise)
	NotifyAnHourBefore bool
	NotifyAtStart      bool
	NotifyAtEnd        bool
}

// CreateMaintenance stores a SCHEDULED maintenance (impact MAINTENANCE) affecting components of
// the page.
func (t *StatusPageTx) CreateMaintenance(ctx context.Context, orgID, pageID, id uuid.UUID, in NewMaintenance, now time.Time) error {
	n, err := t.q.CountPageComponents(ctx, dbsqlc.CountPageComponentsParams{OrgID: orgID, StatusPageID: pageID, Ids: in.ComponentIDs})
	if err != nil {
		return translate(err)
	}
	if int(n) != len(in.ComponentIDs) {
		return spValidation("components_affected", "every id must be a component of this status page")
	}
	if err := t.q.CreateMaintenance(ctx, dbsqlc.CreateMaintenanceParams{ID: id, OrgID: orgID, StatusPageID: pageID, Title: in.Title,
		Now: now, StartDate: in.StartDate, DurationMinutes: int32(in.DurationMinutes), NotifyAnHourBefore: in.NotifyAnHourBefore,
		NotifyAtStart: in.NotifyAtStart, NotifyAtEnd: in.NotifyAtEnd}); err != nil {
		return translate(err)
	}
	return translate(t.q.LinkIncidentComponents(ctx, dbsqlc.LinkIncidentComponentsParams{OrgID: orgID, IncidentID: id,
		ComponentIds: in.ComponentIDs}))
}

// MaintenancePatch changes a maintenance that has not started; nil fields stay.
type MaintenancePatch struct {
	Title           *string
	StartDate       *time.Time
	DurationMinutes *int
	Description     *string     // the announcement's text (its SCHEDULED update)
	ComponentIDs    []uuid.UUID // nil: unchanged; else the new affected components of the page
	AnHourBefore    *bool
	AtStart         *bool
	AtEnd           *bool
}

// EditMaintenance applies p. A new start date re-arms the notice an hour before it.
func (t *StatusPageTx) EditMaintenance(ctx context.Context, orgID, pageID, id uuid.UUID, p MaintenancePatch, now time.Time) error {
	var minutes *int32
	if p.DurationMinutes != nil {
		minutes = ptr(int32(*p.DurationMinutes))
	}
	if err := t.q.EditMaintenance(ctx, dbsqlc.EditMaintenanceParams{OrgID: orgID, ID: id, Title: p.Title,
		StartDate: p.StartDate, DurationMinutes: minutes, Now: now}); err != nil {
		return translate(err)
	}
	if p.AnHourBefore != nil || p.AtStart != nil || p.AtEnd != nil {
		if err := t.q.EditMaintenanceNotifications(ctx, dbsqlc.EditMaintenanceNotificationsParams{OrgID: orgID, ID: id,
			AnHourBefore: p.AnHourBefore, AtStart: p.AtStart, AtEnd: p.AtEnd, Now: now}); err != nil {
			return translate(err)
		}
	}
	if p.Description != nil {
		if err := t.q.EditMaintenanceAnnouncement(ctx, dbsqlc.EditMaintenanceAnnouncementParams{OrgID: orgID, IncidentID: id,
			Description: *p.Description, Now: now}); err != nil {
			return translate(err)
		}
	}
	if p.ComponentIDs == nil {
		return nil
	}
	n, err := t.q.CountPageComponents(ctx, dbsqlc.CountPageComponentsParams{OrgID: orgID, StatusPageID: pageID, Ids: p.ComponentIDs})
	if err != nil {
		return translate(err)
	}
	if int(n) != len(p.ComponentIDs) {
		return spValidation("components_affected", "every id must be a component of this status page")
	}
	if err := t.q.UnlinkIncidentComponents(ctx, dbsqlc.UnlinkIncidentComponentsParams{OrgID: orgID, IncidentID: id}); err != nil {
		return translate(err)
	}
	return translate(t.q.LinkIncidentComponents(ctx, dbsqlc.LinkIncidentComponentsParams{OrgID: orgID, IncidentID: id,
		ComponentIds: p.ComponentIDs}))
}

// IncidentKey names an incident across organizations.
type IncidentKey struct {
	OrgID, StatusPageID, ID uuid.UUID
}

// DueMaintenance returns, across organizations, up to 500 maintenance whose start
// (SCHEDULED) or end (IN_PROGRESS) is at or before now: the lifecycle's own scan.
func (r StatusPageReader) DueMaintenance(ctx context.Context, now time.Time) ([]IncidentKey, error) {
	rows, err := r.q.DueMaintenance(ctx, now)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]IncidentKey, len(rows))
	for i, row := range rows {
		out[i] = IncidentKey(row)
	}
	return out, nil
}

// DueReminders returns, across organizations, up to 500 scheduled maintenance that ask for the
// notice before their start, start after now and by horizon, and were not announced yet.
func (r StatusPageReader) DueReminders(ctx context.Context, now, horizon time.Time) ([]IncidentKey, error) {
	rows, err := r.q.DueReminders(ctx, dbsqlc.DueRemindersParams{Now: now, Horizon: horizon})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]IncidentKey, len(rows))
	for i, row := range rows {
		out[i] = IncidentKey(row)
	}
	return out, nil
}

// ClaimMaintenance locks a maintenance for a lifecycle step; ok is false when another
// transaction holds it (SKIP LOCKED) or it is gone.
func (t *StatusPageTx) ClaimMaintenance(ctx context.Context, orgID, id uuid.UUID) (m PageIncident, ok bool, err error) {
	rows, err := t.q.ClaimMaintenance(ctx, dbsqlc.ClaimMaintenanceParams{OrgID: orgID, ID: id})
	if err != nil || len(rows) == 0 {
		return PageIncident{}, false, translate(err)
	}
	return incidentOf(rows[0]), true, nil
}

// LatestDateHappened is the date of an incident's latest update; ok is false when it has none.
func (t *StatusPageTx) LatestDateHappened(ctx context.Context, orgID, incidentID uuid.UUID) (at time.Time, ok bool, err error) {
	rows, err := t.q.LatestDateHappened(ctx, dbsqlc.LatestDateHappenedParams{OrgID: orgID, IncidentID: incidentID})
	if err != nil || len(rows) == 0 {
		return time.Time{}, false, translate(err)
	}
	return rows[0], true, nil
}

// ComponentStatus is a component's id and status.
type ComponentStatus struct {
	ID     uuid.UUID
	Status string
}

// StartMaintenanceComponents remembers the status of each component of a starting maintenance
// (to restore at its end) and returns them, locked, in id order.
func (t *StatusPageTx) StartMaintenanceComponents(ctx context.Context, orgID, incidentID uuid.UUID) ([]ComponentStatus, error) {
	if err := t.q.KeepRestoreStatuses(ctx, dbsqlc.KeepRestoreStatusesParams{OrgID: orgID, IncidentID: incidentID}); err != nil {
		return nil, translate(err)
	}
	rows, err := t.q.LockMaintenanceComponents(ctx, dbsqlc.LockMaintenanceComponentsParams{OrgID: orgID, IncidentID: incidentID})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]ComponentStatus, len(rows))
	for i, row := range rows {
		out[i] = ComponentStatus(row)
	}
	return out, nil
}

// RestorableComponents returns the components a maintenance put in MAINTENANCE that are still
// there and not held by another maintenance in progress, with the status each had before it.
func (t *StatusPageTx) RestorableComponents(ctx context.Context, orgID, incidentID uuid.UUID) ([]ComponentStatus, error) {
	rows, err := t.q.RestorableComponents(ctx, dbsqlc.RestorableComponentsParams{OrgID: orgID, IncidentID: incidentID})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]ComponentStatus, len(rows))
	for i, row := range rows {
		out[i] = ComponentStatus{ID: row.ComponentID, Status: row.RestoreStatus}
	}
	return out, nil
}

// SetMaintenanceState moves a maintenance to state; started, when not nil, is when it started.
func (t *StatusPageTx) SetMaintenanceState(ctx context.Context, orgID, id uuid.UUID, state string, started *time.Time, now time.Time) error {
	return translate(t.q.SetMaintenanceState(ctx, dbsqlc.SetMaintenanceStateParams{OrgID: orgID, ID: id, MaintenanceState: &state,
		Started: started, Now: now}))
}

// ClaimReminder marks a scheduled maintenance's notice as sent and returns its latest update;
// ok is false when another transaction holds it or it changed meanwhile.
func (t *StatusPageTx) ClaimReminder(ctx context.Context, orgID, id uuid.UUID, now time.Time) (latestUpdate uuid.UUID, ok bool, err error) {
	rows, err := t.q.ClaimReminder(ctx, dbsqlc.ClaimReminderParams{OrgID: orgID, ID: id, Now: now})
	if err != nil || len(rows) == 0 {
		return uuid.Nil, false, translate(err)
	}
	return rows[0], true, nil
}

// Notice is an incident update as subscriber e-mails tell it.
type Notice struct {
	Title           string
	Impact          string
	StartDate       *time.Time
	DurationMinutes *int
	Status          string
	Description     string
	DateHappened    time.Time
	// Components are every component the incident affects, with its current status, in display
	// order.
	Components []ComponentNotice
}

// ComponentNotice is a component as a subscriber notice lists it.
type ComponentNotice struct {
	ID     uuid.UUID
	Name   string
	Status string
}

// IncidentNotice reads update updateID of an incident for its subscriber notice.
func (r StatusPageReader) IncidentNotice(ctx context.Context, orgID, incidentID, updateID uuid.UUID) (Notice, error) {
	row, err := r.q.IncidentNotice(ctx, dbsqlc.IncidentNoticeParams{OrgID: orgID, IncidentID: incidentID, UpdateID: updateID})
	if err != nil {
		return Notice{}, translate(err)
	}
	n := Notice{Title: row.Title, Impact: row.Impact, StartDate: row.StartDate, DurationMinutes: intPtr(row.DurationMinutes),
		Status: row.Status, Description: row.Description, DateHappened: row.DateHappened}
	comps, err := r.q.IncidentNoticeComponents(ctx, dbsqlc.IncidentNoticeComponentsParams{OrgID: orgID, IncidentID: incidentID})
	if err != nil {
		return Notice{}, translate(err)
	}
	n.Components = make([]ComponentNotice, len(comps))
	for i, c := range comps {
		n.Components[i] = ComponentNotice(c)
	}
	return n, nil
}
