package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// PageIncident is a status page incident; a scheduled maintenance is one with a schedule
// (MaintenanceState, StartDate, DurationMinutes set).
type PageIncident struct {
	ID                 uuid.UUID
	OrgID              uuid.UUID
	StatusPageID       uuid.UUID
	Title              string
	Impact             string
	Started            *time.Time
	Ended              *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	MaintenanceState   *string // SCHEDULED, IN_PROGRESS or COMPLETED
	StartDate          *time.Time
	DurationMinutes    *int
	NotifyAnHourBefore bool
	NotifyAtStart      bool
	NotifyAtEnd        bool
	// Latest is the update with the latest date_happened, nil when it has none (as read by the
	// reads that say so).
	Latest *LatestUpdate
}

// LatestUpdate names an incident's latest update.
type LatestUpdate struct {
	ID           uuid.UUID
	Status       string
	DateHappened time.Time
}

func incidentOf(r dbsqlc.StatusPageIncident) PageIncident {
	return PageIncident{ID: r.ID, OrgID: r.OrgID, StatusPageID: r.StatusPageID, Title: r.Title, Impact: r.Impact,
		Started: r.Started, Ended: r.Ended, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		MaintenanceState: r.MaintenanceState, StartDate: r.StartDate, DurationMinutes: intPtr(r.DurationMinutes),
		NotifyAnHourBefore: r.NotifyAnHourBefore != nil && *r.NotifyAnHourBefore,
		NotifyAtStart:      r.NotifyAtStart != nil && *r.NotifyAtStart, NotifyAtEnd: r.NotifyAtEnd != nil && *r.NotifyAtEnd}
}

