package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// lockIncident locks an incident of the page for update, or is ErrNotFound.
func lockIncident(ctx context.Context, tx pgx.Tx, orgID, pageID, id uuid.UUID) error {
	var got uuid.UUID
	return tx.QueryRow(ctx, `SELECT id FROM status_page_incidents WHERE org_id = $1 AND status_page_id = $2 AND id = $3 FOR UPDATE`,
		orgID, pageID, id).Scan(&got)
}

// ListIncidentUpdates returns one page of an incident's updates, newest date_happened first;
// search matches the description.
func (s *Store) ListIncidentUpdates(ctx context.Context, orgID, pageID, incidentID uuid.UUID, search string, limit, offset int64) ([]statuspage.IncidentUpdate, int64, error) {
	if _, err := getIncidentRow(ctx, s.pool, orgID, pageID, incidentID); err != nil {
		return nil, 0, translate(err)
	}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_page_incident_updates u WHERE u.org_id = $1 AND u.incident_id = $2
		AND ($3 = '' OR strpos(lower(u.description), lower($3)) > 0)`, orgID, incidentID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	items, err := incidentUpdates(ctx, s.pool, orgID, incidentID,
		`AND ($3 = '' OR strpos(lower(u.description), lower($3)) > 0)`+updateOrder+` LIMIT $4 OFFSET $5`, search, limit, offset)
	return items, total, translate(err)
}

func getUpdate(ctx context.Context, q spQuerier, orgID, incidentID, id uuid.UUID) (statuspage.IncidentUpdate, error) {
	items, err := incidentUpdates(ctx, q, orgID, incidentID, `AND u.id = $3`, id)
	if err != nil {
		return statuspage.IncidentUpdate{}, err
	}
	if len(items) == 0 {
		return statuspage.IncidentUpdate{}, ErrNotFound
	}
	return items[0], nil
}

// GetIncidentUpdate returns one update of an incident of the page.
func (s *Store) GetIncidentUpdate(ctx context.Context, orgID, pageID, incidentID, id uuid.UUID) (statuspage.IncidentUpdate, error) {
	if _, err := getIncidentRow(ctx, s.pool, orgID, pageID, incidentID); err != nil {
		return statuspage.IncidentUpdate{}, translate(err)
	}
	u, err := getUpdate(ctx, s.pool, orgID, incidentID, id)
	return u, translate(err)
}

// NewIncidentUpdate is the input of CreateIncidentUpdate.
type NewIncidentUpdate struct {
	Status            string
	Description       string
	DateHappened      *time.Time // nil: now
	NotifySubscribers bool
	Components        []ComponentChange
}

// CreateIncidentUpdate appends an update (supplement §2.9): its component changes are applied
// and recorded, ended follows the latest update, status_page.incident.resolved (a RESOLVED
// update) or .updated is queued, and it is audited.
func (s *Store) CreateIncidentUpdate(ctx context.Context, actor Actor, orgID, pageID, incidentID uuid.UUID, in NewIncidentUpdate) (statuspage.IncidentUpdate, error) {
	var u statuspage.IncidentUpdate
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockIncident(ctx, tx, orgID, pageID, incidentID); err != nil {
			return err
		}
		before, err := getIncidentRow(ctx, tx, orgID, pageID, incidentID)
		if err != nil {
			return err
		}
		now := s.now()
		happened := now
		if in.DateHappened != nil {
			happened = *in.DateHappened
		}
		id, err := addUpdate(ctx, tx, orgID, pageID, incidentID, in.Status, in.Description, happened, in.NotifySubscribers, in.Components, "components_affected", now)
		if err != nil {
			return err
		}
		if err := refreshIncident(ctx, tx, orgID, incidentID, now); err != nil {
			return err
		}
		event := statuspage.EventIncidentUpdated
		if in.Status == statuspage.Resolved {
			event = statuspage.EventIncidentResolved
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, incidentID, event, now); err != nil {
			return err
		}
		if in.NotifySubscribers {
			if err := queueSubscriberNotification(ctx, tx, orgID, pageID, incidentID, id, NotifyIncidentUpdated, now); err != nil {
				return err
			}
		}
		if u, err = getUpdate(ctx, tx, orgID, incidentID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: u.ID, AuditableDisplayName: before.Title,
			Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": u.Status}})
	})
	return u, err
}

// IncidentUpdatePatch changes an update; nil fields stay as they are.
type IncidentUpdatePatch struct {
	Status       *string
	Description  *string
	DateHappened *time.Time
}

// UpdateIncidentUpdate edits an update, keeps ended in step, queues
// status_page.incident.updated and audits it.
func (s *Store) UpdateIncidentUpdate(ctx context.Context, actor Actor, orgID, pageID, incidentID, id uuid.UUID, p IncidentUpdatePatch) (statuspage.IncidentUpdate, error) {
	var u statuspage.IncidentUpdate
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockIncident(ctx, tx, orgID, pageID, incidentID); err != nil {
			return err
		}
		now := s.now()
		tag, err := tx.Exec(ctx, `UPDATE status_page_incident_updates SET status = coalesce($4, status),
				description = coalesce($5, description), date_happened = coalesce($6, date_happened), updated_at = $7
			WHERE org_id = $1 AND incident_id = $2 AND id = $3`, orgID, incidentID, id, p.Status, p.Description, p.DateHappened, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if err := refreshIncident(ctx, tx, orgID, incidentID, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, incidentID, statuspage.EventIncidentUpdated, now); err != nil {
			return err
		}
		if u, err = getUpdate(ctx, tx, orgID, incidentID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: u.ID, Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": u.Status}})
	})
	return u, err
}

// DeleteIncidentUpdate removes an update from the timeline (component statuses it set stay),
// keeps ended in step, queues status_page.incident.updated and audits it.
func (s *Store) DeleteIncidentUpdate(ctx context.Context, actor Actor, orgID, pageID, incidentID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockIncident(ctx, tx, orgID, pageID, incidentID); err != nil {
			return err
		}
		now := s.now()
		var status string
		if err := tx.QueryRow(ctx, `DELETE FROM status_page_incident_updates WHERE org_id = $1 AND incident_id = $2 AND id = $3 RETURNING status`,
			orgID, incidentID, id).Scan(&status); err != nil {
			return err
		}
		if err := refreshIncident(ctx, tx, orgID, incidentID, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, incidentID, statuspage.EventIncidentUpdated, now); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "StatusPageIncidentUpdate",
			AuditableID: id.String(), Metadata: map[string]any{"status_page_id": pageID.String(), "incident_id": incidentID.String(), "status": status}})
	})
}
