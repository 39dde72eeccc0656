package statuspage

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ListIncidentUpdates returns one page of an incident's updates, newest date_happened first;
// search matches the description.
func (s *Service) ListIncidentUpdates(ctx context.Context, orgID, pageID, incidentID uuid.UUID, search string, limit, offset int64) ([]IncidentUpdate, int64, error) {
	rows, total, err := s.st.StatusPages().ListIncidentUpdates(ctx, orgID, pageID, incidentID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	return updatesOf(rows), total, nil
}

// GetIncidentUpdate returns one update of an incident of the page.
func (s *Service) GetIncidentUpdate(ctx context.Context, orgID, pageID, incidentID, id uuid.UUID) (IncidentUpdate, error) {
	u, err := s.st.StatusPages().GetIncidentUpdate(ctx, orgID, pageID, incidentID, id)
	return UpdateOf(u), err
}

// NewIncidentUpdate is the input of CreateIncidentUpdate.
type NewIncidentUpdate struct {
	Status            string
	Description       string
	DateHappened      *time.Time // nil: now
	NotifySubscribers bool
	Components        []store.ComponentChange
}

// CreateIncidentUpdate appends an update (api/openapi/status-page-incidents.yaml): its component changes are applied
// and recorded, the end follows the latest update, status_page.incident.resolved (a RESOLVED
// update) or .updated is queued (and the subscribers' e-mail when asked), and it is audited.
func (s *Service) CreateIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID uuid.UUID, in NewIncidentUpdate) (IncidentUpdate, error) {
	var u IncidentUpdate
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		inc, err := tx.LockIncident(ctx, orgID, pageID, incidentID)
		if err != nil {
			return err
		}
		now := s.now()
		happened := now
		if in.DateHappened != nil {
			happened = *in.DateHappened
		}
		id, err := tx.AddIncidentUpdate(ctx, orgID, pageID, incidentID, store.NewUpdate{Status: in.Status, Description: in.Description,
			DateHappened: happened, NotifySubscribers: in.NotifySubscribers, Changes: in.Components, Field: "components_affected"}, now)
		if err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, incidentID, now); err != nil {
			return err
		}
		kind := event.TypeIncidentUpdated
		if in.Status == Resolved {
			kind = event.TypeIncidentResolved
		}
		if err := announce(ctx, tx, orgID, pageID, incidentID, kind, now); err != nil {
			return err
		}
		if in.NotifySubscribers {
			if err := notifySubscribers(ctx, tx, orgID, pageID, incidentID, id, event.ReasonIncidentUpdated, now); err != nil {
				return err
			}
		}
		row, err := tx.GetIncidentUpdate(ctx, orgID, pageID, incidentID, id)
		if err != nil {
			return err
		}
		u = UpdateOf(row)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: u.ID, AuditableDisplayName: inc.Title,
			Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": u.Status}})
	})
	return u, err
}

// UpdateIncidentUpdate edits an update, keeps the end in step, queues
// status_page.incident.updated and audits it.
func (s *Service) UpdateIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID, id uuid.UUID, p store.IncidentUpdatePatch) (IncidentUpdate, error) {
	var u IncidentUpdate
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockIncident(ctx, orgID, pageID, incidentID); err != nil {
			return err
		}
		now := s.now()
		if err := tx.EditIncidentUpdate(ctx, orgID, incidentID, id, p, now); err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, incidentID, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, incidentID, event.TypeIncidentUpdated, now); err != nil {
			return err
		}
		row, err := tx.GetIncidentUpdate(ctx, orgID, pageID, incidentID, id)
		if err != nil {
			return err
		}
		u = UpdateOf(row)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: u.ID, Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": u.Status}})
	})
	return u, err
}

// DeleteIncidentUpdate removes an update from the timeline (component statuses it set stay),
// keeps the end in step, queues status_page.incident.updated and audits it.
func (s *Service) DeleteIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID, id uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockIncident(ctx, orgID, pageID, incidentID); err != nil {
			return err
		}
		now := s.now()
		status, err := tx.DeleteIncidentUpdate(ctx, orgID, incidentID, id)
		if err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, incidentID, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, incidentID, event.TypeIncidentUpdated, now); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: id.String(), Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": status}})
	})
}