// withLatest converts incident rows and attaches each one's latest update.
func (r StatusPageReader) withLatest(ctx context.Context, orgID uuid.UUID, rows []dbsqlc.StatusPageIncident) ([]PageIncident, error) {
	out := make([]PageIncident, len(rows))
	at := make(map[uuid.UUID]int, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, row := range rows {
		out[i], at[row.ID], ids[i] = incidentOf(row), i, row.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	latest, err := r.q.LatestUpdates(ctx, dbsqlc.LatestUpdatesParams{OrgID: orgID, IncidentIds: ids})
	if err != nil {
		return nil, translate(err)
	}
	for _, l := range latest {
		out[at[l.IncidentID]].Latest = &LatestUpdate{ID: l.ID, Status: l.Status, DateHappened: l.DateHappened}
	}
	return out, nil
}

// ListIncidents returns one page of a page's incidents (scheduled maintenance included), newest
// first, with their latest updates, and the total; search matches the title.
func (r StatusPageReader) ListIncidents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]PageIncident, int64, error) {
	if err := r.StatusPageExists(ctx, orgID, pageID); err != nil {
		return nil, 0, err
	}
	total, err := r.q.CountIncidents(ctx, dbsqlc.CountIncidentsParams{OrgID: orgID, StatusPageID: pageID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListIncidents(ctx, dbsqlc.ListIncidentsParams{OrgID: orgID, StatusPageID: pageID, Search: search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out, err := r.withLatest(ctx, orgID, rows)
	return out, total, err
}

// GetIncident returns one incident of a page with its latest update.
func (r StatusPageReader) GetIncident(ctx context.Context, orgID, pageID, id uuid.UUID) (PageIncident, error) {
	row, err := r.q.GetIncident(ctx, dbsqlc.GetIncidentParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	if err != nil {
		return PageIncident{}, translate(err)
	}
	out, err := r.withLatest(ctx, orgID, []dbsqlc.StatusPageIncident{row})
	if err != nil {
		return PageIncident{}, err
	}
	return out[0], nil
}

// CurrentIncidents returns what the public summary shows of a page: its unresolved incidents
// that are not maintenance, and its maintenance that has not completed, soonest first.
func (r StatusPageReader) CurrentIncidents(ctx context.Context, orgID, pageID uuid.UUID) ([]PageIncident, error) {
	rows, err := r.q.CurrentIncidents(ctx, dbsqlc.CurrentIncidentsParams{OrgID: orgID, StatusPageID: pageID})
	if err != nil {
		return nil, translate(err)
	}
	return r.withLatest(ctx, orgID, rows)
}

// IncidentComponents returns the components each incident affects, in creation order.
func (r StatusPageReader) IncidentComponents(ctx context.Context, orgID uuid.UUID, incidentIDs ...uuid.UUID) (map[uuid.UUID][]NamedRef, error) {
	rows, err := r.q.IncidentComponentRefs(ctx, dbsqlc.IncidentComponentRefsParams{OrgID: orgID, IncidentIds: incidentIDs})
	if err != nil {
		return nil, translate(err)
	}
	out := map[uuid.UUID][]NamedRef{}
	for _, row := range rows {
		out[row.IncidentID] = append(out[row.IncidentID], NamedRef{ID: row.ID, Name: row.Name})
	}
	return out, nil
}

// LockIncident locks an incident of the page for the rest of the transaction.
func (t *StatusPageTx) LockIncident(ctx context.Context, orgID, pageID, id uuid.UUID) (PageIncident, error) {
	row, err := t.q.LockIncident(ctx, dbsqlc.LockIncidentParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	if err != nil {
		return PageIncident{}, translate(err)
	}
	return incidentOf(row), nil
}

// CreateIncident opens an incident, started now.
func (t *StatusPageTx) CreateIncident(ctx context.Context, orgID, pageID, id uuid.UUID, title, impact string, now time.Time) error {
	return translate(t.q.CreateIncident(ctx, dbsqlc.CreateIncidentParams{ID: id, OrgID: orgID, StatusPageID: pageID,
		Title: title, Impact: impact, Now: now}))
}

// SetIncidentTitleImpact changes an incident's title and impact.
func (t *StatusPageTx) SetIncidentTitleImpact(ctx context.Context, orgID, pageID, id uuid.UUID, title, impact string, now time.Time) error {
	n, err := t.q.SetIncidentTitleImpact(ctx, dbsqlc.SetIncidentTitleImpactParams{OrgID: orgID, StatusPageID: pageID, ID: id,
		Title: title, Impact: impact, Now: now})
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetIncidentEnded sets (nil: clears) when an incident ended and touches updated_at.
func (t *StatusPageTx) SetIncidentEnded(ctx context.Context, orgID, id uuid.UUID, ended *time.Time, now time.Time) error {
	return translate(t.q.SetIncidentEnded(ctx, dbsqlc.SetIncidentEndedParams{OrgID: orgID, ID: id, Ended: ended, Now: now}))
}

// DeleteIncident deletes an incident (or a scheduled maintenance) with its timeline.
func (t *StatusPageTx) DeleteIncident(ctx context.Context, orgID, id uuid.UUID) error {
	return translate(t.q.DeleteIncident(ctx, dbsqlc.DeleteIncidentParams{OrgID: orgID, ID: id}))
}

// ComponentChange sets one component's status (incident creation and updates).
type ComponentChange struct {
	ID     uuid.UUID
	Status string
}

// NewUpdate is an update to append to an incident's timeline.
type NewUpdate struct {
	Status            string
	Description       string
	DateHappened      time.Time
	NotifySubscribers bool
	// Changes set component statuses; the components must be on the incident's page (field
	// names the list in the ValidationError otherwise) and become the incident's.
	Changes []ComponentChange
	Field   string
}

// AddIncidentUpdate appends an update to an incident, applying and recording its component
// changes, and returns its id.
func (t *StatusPageTx) AddIncidentUpdate(ctx context.Context, orgID, pageID, incidentID uuid.UUID, u NewUpdate, now time.Time) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	if err := t.q.CreateIncidentUpdate(ctx, dbsqlc.CreateIncidentUpdateParams{ID: id, OrgID: orgID, IncidentID: incidentID,
		Status: u.Status, Description: u.Description, DateHappened: u.DateHappened, NotifySubscribers: u.NotifySubscribers,
		Now: now}); err != nil {
		return id, translate(err)
	}
	for i, ch := range u.Changes {
		old, err := t.q.LockPageComponentStatus(ctx, dbsqlc.LockPageComponentStatusParams{OrgID: orgID, StatusPageID: pageID, ID: ch.ID})
		if errors.Is(err, pgx.ErrNoRows) {
			return id, spValidation(fmt.Sprintf("%s[%d].id", u.Field, i), "no such component on this status page")
		}
		if err != nil {
			return id, translate(err)
		}
		if err := t.ChangeComponent(ctx, orgID, id, ch.ID, &old, ch.Status, now); err != nil {
			return id, err
		}
		if err := t.q.LinkIncidentComponent(ctx, dbsqlc.LinkIncidentComponentParams{OrgID: orgID, IncidentID: incidentID,
			ComponentID: ch.ID}); err != nil {
			return id, translate(err)
		}
	}
	return id, nil
}

// ChangeComponent sets a component's status and records the change on an update.
func (t *StatusPageTx) ChangeComponent(ctx context.Context, orgID, updateID, componentID uuid.UUID, old *string, next string, now time.Time) error {
	if err := t.SetComponentStatus(ctx, orgID, componentID, next, now); err != nil {
		return err
	}
	return translate(t.q.RecordComponentChange(ctx, dbsqlc.RecordComponentChangeParams{OrgID: orgID, UpdateID: updateID,
		ComponentID: componentID, OldStatus: old, NewStatus: next}))
}
