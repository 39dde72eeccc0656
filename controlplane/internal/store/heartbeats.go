package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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

func heartbeatOf(r dbsqlc.Heartbeat) (Heartbeat, error) {
	h := Heartbeat{ID: r.ID, OrgID: r.OrgID, ProjectID: r.ProjectID, Name: r.Name, State: r.State, StateChangedAt: r.StateChangedAt,
		Paused: r.Paused, Muted: r.Muted, ReportPeriod: intPtr(r.ReportPeriod), ReportPeriodCron: r.ReportPeriodCron,
		Timezone: r.Timezone, GracePeriod: int(r.GracePeriod), AlertPriority: r.AlertPriority,
		ReminderAlertIntervalMinutes: intPtr(r.ReminderAlertIntervalMinutes), LastSeen: r.LastSeen, LastSuccessAt: r.LastSuccessAt,
		RunStartedAt: r.RunStartedAt, FailedAt: r.FailedAt, LastDurationMs: r.LastDurationMs, DownAlerted: r.DownAlerted,
		LastAlertAt: r.LastAlertAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if err := json.Unmarshal(r.Alerts, &h.Alerts); err != nil {
		return h, fmt.Errorf("heartbeat %s: decode alerts: %w", h.ID, err)
	}
	h.Alerts.Normalize()
	return h, nil
}

func heartbeatsOf(rows []dbsqlc.Heartbeat) ([]Heartbeat, error) {
	out := make([]Heartbeat, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = heartbeatOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func alertsJSON(a check.Alerts) ([]byte, error) {
	a.Normalize()
	return json.Marshal(a)
}

// CreateHeartbeat stores a new PENDING heartbeat in h.ProjectID (nil: Unassigned) and audits
// it. A project the organization does not have is ErrProjectNotFound.
func (s *Store) CreateHeartbeat(ctx context.Context, actor Actor, orgID uuid.UUID, h Heartbeat) (Heartbeat, error) {
	alerts, err := alertsJSON(h.Alerts)
	if err != nil {
		return h, err
	}
	id := uuid.Must(uuid.NewV7())
	var out Heartbeat
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockProjectForReference(ctx, tx, orgID, h.ProjectID); err != nil {
			return err
		}
		if err := checkAlertIntegrations(ctx, s.q.WithTx(tx), orgID, h.Alerts, check.Alerts{}); err != nil {
			return err
		}
		r, err := s.q.WithTx(tx).CreateHeartbeat(ctx, dbsqlc.CreateHeartbeatParams{ID: id, OrgID: orgID, ProjectID: h.ProjectID,
			Name: h.Name, Paused: h.Paused, Muted: h.Muted, ReportPeriod: int32Ptr(h.ReportPeriod), ReportPeriodCron: h.ReportPeriodCron,
			Timezone: h.Timezone, GracePeriod: int32(h.GracePeriod), AlertPriority: h.AlertPriority,
			ReminderAlertIntervalMinutes: int32Ptr(h.ReminderAlertIntervalMinutes), Alerts: alerts, Now: s.now()})
		if err != nil {
			return fmt.Errorf("insert heartbeat: %w", err)
		}
		if out, err = heartbeatOf(r); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: h.Name})
	})
	return out, err
}

// GetHeartbeat returns one heartbeat of the organization with InMaintenance as of now
// (ErrNotFound when missing).
func (s *Store) GetHeartbeat(ctx context.Context, orgID, id uuid.UUID, now time.Time) (Heartbeat, error) {
	r, err := s.q.GetHeartbeat(ctx, dbsqlc.GetHeartbeatParams{OrgID: orgID, ID: id})
	if err != nil {
		return Heartbeat{}, translate(err)
	}
	h, err := heartbeatOf(r)
	if err != nil {
		return h, err
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
	total, err := s.q.CountHeartbeats(ctx, dbsqlc.CountHeartbeatsParams{OrgID: orgID, Search: f.Search, Unassigned: f.Unassigned,
		ProjectID: f.ProjectID})
	if err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []Heartbeat{}, total, nil
	}
	rows, err := s.q.ListHeartbeats(ctx, dbsqlc.ListHeartbeatsParams{OrgID: orgID, Search: f.Search, Unassigned: f.Unassigned,
		ProjectID: f.ProjectID, PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := heartbeatsOf(rows)
	if err != nil {
		return nil, 0, err
	}
	if err := markMaintenance(ctx, s.pool, items, now); err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// markMaintenance sets InMaintenance of hbs as of now.
func markMaintenance(ctx context.Context, db querier, hbs []Heartbeat, now time.Time) error {
	ids := make([]uuid.UUID, len(hbs))
	for i, h := range hbs {
		ids[i] = h.ID
	}
	m, err := inMaintenance(ctx, db, "heartbeats", ids, now)
	if err != nil {
		return err
	}
	for i := range hbs {
		hbs[i].InMaintenance = m[hbs[i].ID]
	}
	return nil
}

// UpdateHeartbeat changes one heartbeat in one transaction: it locks the row, lets change edit a
// copy, and writes the copy back — configuration and the monitor's state alike, so that change
// may also start the heartbeat over (heartbeat.Resume). An error from change aborts and is
// returned as is.
func (s *Store) UpdateHeartbeat(ctx context.Context, actor Actor, orgID, id uuid.UUID, change func(*Heartbeat) error) (Heartbeat, error) {
	var out Heartbeat
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.LockHeartbeat(ctx, dbsqlc.LockHeartbeatParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		next, err := heartbeatOf(r)
		if err != nil {
			return err
		}
		before := next.Alerts
		if err := change(&next); err != nil {
			return err
		}
		alerts, err := alertsJSON(next.Alerts)
		if err != nil {
			return err
		}
		if err := checkAlertIntegrations(ctx, q, orgID, next.Alerts, before); err != nil {
			return err
		}
		r, err = q.SaveHeartbeat(ctx, dbsqlc.SaveHeartbeatParams{OrgID: orgID, ID: id, Name: next.Name, Paused: next.Paused,
			Muted: next.Muted, ReportPeriod: int32Ptr(next.ReportPeriod), ReportPeriodCron: next.ReportPeriodCron,
			Timezone: next.Timezone, GracePeriod: int32(next.GracePeriod), AlertPriority: next.AlertPriority,
			ReminderAlertIntervalMinutes: int32Ptr(next.ReminderAlertIntervalMinutes), Alerts: alerts, State: next.State,
			StateChangedAt: next.StateChangedAt, LastSuccessAt: next.LastSuccessAt, RunStartedAt: next.RunStartedAt,
			FailedAt: next.FailedAt, DownAlerted: next.DownAlerted, LastAlertAt: next.LastAlertAt, Now: s.now()})
		if err != nil {
			return fmt.Errorf("update heartbeat: %w", err)
		}
		if out, err = heartbeatOf(r); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: next.Name})
	})
	return out, err
}

