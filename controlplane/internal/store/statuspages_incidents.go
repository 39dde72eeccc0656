package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// ComponentChange sets one component's status (incident creation and updates).
type ComponentChange struct {
	ID     uuid.UUID
	Status string
}

// incidentColumns select an incident with its latest update (the one with the latest
// date_happened) and, for a scheduled maintenance, its schedule.
const incidentColumns = `i.id, i.title, i.impact, i.started, i.ended, i.created_at, i.updated_at,
	i.maintenance_state, i.start_date, i.duration_minutes,
	coalesce(i.notify_an_hour_before, false), coalesce(i.notify_at_start, false), coalesce(i.notify_at_end, false),
	lu.id, lu.status, lu.date_happened
	FROM status_page_incidents i LEFT JOIN LATERAL (
		SELECT u.id, u.status, u.date_happened FROM status_page_incident_updates u WHERE u.incident_id = i.id
		ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC LIMIT 1) lu ON true `

// incidentRow is one incident as read, before components and updates are attached.
type incidentRow struct {
	statuspage.IncidentSummary
	id            uuid.UUID
	state         *string
	notifications statuspage.Notifications
}

func scanIncident(row pgx.Row) (incidentRow, error) {
	var r incidentRow
	var started, ended, start *time.Time
	var created, updated time.Time
	var duration *int
	var luID *uuid.UUID
	var luStatus *string
	var luDate *time.Time
	n := &r.notifications
	err := row.Scan(&r.id, &r.Title, &r.Impact, &started, &ended, &created, &updated, &r.state, &start, &duration,
		&n.AnHourBefore, &n.AtStart, &n.AtEnd, &luID, &luStatus, &luDate)
	if err != nil {
		return r, err
	}
	r.ID, r.Started, r.Ended, r.CreatedAt, r.UpdatedAt = r.id.String(), statuspage.TimePtr(started), statuspage.TimePtr(ended), spTime(created), spTime(updated)
	if luID != nil {
		r.LatestUpdate = &statuspage.LatestUpdate{ID: luID.String(), Status: *luStatus, DateHappened: spTime(*luDate)}
	}
	if r.state != nil {
		r.ScheduledMaintenance = &statuspage.MaintenanceRef{ID: r.ID, StartDate: spTime(*start), DurationMinutes: *duration,
			NotifySubscribersAtStart: n.AtStart, NotifySubscribersAtEnd: n.AtEnd}
	}
	return r, nil
}

// ListIncidents returns one page of a page's incidents (scheduled maintenance included),
// newest first; search matches the title.
func (s *Store) ListIncidents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.IncidentSummary, int64, error) {
	if err := pageExists(ctx, s.pool, orgID, pageID); err != nil {
		return nil, 0, translate(err)
	}
	where := `i.org_id = $1 AND i.status_page_id = $2 AND ($3 = '' OR strpos(lower(i.title), lower($3)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_page_incidents i WHERE `+where, orgID, pageID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+incidentColumns+`WHERE `+where+`
		ORDER BY coalesce(i.started, i.start_date, i.created_at) DESC, i.id DESC LIMIT $4 OFFSET $5`, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (incidentRow, error) { return scanIncident(r) })
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]statuspage.IncidentSummary, len(got))
	for i, r := range got {
		out[i] = r.IncidentSummary
	}
	return out, total, nil
}

func getIncidentRow(ctx context.Context, q spQuerier, orgID, pageID, id uuid.UUID) (incidentRow, error) {
	return scanIncident(q.QueryRow(ctx, `SELECT `+incidentColumns+`WHERE i.org_id = $1 AND i.status_page_id = $2 AND i.id = $3`, orgID, pageID, id))
}

// incidentComponents lists the components an incident affects.
func incidentComponents(ctx context.Context, q spQuerier, orgID, incidentID uuid.UUID) ([]statuspage.Ref, error) {
	rows, err := q.Query(ctx, `SELECT c.id::text, c.name FROM status_page_incident_components ic
		JOIN status_page_components c ON c.id = ic.component_id
		WHERE ic.org_id = $1 AND ic.incident_id = $2 ORDER BY c.created_at, c.id`, orgID, incidentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[statuspage.Ref])
}

