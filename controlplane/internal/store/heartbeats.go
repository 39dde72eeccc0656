package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/pkg/check"
)

// Heartbeat is a stored heartbeat: configuration, the last pings, and the monitor's state.
type Heartbeat struct {
	ID                           uuid.UUID
	OrgID                        uuid.UUID
	ProjectID                    *uuid.UUID // nil: Unassigned
	Name                         string
	State                        string // PENDING, UP or DOWN (the monitor's own state)
	StateChangedAt               *time.Time
	Paused                       bool
	Muted                        bool
	ReportPeriod                 *int    // seconds; set exactly when ReportPeriodCron is not
	ReportPeriodCron             *string // cron expression, read in Timezone (UTC when nil)
	Timezone                     *string
	GracePeriod                  int // seconds
	AlertPriority                string
	ReminderAlertIntervalMinutes *int
	Alerts                       check.Alerts

	LastSeen       *time.Time // last ping of any kind
	LastSuccessAt  *time.Time
	RunStartedAt   *time.Time
	FailedAt       *time.Time
	LastDurationMs *int64
	DownAlerted    bool
	LastAlertAt    *time.Time

	// InMaintenance is whether an active maintenance window lists the heartbeat, at the time of
	// the read (set by the reads that say so).
	InMaintenance bool

	CreatedAt time.Time
	UpdatedAt time.Time
}

const heartbeatColumns = `id, org_id, project_id, name, state, state_changed_at, paused, muted, report_period,
	report_period_cron, timezone, grace_period, alert_priority, reminder_alert_interval_minutes, alerts,
	last_seen, last_success_at, run_started_at, failed_at, last_duration_ms, down_alerted, last_alert_at,
	created_at, updated_at`

func scanHeartbeat(row pgx.Row) (Heartbeat, error) {
	var h Heartbeat
	var alerts []byte
	err := row.Scan(&h.ID, &h.OrgID, &h.ProjectID, &h.Name, &h.State, &h.StateChangedAt, &h.Paused, &h.Muted,
		&h.ReportPeriod, &h.ReportPeriodCron, &h.Timezone, &h.GracePeriod, &h.AlertPriority,
		&h.ReminderAlertIntervalMinutes, &alerts, &h.LastSeen, &h.LastSuccessAt, &h.RunStartedAt, &h.FailedAt,
		&h.LastDurationMs, &h.DownAlerted, &h.LastAlertAt, &h.CreatedAt, &h.UpdatedAt)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(alerts, &h.Alerts); err != nil {
		return h, fmt.Errorf("heartbeat %s: decode alerts: %w", h.ID, err)
	}
	h.Alerts.Normalize()
	return h, nil
}

func alertsJSON(a check.Alerts) (string, error) {
	a.Normalize()
	b, err := json.Marshal(a)
	return string(b), err
}

// CreateHeartbeat stores a new PENDING heartbeat in h.ProjectID (nil: Unassigned) and audits
// it. A project the organization does not have is ErrProjectNotFound.
func (s *Store) CreateHeartbeat(ctx context.Context, actor Actor, orgID uuid.UUID, h Heartbeat) (Heartbeat, error) {
	now := s.now()
	h.ID, h.OrgID, h.State, h.CreatedAt, h.UpdatedAt = uuid.Must(uuid.NewV7()), orgID, "PENDING", now, now
	alerts, err := alertsJSON(h.Alerts)
	if err != nil {
		return h, err
	}
	var out Heartbeat
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockProjectForReference(ctx, tx, orgID, h.ProjectID); err != nil {
			return err
		}
		var err error
		out, err = scanHeartbeat(tx.QueryRow(ctx, `INSERT INTO heartbeats (id, org_id, project_id, name, paused, muted,
				report_period, report_period_cron, timezone, grace_period, alert_priority, reminder_alert_interval_minutes,
				alerts, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14) RETURNING `+heartbeatColumns,
			h.ID, orgID, h.ProjectID, h.Name, h.Paused, h.Muted, h.ReportPeriod, h.ReportPeriodCron, h.Timezone,
			h.GracePeriod, h.AlertPriority, h.ReminderAlertIntervalMinutes, alerts, now))
		if err != nil {
			return fmt.Errorf("insert heartbeat: %w", err)
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Heartbeat",
			AuditableID: h.ID.String(), AuditableDisplayName: h.Name})
	})
	return out, err
}

