package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// ErrMaintenanceStarted: a scheduled maintenance that has started can no longer be changed.
var ErrMaintenanceStarted = &ValidationError{Field: "start_date", Message: "the maintenance has already started and can no longer be changed"}

// NewMaintenance is the input of CreateMaintenance.
type NewMaintenance struct {
	Title           string
	Description     string
	StartDate       time.Time
	DurationMinutes int
	ComponentIDs    []uuid.UUID
	Notifications   statuspage.Notifications
}

// MaintenancePatch changes a maintenance that has not started; nil fields stay.
type MaintenancePatch struct {
	Title           *string
	StartDate       *time.Time
	DurationMinutes *int
}

func loadMaintenance(ctx context.Context, q spQuerier, orgID, pageID, id uuid.UUID) (statuspage.ScheduledMaintenance, error) {
	r, err := getIncidentRow(ctx, q, orgID, pageID, id)
	if err != nil {
		return statuspage.ScheduledMaintenance{}, err
	}
	return maintenanceOf(ctx, q, orgID, r)
}

func maintenanceOf(ctx context.Context, q spQuerier, orgID uuid.UUID, r incidentRow) (statuspage.ScheduledMaintenance, error) {
	if r.state == nil {
		return statuspage.ScheduledMaintenance{}, ErrNotFound
	}
	m := statuspage.ScheduledMaintenance{IncidentBase: r.IncidentBase, StartDate: r.ScheduledMaintenance.StartDate,
		DurationMinutes: r.ScheduledMaintenance.DurationMinutes, Notifications: r.notifications, State: *r.state}
	var err error
	m.Components, err = incidentComponents(ctx, q, orgID, r.id)
	return m, err
}

// GetMaintenance returns a scheduled maintenance of the page.
func (s *Store) GetMaintenance(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.ScheduledMaintenance, error) {
	m, err := loadMaintenance(ctx, s.pool, orgID, pageID, id)
	return m, translate(err)
}