const updateColumns = `u.id, u.incident_id, u.status, u.description, u.date_happened, u.created_at, u.updated_at`

// incidentUpdates returns updates of an incident matching extra (with args from $3), newest
// date_happened first, with their component changes.
func incidentUpdates(ctx context.Context, q spQuerier, orgID, incidentID uuid.UUID, extra string, args ...any) ([]statuspage.IncidentUpdate, error) {
	rows, err := q.Query(ctx, `SELECT `+updateColumns+` FROM status_page_incident_updates u
		WHERE u.org_id = $1 AND u.incident_id = $2 `+extra, append([]any{orgID, incidentID}, args...)...)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.IncidentUpdate, error) {
		var u statuspage.IncidentUpdate
		var id, inc uuid.UUID
		var happened, created, updated time.Time
		err := r.Scan(&id, &inc, &u.Status, &u.Description, &happened, &created, &updated)
		u.ID, u.IncidentID, u.DateHappened, u.CreatedAt, u.UpdatedAt = id.String(), inc.String(), spTime(happened), spTime(created), spTime(updated)
		u.Components = []statuspage.StatusChange{}
		ids = append(ids, id)
		return u, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	rows, err = q.Query(ctx, `SELECT uc.update_id::text, c.id::text, c.name, uc.old_status, uc.new_status
		FROM status_page_update_components uc JOIN status_page_components c ON c.id = uc.component_id
		WHERE uc.org_id = $1 AND uc.update_id = ANY($2) ORDER BY c.created_at, c.id`, orgID, ids)
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for i, u := range out {
		at[u.ID] = i
	}
	var upd string
	var ch statuspage.StatusChange
	_, err = pgx.ForEachRow(rows, []any{&upd, &ch.ID, &ch.Name, &ch.OldStatus, &ch.NewStatus}, func() error {
		i := at[upd]
		out[i].Components = append(out[i].Components, ch)
		return nil
	})
	return out, err
}

const updateOrder = ` ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC`

// loadIncident reads a full incident.
func loadIncident(ctx context.Context, q spQuerier, orgID, pageID, id uuid.UUID) (statuspage.Incident, error) {
	r, err := getIncidentRow(ctx, q, orgID, pageID, id)
	if err != nil {
		return statuspage.Incident{}, err
	}
	inc := statuspage.Incident{IncidentSummary: r.IncidentSummary}
	if inc.Components, err = incidentComponents(ctx, q, orgID, id); err != nil {
		return inc, err
	}
	if inc.Updates, err = incidentUpdates(ctx, q, orgID, id, updateOrder); err != nil {
		return inc, err
	}
	return inc, nil
}

// GetIncident returns a full incident (a scheduled maintenance is an incident too).
func (s *Store) GetIncident(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.Incident, error) {
	inc, err := loadIncident(ctx, s.pool, orgID, pageID, id)
	return inc, translate(err)
}

