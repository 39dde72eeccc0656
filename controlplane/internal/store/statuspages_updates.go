package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// IncidentUpdate is one entry of an incident's timeline with the component status changes it
// made.
type IncidentUpdate struct {
	ID           uuid.UUID
	IncidentID   uuid.UUID
	Status       string
	Description  string
	DateHappened time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Changes      []ComponentStatusChange // in component creation order
}

// ComponentStatusChange is a component's status change an update made.
type ComponentStatusChange struct {
	ID        uuid.UUID
	Name      string
	OldStatus *string
	NewStatus string
}

// withChanges converts update rows and attaches their component changes.
func (r StatusPageReader) withChanges(ctx context.Context, orgID uuid.UUID, rows []dbsqlc.ListIncidentUpdatesRow) ([]IncidentUpdate, error) {
	out := make([]IncidentUpdate, len(rows))
	at := make(map[uuid.UUID]int, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, u := range rows {
		out[i] = IncidentUpdate{ID: u.ID, IncidentID: u.IncidentID, Status: u.Status, Description: u.Description,
			DateHappened: u.DateHappened, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, Changes: []ComponentStatusChange{}}
		at[u.ID], ids[i] = i, u.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	changes, err := r.q.UpdateComponentChanges(ctx, dbsqlc.UpdateComponentChangesParams{OrgID: orgID, UpdateIds: ids})
	if err != nil {
		return nil, translate(err)
	}
	for _, c := range changes {
		i := at[c.UpdateID]
		out[i].Changes = append(out[i].Changes, ComponentStatusChange{ID: c.ID, Name: c.Name, OldStatus: c.OldStatus, NewStatus: c.NewStatus})
	}
	return out, nil
}

// ListIncidentUpdates returns one page of an incident's timeline, newest date_happened first,
// and the total; search matches the description. The incident must be on the page.
func (r StatusPageReader) ListIncidentUpdates(ctx context.Context, orgID, pageID, incidentID uuid.UUID, search string, limit, offset int64) ([]IncidentUpdate, int64, error) {
	if _, err := r.q.GetIncident(ctx, dbsqlc.GetIncidentParams{OrgID: orgID, StatusPageID: pageID, ID: incidentID}); err != nil {
		return nil, 0, translate(err)
	}
	total, err := r.q.CountIncidentUpdates(ctx, dbsqlc.CountIncidentUpdatesParams{OrgID: orgID, IncidentID: incidentID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListIncidentUpdates(ctx, dbsqlc.ListIncidentUpdatesParams{OrgID: orgID, IncidentID: incidentID, Search: search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out, err := r.withChanges(ctx, orgID, rows)
	return out, total, err
}

// Timeline returns every update of an incident, newest date_happened first.
func (r StatusPageReader) Timeline(ctx context.Context, orgID, incidentID uuid.UUID) ([]IncidentUpdate, error) {
	rows, err := r.q.IncidentTimeline(ctx, dbsqlc.IncidentTimelineParams{OrgID: orgID, IncidentID: incidentID})
	if err != nil {
		return nil, translate(err)
	}
	list := make([]dbsqlc.ListIncidentUpdatesRow, len(rows))
	for i, u := range rows {
		list[i] = dbsqlc.ListIncidentUpdatesRow(u)
	}
	return r.withChanges(ctx, orgID, list)
}

// GetIncidentUpdate returns one update of an incident of the page.
func (r StatusPageReader) GetIncidentUpdate(ctx context.Context, orgID, pageID, incidentID, id uuid.UUID) (IncidentUpdate, error) {
	if _, err := r.q.GetIncident(ctx, dbsqlc.GetIncidentParams{OrgID: orgID, StatusPageID: pageID, ID: incidentID}); err != nil {
		return IncidentUpdate{}, translate(err)
	}
	u, err := r.q.GetIncidentUpdate(ctx, dbsqlc.GetIncidentUpdateParams{OrgID: orgID, IncidentID: incidentID, ID: id})
	if err != nil {
		return IncidentUpdate{}, translate(err)
	}
	out, err := r.withChanges(ctx, orgID, []dbsqlc.ListIncidentUpdatesRow{dbsqlc.ListIncidentUpdatesRow(u)})
	if err != nil {
		return IncidentUpdate{}, err
	}
	return out[0], nil
}

// IncidentUpdatePatch changes an update; nil fields stay as they are.
type IncidentUpdatePatch struct {
	Status       *string
	Description  *string
	DateHappened *time.Time
}

// EditIncidentUpdate applies p to an update of the incident.
func (t *StatusPageTx) EditIncidentUpdate(ctx context.Context, orgID, incidentID, id uuid.UUID, p IncidentUpdatePatch, now time.Time) error {
	n, err := t.q.EditIncidentUpdate(ctx, dbsqlc.EditIncidentUpdateParams{OrgID: orgID, IncidentID: incidentID, ID: id,
		Status: p.Status, Description: p.Description, DateHappened: p.DateHappened, Now: now})
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteIncidentUpdate removes an update from the timeline (the component statuses it set stay)
// and returns its status.
func (t *StatusPageTx) DeleteIncidentUpdate(ctx context.Context, orgID, incidentID, id uuid.UUID) (string, error) {
	status, err := t.q.DeleteIncidentUpdate(ctx, dbsqlc.DeleteIncidentUpdateParams{OrgID: orgID, IncidentID: incidentID, ID: id})
	return status, translate(err)
}
