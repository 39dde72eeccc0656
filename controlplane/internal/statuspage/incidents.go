package statuspage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The incident lifecycle (api/openapi/status-page-incidents.yaml): an incident opens with its first update,
// takes the worst status it sets on its components as its impact, ends with the latest update
// when that is RESOLVED or COMPLETED (and opens again when a later update is not), and every
// change is announced — status_page.incident.* to webhooks, and, when asked, an e-mail to the
// page's subscribers.

// IncidentSummaryOf is the API's record of a stored incident as lists show it.
func IncidentSummaryOf(inc store.PageIncident) IncidentSummary {
	sum := IncidentSummary{IncidentBase: IncidentBase{ID: inc.ID.String(), Title: inc.Title, Impact: inc.Impact,
		Started: TimePtr(inc.Started), Ended: TimePtr(inc.Ended), CreatedAt: Time(inc.CreatedAt), UpdatedAt: Time(inc.UpdatedAt)}}
	if l := inc.Latest; l != nil {
		sum.LatestUpdate = &LatestUpdate{ID: l.ID.String(), Status: l.Status, DateHappened: Time(l.DateHappened)}
	}
	if inc.MaintenanceState != nil && inc.StartDate != nil && inc.DurationMinutes != nil {
		sum.ScheduledMaintenance = &MaintenanceRef{ID: sum.ID, StartDate: Time(*inc.StartDate), DurationMinutes: *inc.DurationMinutes,
			NotifySubscribersAtStart: inc.NotifyAtStart, NotifySubscribersAtEnd: inc.NotifyAtEnd}
	}
	return sum
}

// UpdateOf is the API's record of a stored incident update.
func UpdateOf(u store.IncidentUpdate) IncidentUpdate {
	out := IncidentUpdate{ID: u.ID.String(), IncidentID: u.IncidentID.String(), Status: u.Status, Description: u.Description,
		DateHappened: Time(u.DateHappened), CreatedAt: Time(u.CreatedAt), UpdatedAt: Time(u.UpdatedAt)}
	if u.Changes != nil {
		out.Components = make([]StatusChange, len(u.Changes))
		for i, c := range u.Changes {
			out.Components[i] = StatusChange{ID: c.ID.String(), Name: c.Name, OldStatus: c.OldStatus, NewStatus: c.NewStatus}
		}
	}
	return out
}

func updatesOf(rows []store.IncidentUpdate) []IncidentUpdate {
	out := make([]IncidentUpdate, len(rows))
	for i, u := range rows {
		out[i] = UpdateOf(u)
	}
	return out
}

func refsOf(rows []store.NamedRef) []Ref {
	out := make([]Ref, len(rows))
	for i, r := range rows {
		out[i] = Ref{ID: r.ID.String(), Name: r.Name}
	}
	return out
}

// loadIncident reads a full incident.
func loadIncident(ctx context.Context, r store.StatusPageReader, orgID, pageID, id uuid.UUID) (Incident, error) {
	inc, err := r.GetIncident(ctx, orgID, pageID, id)
	if err != nil {
		return Incident{}, err
	}
	comps, err := r.IncidentComponents(ctx, orgID, id)
	if err != nil {
		return Incident{}, err
	}
	updates, err := r.Timeline(ctx, orgID, id)
	if err != nil {
		return Incident{}, err
	}
	full := Incident{IncidentSummary: IncidentSummaryOf(inc), Components: refsOf(comps[id]), Updates: updatesOf(updates)}
	if len(updates) > 0 { // the timeline is newest first: the first update is the current one
		full.Status, full.Description = &updates[0].Status, &updates[0].Description
	}
	return full, nil
}