// addUpdate appends an update to an incident, applying and recording its component changes,
// and returns its id. Components must be on the incident's page.
func addUpdate(ctx context.Context, tx pgx.Tx, orgID, pageID, incidentID uuid.UUID, status, description string,
	happened time.Time, notify bool, changes []ComponentChange, field string, now time.Time) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	if _, err := tx.Exec(ctx, `INSERT INTO status_page_incident_updates (id, org_id, incident_id, status, description,
			date_happened, notify_subscribers, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		id, orgID, incidentID, status, description, happened, notify, now); err != nil {
		return id, err
	}
	for i, ch := range changes {
		var old string
		err := tx.QueryRow(ctx, `SELECT status FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND id = $3 FOR UPDATE`,
			orgID, pageID, ch.ID).Scan(&old)
		if err == pgx.ErrNoRows {
			return id, spValidation(fmt.Sprintf("%s[%d].id", field, i), "no such component on this status page")
		}
		if err != nil {
			return id, err
		}
		if err := changeComponent(ctx, tx, orgID, id, ch.ID, &old, ch.Status, now); err != nil {
			return id, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_incident_components (org_id, incident_id, component_id)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, orgID, incidentID, ch.ID); err != nil {
			return id, err
		}
	}
	return id, nil
}

// changeComponent sets a component's status and records the change on an update.
func changeComponent(ctx context.Context, tx pgx.Tx, orgID, updateID, componentID uuid.UUID, old *string, next string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE status_page_components SET status = $3, updated_at = $4 WHERE org_id = $1 AND id = $2`,
		orgID, componentID, next, now); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO status_page_update_components (org_id, update_id, component_id, old_status, new_status)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (update_id, component_id) DO UPDATE SET new_status = EXCLUDED.new_status`,
		orgID, updateID, componentID, old, next)
	return err
}

// refreshIncident keeps ended in step with the latest update (set by RESOLVED or COMPLETED,
// cleared by a later non-final status) and touches updated_at.
func refreshIncident(ctx context.Context, tx pgx.Tx, orgID, incidentID uuid.UUID, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE status_page_incidents i SET updated_at = $3,
			ended = (SELECT CASE WHEN u.status IN ('RESOLVED', 'COMPLETED') THEN u.date_happened END
				FROM status_page_incident_updates u WHERE u.incident_id = i.id
				ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC LIMIT 1)
		WHERE i.org_id = $1 AND i.id = $2`, orgID, incidentID, now)
	return err
}

// writeIncidentEvent queues a status page incident event with the full incident in the outbox.
func writeIncidentEvent(ctx context.Context, tx pgx.Tx, orgID, pageID, incidentID uuid.UUID, event string, now time.Time) error {
	var pageName string
	if err := tx.QueryRow(ctx, `SELECT name FROM status_pages WHERE org_id = $1 AND id = $2`, orgID, pageID).Scan(&pageName); err != nil {
		return err
	}
	inc, err := loadIncident(ctx, tx, orgID, pageID, incidentID)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(statuspage.Event{Event: event, OccurredAt: spTime(now),
		StatusPage: statuspage.Ref{ID: pageID.String(), Name: pageName}, Incident: inc})
	if err != nil {
		return fmt.Errorf("encode %s: %w", event, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO outbox (id, org_id, event_type, incident_id, status_page_id, alert_priority, payload,
			created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'LOW', $6, $7, $7)`,
		uuid.Must(uuid.NewV7()), orgID, event, incidentID, pageID, payload, now)
	if err != nil {
		return fmt.Errorf("queue %s: %w", event, err)
	}
	return nil
}

// NewIncident is the input of CreateIncident.
type NewIncident struct {
	Title             string
	Description       string
	Status            string
	Components        []ComponentChange
	NotifySubscribers bool
}

// CreateIncident opens an incident with its first update (status, description and component
// changes), derives its impact from the statuses it sets, queues
// status_page.incident.started and audits it.
func (s *Store) CreateIncident(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, in NewIncident) (statuspage.Incident, error) {
	var inc statuspage.Incident
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		statuses := make([]string, len(in.Components))
		for i, c := range in.Components {
			statuses[i] = c.Status
		}
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_incidents (id, org_id, status_page_id, title, impact, started, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $6)`, id, orgID, pageID, in.Title, statuspage.ImpactOf(statuses), now); err != nil {
			return err
		}
		upd, err := addUpdate(ctx, tx, orgID, pageID, id, in.Status, in.Description, now, in.NotifySubscribers, in.Components, "components", now)
		if err != nil {
			return err
		}
		if err := refreshIncident(ctx, tx, orgID, id, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentStarted, now); err != nil {
			return err
		}
		if in.NotifySubscribers {
			if err := queueSubscriberNotification(ctx, tx, orgID, pageID, id, upd, NotifyIncidentCreated, now); err != nil {
				return err
			}
		}
		if inc, err = loadIncident(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageIncident",
			AuditableID: inc.ID, AuditableDisplayName: inc.Title,
			Metadata: map[string]any{"status_page_id": pageID.String(), "status": in.Status, "impact": inc.Impact}})
	})
	return inc, err
}