// CreateMaintenance schedules a maintenance: an incident with impact MAINTENANCE and a first
// SCHEDULED update, affecting the given components (which must be on the page). It queues
// status_page.incident.started and is audited. The Runner moves it on from there.
func (s *Store) CreateMaintenance(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, in NewMaintenance) (statuspage.ScheduledMaintenance, error) {
	var m statuspage.ScheduledMaintenance
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND id = ANY($3)`,
			orgID, pageID, in.ComponentIDs).Scan(&n); err != nil {
			return err
		}
		if n != len(in.ComponentIDs) {
			return spValidation("components_affected", "every id must be a component of this status page")
		}
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		n2 := in.Notifications
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_incidents (id, org_id, status_page_id, title, impact, created_at, updated_at,
				maintenance_state, start_date, duration_minutes, notify_an_hour_before, notify_at_start, notify_at_end)
			VALUES ($1, $2, $3, $4, 'MAINTENANCE', $5, $5, 'SCHEDULED', $6, $7, $8, $9, $10)`,
			id, orgID, pageID, in.Title, now, in.StartDate, in.DurationMinutes, n2.AnHourBefore, n2.AtStart, n2.AtEnd); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_incident_components (org_id, incident_id, component_id)
			SELECT $1, $2, unnest($3::uuid[])`, orgID, id, in.ComponentIDs); err != nil {
			return err
		}
		// The announcement is dated now, or at the start when the maintenance is back-dated, so
		// that the lifecycle's updates always come after it on the timeline.
		announced := now
		if in.StartDate.Before(now) {
			announced = in.StartDate
		}
		if _, err := addUpdate(ctx, tx, orgID, pageID, id, statuspage.Scheduled, in.Description, announced, true, nil, "", now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentStarted, now); err != nil {
			return err
		}
		var err error
		if m, err = loadMaintenance(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: m.ID, AuditableDisplayName: m.Title, Metadata: map[string]any{"status_page_id": pageID.String(),
				"start_date": in.StartDate.UTC().Format(statuspage.TimeLayout), "duration_minutes": in.DurationMinutes}})
	})
	return m, err
}

// UpdateMaintenance changes a maintenance that is still SCHEDULED (ErrMaintenanceStarted
// otherwise), queues status_page.incident.updated and audits it.
func (s *Store) UpdateMaintenance(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID, p MaintenancePatch) (statuspage.ScheduledMaintenance, error) {
	var m statuspage.ScheduledMaintenance
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var state *string
		if err := tx.QueryRow(ctx, `SELECT maintenance_state FROM status_page_incidents WHERE org_id = $1 AND status_page_id = $2 AND id = $3 FOR UPDATE`,
			orgID, pageID, id).Scan(&state); err != nil {
			return err
		}
		if state == nil {
			return ErrNotFound
		}
		if *state != statuspage.Scheduled {
			return ErrMaintenanceStarted
		}
		now := s.now()
		// A new start date re-arms the notice an hour before it (reminded_at, subscriber_mail.go).
		if _, err := tx.Exec(ctx, `UPDATE status_page_incidents SET title = coalesce($3, title), start_date = coalesce($4, start_date),
				duration_minutes = coalesce($5, duration_minutes), updated_at = $6,
				reminded_at = CASE WHEN $4::timestamptz IS DISTINCT FROM NULL AND $4::timestamptz <> start_date THEN NULL ELSE reminded_at END
			WHERE org_id = $1 AND id = $2`,
			orgID, id, p.Title, p.StartDate, p.DurationMinutes, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentUpdated, now); err != nil {
			return err
		}
		var err error
		if m, err = loadMaintenance(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: m.ID, AuditableDisplayName: m.Title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return m, err
}

// AdvanceMaintenance runs the scheduled-maintenance lifecycle as of now (supplement §2.10):
//
//	SCHEDULED   → IN_PROGRESS at start_date: an IN_PROGRESS update, started set, the affected
//	              components set to MAINTENANCE (their status kept to restore), .updated queued
//	IN_PROGRESS → COMPLETED at start_date + duration_minutes: a COMPLETED update, ended set,
//	              the components restored, .resolved queued
//
// A maintenance whose whole window passed while nothing ran goes through both steps at once.
// Subscribers are e-mailed per the maintenance's notifications flags (subscriber_mail.go),
// including the notice an hour before the start.
// Each maintenance moves in its own transaction with its row locked (SKIP LOCKED), so several
// replicas may run this together. Changes are audited as the system's.
func (s *Store) AdvanceMaintenance(ctx context.Context, now time.Time) error {
	if err := s.remindUpcomingMaintenance(ctx, now); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, `SELECT org_id, status_page_id, id FROM status_page_incidents
		WHERE (maintenance_state = 'SCHEDULED' AND start_date <= $1)
		   OR (maintenance_state = 'IN_PROGRESS' AND start_date + duration_minutes * interval '1 minute' <= $1)
		ORDER BY start_date, id LIMIT 500`, now)
	if err != nil {
		return translate(err)
	}
	type due struct{ Org, Page, ID uuid.UUID }
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[due])
	if err != nil {
		return translate(err)
	}
	for _, d := range list {
		if err := s.inTx(ctx, func(tx pgx.Tx) error { return advanceOne(ctx, tx, d.Org, d.Page, d.ID, now) }); err != nil {
			return fmt.Errorf("advance maintenance %s: %w", d.ID, err)
		}
	}
	return nil
}

func advanceOne(ctx context.Context, tx pgx.Tx, orgID, pageID, id uuid.UUID, now time.Time) error {
	var state, title string
	var start time.Time
	var duration int
	err := tx.QueryRow(ctx, `SELECT maintenance_state, title, start_date, duration_minutes FROM status_page_incidents
		WHERE org_id = $1 AND id = $2 FOR UPDATE SKIP LOCKED`, orgID, id).Scan(&state, &title, &start, &duration)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // another replica has it, or it was deleted
	}
	if err != nil {
		return err
	}
	end := start.Add(time.Duration(duration) * time.Minute)
	// A lifecycle update is dated at its step's time, but never before the latest update on the
	// timeline (a start moved into the past, a hand-written update), so that it becomes the
	// latest update and ended follows it.
	var latest time.Time
	var maxHappened *time.Time
	if err := tx.QueryRow(ctx, `SELECT max(date_happened) FROM status_page_incident_updates
		WHERE org_id = $1 AND incident_id = $2`, orgID, id).Scan(&maxHappened); err != nil {
		return err
	}
	if maxHappened != nil {
		latest = *maxHappened
	}
	at := func(t time.Time) time.Time {
		if t.Before(latest) {
			return latest
		}
		return t
	}
	audit := func(action string) error {
		return writeAudit(ctx, tx, orgID, SystemActor, AuditEvent{Action: action, AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: id.String(), AuditableDisplayName: title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	}
	if state == statuspage.Scheduled && !start.After(now) {
		upd, err := addUpdate(ctx, tx, orgID, pageID, id, statuspage.InProgress, "Scheduled maintenance is in progress.", at(start), true, nil, "", now)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE status_page_incident_components ic SET restore_status = c.status
			FROM status_page_components c WHERE c.id = ic.component_id AND ic.org_id = $1 AND ic.incident_id = $2`, orgID, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT c.id, c.status FROM status_page_incident_components ic
			JOIN status_page_components c ON c.id = ic.component_id WHERE ic.org_id = $1 AND ic.incident_id = $2 ORDER BY c.id FOR UPDATE OF c`, orgID, id)
		if err != nil {
			return err
		}
		type comp struct {
			ID     uuid.UUID
			Status string
		}
		comps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[comp])
		if err != nil {
			return err
		}
		for _, c := range comps {
			old := c.Status
			if err := changeComponent(ctx, tx, orgID, upd, c.ID, &old, statuspage.Maintenance, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE status_page_incidents SET maintenance_state = 'IN_PROGRESS', started = $3, updated_at = $4
			WHERE org_id = $1 AND id = $2`, orgID, id, start, now); err != nil {
			return err
		}
		if err := refreshIncident(ctx, tx, orgID, id, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentUpdated, now); err != nil {
			return err
		}
		if err := queueMaintenanceNotification(ctx, tx, orgID, pageID, id, upd, NotifyMaintenanceStarted, now); err != nil {
			return err
		}
		if err := audit("started"); err != nil {
			return err
		}
		state, latest = statuspage.InProgress, at(start)
	}
	if state == statuspage.InProgress && !end.After(now) {
		upd, err := addUpdate(ctx, tx, orgID, pageID, id, statuspage.Completed, "Scheduled maintenance is completed.", at(end), true, nil, "", now)
		if err != nil {
			return err
		}
		if err := restoreComponents(ctx, tx, orgID, id, &upd, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE status_page_incidents SET maintenance_state = 'COMPLETED', updated_at = $3
			WHERE org_id = $1 AND id = $2`, orgID, id, now); err != nil {
			return err
		}
		if err := refreshIncident(ctx, tx, orgID, id, now); err != nil {
			return err
		}
		if err := writeIncidentEvent(ctx, tx, orgID, pageID, id, statuspage.EventIncidentResolved, now); err != nil {
			return err
		}
		if err := queueMaintenanceNotification(ctx, tx, orgID, pageID, id, upd, NotifyMaintenanceCompleted, now); err != nil {
			return err
		}
		return audit("completed")
	}
	return nil
}

// GetStatusPageSummary assembles the public summary of the page served at subdomain. Private
// pages (password or IP restriction) are ErrNotFound, like pages that do not exist.
func (s *Store) GetStatusPageSummary(ctx context.Context, subdomain string) (statuspage.Summary, error) {
	orgID, page, err := s.GetStatusPageBySubdomain(ctx, subdomain)
	if err != nil {
		return statuspage.Summary{}, err
	}
	if page.Private {
		return statuspage.Summary{}, ErrNotFound
	}
	pageID := uuid.MustParse(page.ID)
	comps, err := pageComponents(ctx, s.pool, orgID, pageID)
	if err != nil {
		return statuspage.Summary{}, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+incidentColumns+`WHERE i.org_id = $1 AND i.status_page_id = $2
		AND ((i.maintenance_state IS NULL AND i.ended IS NULL) OR i.maintenance_state IN ('SCHEDULED', 'IN_PROGRESS'))
		ORDER BY coalesce(i.start_date, i.started, i.created_at), i.id`, orgID, pageID)
	if err != nil {
		return statuspage.Summary{}, translate(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (incidentRow, error) { return scanIncident(r) })
	if err != nil {
		return statuspage.Summary{}, translate(err)
	}
	var active []statuspage.IncidentBase
	var maint []statuspage.ScheduledMaintenance
	for _, r := range got {
		if r.state == nil {
			active = append(active, r.IncidentBase)
			continue
		}
		m, err := maintenanceOf(ctx, s.pool, orgID, r)
		if err != nil {
			return statuspage.Summary{}, translate(err)
		}
		maint = append(maint, m)
	}
	return statuspage.BuildSummary(page, comps, active, maint), nil
}