// ListIncidents returns one page of a page's incidents (scheduled maintenance included),
// newest first; search matches the title.
func (s *Service) ListIncidents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]IncidentSummary, int64, error) {
	rows, total, err := s.st.StatusPages().ListIncidents(ctx, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out := make([]IncidentSummary, len(rows))
	for i, inc := range rows {
		out[i] = IncidentSummaryOf(inc)
	}
	return out, total, nil
}

// GetIncident returns a full incident (a scheduled maintenance is an incident too).
func (s *Service) GetIncident(ctx context.Context, orgID, pageID, id uuid.UUID) (Incident, error) {
	return loadIncident(ctx, s.st.StatusPages(), orgID, pageID, id)
}

// refreshEnded keeps an incident's end in step with its latest update — set by RESOLVED or
// COMPLETED, cleared by a later update of another status — and touches updated_at.
func refreshEnded(ctx context.Context, tx *store.StatusPageTx, orgID, pageID, id uuid.UUID, now time.Time) error {
	inc, err := tx.GetIncident(ctx, orgID, pageID, id)
	if err != nil {
		return err
	}
	var ended *time.Time
	if l := inc.Latest; l != nil && IsFinal(l.Status) {
		ended = &l.DateHappened
	}
	return tx.SetIncidentEnded(ctx, orgID, id, ended, now)
}

// announce queues the status page incident event of kind (event.TypeIncident*) with the full
// incident as it now is.
func announce(ctx context.Context, tx *store.StatusPageTx, orgID, pageID, id uuid.UUID, kind string, now time.Time) error {
	page, err := tx.StatusPageName(ctx, orgID, pageID)
	if err != nil {
		return err
	}
	inc, err := loadIncident(ctx, tx.StatusPageReader, orgID, pageID, id)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(inc)
	if err != nil {
		return fmt.Errorf("encode incident %s: %w", id, err)
	}
	change := event.IncidentChange{OccurredAt: now, StatusPage: event.PageRef{ID: pageID, Name: page.Name}, Incident: doc}
	var ev event.Event
	switch kind {
	case event.TypeIncidentStarted:
		ev = event.IncidentStarted{IncidentChange: change}
	case event.TypeIncidentResolved:
		ev = event.IncidentResolved{IncidentChange: change}
	default:
		ev = event.IncidentUpdated{IncidentChange: change}
	}
	return tx.QueueEvents(ctx, store.OutboxEvent{OrgID: orgID, Event: ev, IncidentID: &id, StatusPageID: &pageID, CreatedAt: now})
}

// NewIncident is the input of CreateIncident.
type NewIncident struct {
	Title             string
	Description       string
	Status            string
	Components        []store.ComponentChange
	NotifySubscribers bool
}

// CreateIncident opens an incident with its first update (status, description and component
// changes), takes the worst status it sets as its impact (ImpactOf), queues
// status_page.incident.started (and the subscribers' e-mail when asked) and audits it.
func (s *Service) CreateIncident(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in NewIncident) (Incident, error) {
	var inc Incident
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		statuses := make([]string, len(in.Components))
		for i, c := range in.Components {
			statuses[i] = c.Status
		}
		if err := tx.CreateIncident(ctx, orgID, pageID, id, in.Title, ImpactOf(statuses), now); err != nil {
			return err
		}
		upd, err := tx.AddIncidentUpdate(ctx, orgID, pageID, id, store.NewUpdate{Status: in.Status, Description: in.Description,
			DateHappened: now, NotifySubscribers: in.NotifySubscribers, Changes: in.Components, Field: "components"}, now)
		if err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, id, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentStarted, now); err != nil {
			return err
		}
		if in.NotifySubscribers {
			if err := notifySubscribers(ctx, tx, orgID, pageID, id, upd, event.ReasonIncidentCreated, now); err != nil {
				return err
			}
		}
		if inc, err = loadIncident(ctx, tx.StatusPageReader, orgID, pageID, id); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageIncident",
			AuditableID: inc.ID, AuditableDisplayName: inc.Title,
			Metadata: map[string]any{"status_page_id": pageID.String(), "status": in.Status, "impact": inc.Impact}})
	})
	return inc, err
}

// UpdateIncident sets an incident's title and impact, queues status_page.incident.updated and
// audits it.
func (s *Service) UpdateIncident(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, title, impact string) (Incident, error) {
	var inc Incident
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		now := s.now()
		if err := tx.SetIncidentTitleImpact(ctx, orgID, pageID, id, title, impact, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentUpdated, now); err != nil {
			return err
		}
		var err error
		if inc, err = loadIncident(ctx, tx.StatusPageReader, orgID, pageID, id); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPageIncident",
			AuditableID: inc.ID, AuditableDisplayName: inc.Title, Metadata: map[string]any{"status_page_id": pageID.String(), "impact": impact}})
	})
	return inc, err
}

// DeleteIncident deletes an incident (or, with maintenanceOnly, only a scheduled maintenance)
// with its timeline, and audits it. Deleting a maintenance in progress restores its components
// first.
func (s *Service) DeleteIncident(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, maintenanceOnly bool) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		inc, err := tx.LockIncident(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		state := inc.MaintenanceState
		if maintenanceOnly && state == nil {
			return store.ErrNotFound
		}
		if state != nil && *state == InProgress {
			if err := restoreComponents(ctx, tx, orgID, id, nil, s.now()); err != nil {
				return err
			}
		}
		if err := tx.DeleteIncident(ctx, orgID, id); err != nil {
			return err
		}
		typ := "StatusPageIncident"
		if state != nil {
			typ = "StatusPageScheduledMaintenance"
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: typ,
			AuditableID: id.String(), AuditableDisplayName: inc.Title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

// restoreComponents gives a maintenance's components back the status they had when it started
// (those still in MAINTENANCE and not held by another maintenance in progress), recording the
// changes on update updateID when it is not nil.
func restoreComponents(ctx context.Context, tx *store.StatusPageTx, orgID, incidentID uuid.UUID, updateID *uuid.UUID, now time.Time) error {
	list, err := tx.RestorableComponents(ctx, orgID, incidentID)
	if err != nil {
		return err
	}
	old := Maintenance
	for _, c := range list {
		if updateID == nil {
			err = tx.SetComponentStatus(ctx, orgID, c.ID, c.Status, now)
		} else {
			err = tx.ChangeComponent(ctx, orgID, *updateID, c.ID, &old, c.Status, now)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