// GetHeartbeat returns one heartbeat of the organization with InMaintenance as of now
// (ErrNotFound when missing).
func (s *Store) GetHeartbeat(ctx context.Context, orgID, id uuid.UUID, now time.Time) (Heartbeat, error) {
	h, err := scanHeartbeat(s.pool.QueryRow(ctx, `SELECT `+heartbeatColumns+` FROM heartbeats WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return h, translate(err)
	}
	m, err := inMaintenance(ctx, s.pool, "heartbeats", []uuid.UUID{id}, now)
	h.InMaintenance = m[id]
	return h, translate(err)
}

// HeartbeatFilter narrows ListHeartbeats.
type HeartbeatFilter struct {
	ProjectID  *uuid.UUID // only this project's heartbeats (ErrProjectNotFound when it does not exist)
	Unassigned bool       // only heartbeats without a project
	Search     string     // case-insensitive substring of the name
}

// ListHeartbeats returns one page of the organization's heartbeats, newest first, with
// InMaintenance as of now, and the total matching f.
func (s *Store) ListHeartbeats(ctx context.Context, orgID uuid.UUID, f HeartbeatFilter, limit, offset int64, now time.Time) ([]Heartbeat, int64, error) {
	if err := s.ProjectExists(ctx, orgID, f.ProjectID); err != nil {
		return nil, 0, err
	}
	cond := `org_id = $1 AND ($2 = '' OR strpos(lower(name), lower($2)) > 0)
		AND (NOT $3 OR project_id IS NULL) AND ($4::uuid IS NULL OR project_id = $4)`
	args := []any{orgID, f.Search, f.Unassigned, f.ProjectID}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM heartbeats WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []Heartbeat{}, total, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+heartbeatColumns+` FROM heartbeats WHERE `+cond+`
		ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Heartbeat, error) { return scanHeartbeat(r) })
	if err != nil {
		return nil, 0, translate(err)
	}
	ids := make([]uuid.UUID, len(items))
	for i, h := range items {
		ids[i] = h.ID
	}
	m, err := inMaintenance(ctx, s.pool, "heartbeats", ids, now)
	if err != nil {
		return nil, 0, err
	}
	for i := range items {
		items[i].InMaintenance = m[items[i].ID]
	}
	return items, total, nil
}

// UpdateHeartbeat changes one heartbeat in one transaction: it locks the row, lets change edit a
// copy, and writes the configuration back (an error from change aborts and is returned as is).
// Resuming a paused heartbeat starts it over as PENDING, forgetting the pings from before the
// pause (last_seen stays), so that it is not DOWN the moment it resumes.
func (s *Store) UpdateHeartbeat(ctx context.Context, actor Actor, orgID, id uuid.UUID, change func(*Heartbeat) error) (Heartbeat, error) {
	var out Heartbeat
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := scanHeartbeat(tx.QueryRow(ctx, `SELECT `+heartbeatColumns+` FROM heartbeats WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id))
		if err != nil {
			return err
		}
		next := cur
		if err := change(&next); err != nil {
			return err
		}
		alerts, err := alertsJSON(next.Alerts)
		if err != nil {
			return err
		}
		resumed := cur.Paused && !next.Paused
		out, err = scanHeartbeat(tx.QueryRow(ctx, `UPDATE heartbeats SET name = $3, paused = $4, muted = $5,
				report_period = $6, report_period_cron = $7, timezone = $8, grace_period = $9, alert_priority = $10,
				reminder_alert_interval_minutes = $11, alerts = $12, updated_at = $13,
				state = CASE WHEN $14 THEN 'PENDING' ELSE state END,
				state_changed_at = CASE WHEN $14 AND state <> 'PENDING' THEN $13 ELSE state_changed_at END,
				last_success_at = CASE WHEN $14 THEN NULL ELSE last_success_at END,
				run_started_at = CASE WHEN $14 THEN NULL ELSE run_started_at END,
				failed_at = CASE WHEN $14 THEN NULL ELSE failed_at END,
				down_alerted = down_alerted AND NOT $14,
				last_alert_at = CASE WHEN $14 THEN NULL ELSE last_alert_at END
			WHERE org_id = $1 AND id = $2 RETURNING `+heartbeatColumns,
			orgID, id, next.Name, next.Paused, next.Muted, next.ReportPeriod, next.ReportPeriodCron, next.Timezone,
			next.GracePeriod, next.AlertPriority, next.ReminderAlertIntervalMinutes, alerts, s.now(), resumed))
		if err != nil {
			return fmt.Errorf("update heartbeat: %w", err)
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: next.Name})
	})
	return out, err
}

// DeleteHeartbeat deletes one heartbeat (its window associations go with it) and audits it.
func (s *Store) DeleteHeartbeat(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM heartbeats WHERE org_id = $1 AND id = $2 RETURNING name`, orgID, id).Scan(&name); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
}

// MoveHeartbeat moves a heartbeat to the project dest, or to Unassigned when dest is nil, and
// audits it. Its id (and so its ping URL), pings and state stay. A missing heartbeat is
// ErrNotFound, a missing destination ErrProjectNotFound; a move to where it already is changes
// nothing, timestamps included. Heartbeats use no variables, so there is no conflict.
func (s *Store) MoveHeartbeat(ctx context.Context, actor Actor, orgID, id uuid.UUID, dest *uuid.UUID) (MoveResult, error) {
	res := MoveResult{ID: id, ProjectID: dest}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var source *uuid.UUID
		var name string
		if err := tx.QueryRow(ctx, `SELECT project_id, name FROM heartbeats WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, id).
			Scan(&source, &name); err != nil {
			return err
		}
		if err := lockProjectForReference(ctx, tx, orgID, dest); err != nil {
			return err
		}
		if sameScope(source, dest) {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE heartbeats SET project_id = $3, updated_at = $4 WHERE org_id = $1 AND id = $2`,
			orgID, id, dest, s.now()); err != nil {
			return fmt.Errorf("move heartbeat: %w", err)
		}
		res.Moved = true
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "moved", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: name,
			Metadata: map[string]any{"from_project_id": uuidOrNil(source), "to_project_id": uuidOrNil(dest)}})
	})
	return res, err
}