// DeleteHeartbeat deletes one heartbeat (its window associations go with it) and audits it.
func (s *Store) DeleteHeartbeat(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		name, err := s.q.WithTx(tx).DeleteHeartbeat(ctx, dbsqlc.DeleteHeartbeatParams{OrgID: orgID, ID: id})
		if err != nil {
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
		q := s.q.WithTx(tx)
		cur, err := q.LockHeartbeatForMove(ctx, dbsqlc.LockHeartbeatForMoveParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		if err := lockProjectForReference(ctx, tx, orgID, dest); err != nil {
			return err
		}
		if sameScope(cur.ProjectID, dest) {
			return nil
		}
		if err := q.MoveHeartbeat(ctx, dbsqlc.MoveHeartbeatParams{OrgID: orgID, ID: id, ProjectID: dest, Now: s.now()}); err != nil {
			return fmt.Errorf("move heartbeat: %w", err)
		}
		res.Moved = true
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "moved", AuditableType: "Heartbeat",
			AuditableID: id.String(), AuditableDisplayName: cur.Name,
			Metadata: map[string]any{"from_project_id": uuidOrNil(cur.ProjectID), "to_project_id": uuidOrNil(dest)}})
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
	n, err := s.q.RecordPing(ctx, dbsqlc.RecordPingParams{ID: id, Kind: string(kind), At: at})
	if err != nil {
		return false, translate(err)
	}
	return n == 1, nil
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
	err := dbsqlc.New(h.tx).SaveHeartbeatState(ctx, dbsqlc.SaveHeartbeatStateParams{OrgID: orgID, ID: st.ID, State: st.State,
		StateChangedAt: st.StateChangedAt, DownAlerted: st.DownAlerted, LastAlertAt: st.LastAlertAt})
	if err != nil {
		return fmt.Errorf("save heartbeat %s state: %w", st.ID, err)
	}
	return nil
}

// InsertOutbox queues alerts about heartbeats (outbox.check_id holds the heartbeat id).
func (h *HeartbeatTx) InsertOutbox(ctx context.Context, events []OutboxEvent) error {
	return insertOutbox(ctx, h.tx, events)
}

// SweepHeartbeats runs fn over the monitored heartbeats (not paused, and pinged at least once or
// not PENDING) with id after afterID, at most limit of them in id order, locked FOR UPDATE SKIP
// LOCKED in one transaction (rows another replica's sweep holds are skipped), each with
// InMaintenance as of now. It returns the last id handed to fn and how many were, so a caller
// pages through with afterID; fewer than limit means the sweep is complete.
func (s *Store) SweepHeartbeats(ctx context.Context, afterID uuid.UUID, limit int, now time.Time,
	fn func(ctx context.Context, tx *HeartbeatTx, hbs []Heartbeat) error) (last uuid.UUID, n int, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := s.q.WithTx(tx).LockMonitoredHeartbeats(ctx, dbsqlc.LockMonitoredHeartbeatsParams{AfterID: afterID,
			BatchLimit: int64(limit)})
		if err != nil {
			return fmt.Errorf("lock heartbeats: %w", err)
		}
		hbs, err := heartbeatsOf(rows)
		if err != nil {
			return err
		}
		n = len(hbs)
		if n == 0 {
			return nil
		}
		last = hbs[n-1].ID
		if err := markMaintenance(ctx, tx, hbs, now); err != nil {
			return err
		}
		return fn(ctx, &HeartbeatTx{tx: tx}, hbs)
	})
	return last, n, err
}