// UpdateIncident sets an incident's title and impact, queues status_page.incident.updated and
// audits it.
func (s *Store) UpdateIncident(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID, title, impact string) (statuspage.Incident, error) {
	var inc statuspage.Incident
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		tag, err := tx.Exec(ctx, `UPDATE status_page_incidents SET title = $4, impact = $5, updated_at = $6
			WHERE org_id = $1 AND status_page_id = $2 AND id = $3`, orgID, pageID, id, title, impact, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentUpdated, now); err != nil {
			return err
		}
		if inc, err = loadIncident(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPageIncident",
			AuditableID: inc.ID, AuditableDisplayName: inc.Title, Metadata: map[string]any{"status_page_id": pageID.String(), "impact": impact}})
	})
	return inc, err
}

// DeleteIncident deletes an incident (or a scheduled maintenance) with its timeline, and
// audits it. Deleting a maintenance in progress restores its components first.
func (s *Store) DeleteIncident(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID, maintenanceOnly bool) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var title string
		var state *string
		if err := tx.QueryRow(ctx, `SELECT title, maintenance_state FROM status_page_incidents
			WHERE org_id = $1 AND status_page_id = $2 AND id = $3 FOR UPDATE`, orgID, pageID, id).Scan(&title, &state); err != nil {
			return err
		}
		if maintenanceOnly && state == nil {
			return ErrNotFound
		}
		if state != nil && *state == statuspage.InProgress {
			if err := restoreComponents(ctx, tx, orgID, id, nil, s.now()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM status_page_incidents WHERE org_id = $1 AND id = $2`, orgID, id); err != nil {
			return err
		}
		typ := "StatusPageIncident"
		if state != nil {
			typ = "StatusPageScheduledMaintenance"
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: typ,
			AuditableID: id.String(), AuditableDisplayName: title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

// restoreComponents sets a maintenance's components back to the status they had when it
// started (those still in MAINTENANCE and not held by another maintenance in progress),
// recording the changes on updateID when it is not nil.
func restoreComponents(ctx context.Context, tx pgx.Tx, orgID, incidentID uuid.UUID, updateID *uuid.UUID, now time.Time) error {
	rows, err := tx.Query(ctx, `SELECT ic.component_id, ic.restore_status FROM status_page_incident_components ic
		JOIN status_page_components c ON c.id = ic.component_id
		WHERE ic.org_id = $1 AND ic.incident_id = $2 AND ic.restore_status IS NOT NULL AND c.status = 'MAINTENANCE'
			AND NOT EXISTS (SELECT 1 FROM status_page_incident_components o JOIN status_page_incidents oi ON oi.id = o.incident_id
				WHERE o.component_id = ic.component_id AND o.incident_id <> ic.incident_id AND oi.maintenance_state = 'IN_PROGRESS')
		ORDER BY ic.component_id`, orgID, incidentID)
	if err != nil {
		return err
	}
	type restore struct {
		ID     uuid.UUID
		Status string
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[restore])
	if err != nil {
		return err
	}
	old := statuspage.Maintenance
	for _, r := range list {
		if updateID == nil {
			if _, err := tx.Exec(ctx, `UPDATE status_page_components SET status = $3, updated_at = $4 WHERE org_id = $1 AND id = $2`,
				orgID, r.ID, r.Status, now); err != nil {
				return err
			}
			continue
		}
		if err := changeComponent(ctx, tx, orgID, *updateID, r.ID, &old, r.Status, now); err != nil {
			return err
		}
	}
	return nil
}