// PingKind is what a ping reports.
type PingKind string

// Ping kinds: GET|POST /{id}, /{id}/start, /{id}/fail.
const (
	PingSuccess PingKind = "success"
	PingStart   PingKind = "start"
	PingFail    PingKind = "fail"
)

// RecordPing records one ping of a heartbeat at at, in a single UPDATE, and reports whether a
// heartbeat took it (unknown and paused heartbeats do not). It needs no organization: the id is
// the credential of the public ping endpoint.
//
// A success or fail ping completes the run a start ping began (its duration is recorded). A
// success ping of a PENDING heartbeat makes it UP here (nothing to alert); every other
// transition — DOWN on a missed deadline or a fail ping, UP after DOWN, with their alerts — is
// the monitor's, which reads these columns under a row lock.
func (s *Store) RecordPing(ctx context.Context, id uuid.UUID, kind PingKind, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE heartbeats SET
			last_seen = $3,
			last_success_at = CASE WHEN $2 = 'success' THEN $3 ELSE last_success_at END,
			failed_at = CASE WHEN $2 = 'fail' THEN $3 WHEN $2 = 'success' THEN NULL ELSE failed_at END,
			run_started_at = CASE WHEN $2 = 'start' THEN $3 ELSE NULL END,
			last_duration_ms = CASE WHEN $2 <> 'start' AND run_started_at IS NOT NULL
				THEN GREATEST(0, (extract(epoch FROM $3 - run_started_at) * 1000)::bigint) ELSE last_duration_ms END,
			state = CASE WHEN $2 = 'success' AND state = 'PENDING' THEN 'UP' ELSE state END,
			state_changed_at = CASE WHEN $2 = 'success' AND state = 'PENDING' THEN $3 ELSE state_changed_at END
		WHERE id = $1 AND NOT paused`, id, string(kind), at)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

// HeartbeatState is the monitor's write-back of one heartbeat.
type HeartbeatState struct {
	ID             uuid.UUID
	State          string
	StateChangedAt *time.Time
	DownAlerted    bool
	LastAlertAt    *time.Time
}

// HeartbeatTx is what the monitor may do inside its transaction to the heartbeats it was
// handed locked.
type HeartbeatTx struct {
	tx pgx.Tx
}

// SaveState writes the monitor's state of one locked heartbeat.
func (h *HeartbeatTx) SaveState(ctx context.Context, orgID uuid.UUID, st HeartbeatState) error {
	_, err := h.tx.Exec(ctx, `UPDATE heartbeats SET state = $3, state_changed_at = $4, down_alerted = $5, last_alert_at = $6
		WHERE org_id = $1 AND id = $2`, orgID, st.ID, st.State, st.StateChangedAt, st.DownAlerted, st.LastAlertAt)
	if err != nil {
		return fmt.Errorf("save heartbeat %s state: %w", st.ID, err)
	}
	return nil
}

// InsertOutbox queues alerts about heartbeats (outbox.check_id holds the heartbeat id).
func (h *HeartbeatTx) InsertOutbox(ctx context.Context, events []OutboxEvent) error {
	return (&PipelineTx{tx: h.tx}).InsertOutbox(ctx, events)
}

// SweepHeartbeats runs fn over the monitored heartbeats (not paused, and pinged at least once or
// not PENDING) with id after afterID, at most limit of them in id order, locked FOR UPDATE SKIP
// LOCKED in one transaction (rows another replica's sweep holds are skipped), each with
// InMaintenance as of now. It returns the last id handed to fn and how many were, so a caller
// pages through with afterID; fewer than limit means the sweep is complete.
func (s *Store) SweepHeartbeats(ctx context.Context, afterID uuid.UUID, limit int, now time.Time,
	fn func(ctx context.Context, tx *HeartbeatTx, hbs []Heartbeat) error) (last uuid.UUID, n int, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+heartbeatColumns+` FROM heartbeats
			WHERE NOT paused AND (last_seen IS NOT NULL OR state <> 'PENDING') AND id > $1
			ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`, afterID, limit)
		if err != nil {
			return fmt.Errorf("lock heartbeats: %w", err)
		}
		hbs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Heartbeat, error) { return scanHeartbeat(r) })
		if err != nil {
			return fmt.Errorf("lock heartbeats: %w", err)
		}
		n = len(hbs)
		if n == 0 {
			return nil
		}
		last = hbs[n-1].ID
		ids := make([]uuid.UUID, n)
		for i, h := range hbs {
			ids[i] = h.ID
		}
		m, err := inMaintenance(ctx, tx, "heartbeats", ids, now)
		if err != nil {
			return err
		}
		for i := range hbs {
			hbs[i].InMaintenance = m[hbs[i].ID]
		}
		return fn(ctx, &HeartbeatTx{tx: tx}, hbs)
	})
	return last, n, err
}
