package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
)

// MaintenanceWindow is a stored maintenance window with the ids of its checks and heartbeats.
type MaintenanceWindow struct {
	ID              uuid.UUID
	OrgID           uuid.UUID
	Name            string
	StartDate       time.Time
	DurationMinutes int
	Timezone        string
	DaysOfWeek      []time.Weekday // sorted, unique
	Status          string         // ENABLED or DISABLED
	Checks          []uuid.UUID
	Heartbeats      []uuid.UUID
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Recurrence is the window as the maintenance package evaluates it. An unknown time zone (it
// was validated on write) makes a window that is never active.
func (w MaintenanceWindow) Recurrence() recurrence.Window {
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil {
		loc = nil
	}
	return recurrence.Window{Start: w.StartDate, DurationMinutes: w.DurationMinutes, Location: loc,
		Days: w.DaysOfWeek, Enabled: w.Status == WindowEnabled}
}

// Window statuses.
const (
	WindowEnabled  = "ENABLED"
	WindowDisabled = "DISABLED"
)

const windowColumns = `w.id, w.org_id, w.name, w.start_date, w.duration_minutes, w.timezone, w.days_of_week, w.status,
	w.created_at, w.updated_at,
	ARRAY(SELECT check_id FROM maintenance_window_checks c WHERE c.window_id = w.id ORDER BY check_id),
	ARRAY(SELECT heartbeat_id FROM maintenance_window_heartbeats h WHERE h.window_id = w.id ORDER BY heartbeat_id)`

func scanWindow(row pgx.Row) (MaintenanceWindow, error) {
	var w MaintenanceWindow
	var days []int16
	err := row.Scan(&w.ID, &w.OrgID, &w.Name, &w.StartDate, &w.DurationMinutes, &w.Timezone, &days, &w.Status,
		&w.CreatedAt, &w.UpdatedAt, &w.Checks, &w.Heartbeats)
	w.DaysOfWeek = weekdays(days)
	return w, err
}

func weekdays(days []int16) []time.Weekday {
	out := make([]time.Weekday, 0, len(days))
	for _, d := range days {
		out = append(out, time.Weekday(d))
	}
	return out
}

func dayNumbers(days []time.Weekday) []int16 {
	seen := [7]bool{}
	for _, d := range days {
		seen[d%7] = true
	}
	out := []int16{}
	for i, ok := range seen {
		if ok {
			out = append(out, int16(i))
		}
	}
	return out
}

// WindowPatch is a change to a window; nil fields stay as they are. Checks and Heartbeats,
// when not nil, replace the associations.
type WindowPatch struct {
	Name            *string
	StartDate       *time.Time
	DurationMinutes *int
	Timezone        *string
	DaysOfWeek      []time.Weekday
	Status          *string
	Checks          *[]uuid.UUID
	Heartbeats      *[]uuid.UUID
}

// WindowFilter narrows ListMaintenanceWindows.
type WindowFilter struct {
	Search string // case-insensitive substring of the name
}

// ListMaintenanceWindows returns one page of the organization's windows, newest first.
func (s *Store) ListMaintenanceWindows(ctx context.Context, orgID uuid.UUID, f WindowFilter, limit, offset int64) ([]MaintenanceWindow, int64, error) {
	cond := "w.org_id = $1 AND ($2 = '' OR strpos(lower(w.name), lower($2)) > 0)"
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM maintenance_windows w WHERE `+cond, orgID, f.Search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []MaintenanceWindow{}, total, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+windowColumns+` FROM maintenance_windows w WHERE `+cond+`
		ORDER BY w.created_at DESC, w.id DESC LIMIT $3 OFFSET $4`, orgID, f.Search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MaintenanceWindow, error) { return scanWindow(r) })
	return items, total, translate(err)
}

// GetMaintenanceWindow returns one window of the organization (ErrNotFound when missing).
func (s *Store) GetMaintenanceWindow(ctx context.Context, orgID, id uuid.UUID) (MaintenanceWindow, error) {
	w, err := scanWindow(s.pool.QueryRow(ctx, `SELECT `+windowColumns+` FROM maintenance_windows w WHERE w.org_id = $1 AND w.id = $2`, orgID, id))
	return w, translate(err)
}

// CreateMaintenanceWindow stores a new window (ENABLED unless w.Status says otherwise) with its
// associations and audits it. Check or heartbeat ids the organization does not have are a
// *ValidationError.
func (s *Store) CreateMaintenanceWindow(ctx context.Context, actor Actor, orgID uuid.UUID, w MaintenanceWindow) (MaintenanceWindow, error) {
	now := s.now()
	w.ID, w.OrgID, w.CreatedAt, w.UpdatedAt = uuid.Must(uuid.NewV7()), orgID, now, now
	if w.Status == "" {
		w.Status = WindowEnabled
	}
	var out MaintenanceWindow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO maintenance_windows (id, org_id, name, start_date, duration_minutes,
				timezone, days_of_week, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
			w.ID, orgID, w.Name, w.StartDate, w.DurationMinutes, w.Timezone, dayNumbers(w.DaysOfWeek), w.Status, now); err != nil {
			return fmt.Errorf("insert maintenance window: %w", err)
		}
		if err := setWindowMembers(ctx, tx, orgID, w.ID, "checks", w.Checks); err != nil {
			return err
		}
		if err := setWindowMembers(ctx, tx, orgID, w.ID, "heartbeats", w.Heartbeats); err != nil {
			return err
		}
		var err error
		if out, err = scanWindow(tx.QueryRow(ctx, `SELECT `+windowColumns+` FROM maintenance_windows w WHERE w.org_id = $1 AND w.id = $2`, orgID, w.ID)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "MaintenanceWindow",
			AuditableID: w.ID.String(), AuditableDisplayName: w.Name})
	})
	return out, err
}

// UpdateMaintenanceWindow applies p to one window and audits it.
func (s *Store) UpdateMaintenanceWindow(ctx context.Context, actor Actor, orgID, id uuid.UUID, p WindowPatch) (MaintenanceWindow, error) {
	var out MaintenanceWindow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var days []int16
		if p.DaysOfWeek != nil {
			days = dayNumbers(p.DaysOfWeek)
		}
		var name string
		err := tx.QueryRow(ctx, `UPDATE maintenance_windows SET name = coalesce($3, name), start_date = coalesce($4, start_date),
				duration_minutes = coalesce($5, duration_minutes), timezone = coalesce($6, timezone),
				days_of_week = coalesce($7, days_of_week), status = coalesce($8, status), updated_at = $9
			WHERE org_id = $1 AND id = $2 RETURNING name`,
			orgID, id, p.Name, p.StartDate, p.DurationMinutes, p.Timezone, days, p.Status, s.now()).Scan(&name)
		if err != nil {
			return err
		}
		if p.Checks != nil {
			if err := setWindowMembers(ctx, tx, orgID, id, "checks", *p.Checks); err != nil {
				return err
			}
		}
		if p.Heartbeats != nil {
			if err := setWindowMembers(ctx, tx, orgID, id, "heartbeats", *p.Heartbeats); err != nil {
				return err
			}
		}
		if out, err = scanWindow(tx.QueryRow(ctx, `SELECT `+windowColumns+` FROM maintenance_windows w WHERE w.org_id = $1 AND w.id = $2`, orgID, id)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "MaintenanceWindow",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
	return out, err
}

// DeleteMaintenanceWindow deletes one window and its associations and audits it.
func (s *Store) DeleteMaintenanceWindow(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM maintenance_windows WHERE org_id = $1 AND id = $2 RETURNING name`, orgID, id).Scan(&name); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "MaintenanceWindow",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
}

// setWindowMembers replaces the window's checks or heartbeats with ids, which must all be the
// organization's (*ValidationError naming the unknown ones otherwise).
func setWindowMembers(ctx context.Context, tx pgx.Tx, orgID, windowID uuid.UUID, kind string, ids []uuid.UUID) error {
	link, col, table := "maintenance_window_checks", "check_id", "checks"
	if kind == "heartbeats" {
		link, col, table = "maintenance_window_heartbeats", "heartbeat_id", "heartbeats"
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+link+` WHERE org_id = $1 AND window_id = $2`, orgID, windowID); err != nil {
		return fmt.Errorf("clear window %s: %w", kind, err)
	}
	if len(ids) == 0 {
		return nil
	}
	// FOR KEY SHARE keeps the members from being deleted before the links are written.
	rows, err := tx.Query(ctx, `SELECT id FROM `+table+` WHERE org_id = $1 AND id = ANY($2) ORDER BY id FOR KEY SHARE`, orgID, ids)
	if err != nil {
		return fmt.Errorf("resolve window %s: %w", kind, err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("resolve window %s: %w", kind, err)
	}
	have := map[uuid.UUID]bool{}
	for _, id := range found {
		have[id] = true
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id.String())
		}
	}
	if len(missing) > 0 {
		return &ValidationError{Field: kind, Message: "unknown ids: " + strings.Join(missing, ", ")}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+link+` (org_id, window_id, `+col+`) SELECT $1, $2, unnest($3::uuid[])
		ON CONFLICT DO NOTHING`, orgID, windowID, found); err != nil {
		return fmt.Errorf("link window %s: %w", kind, err)
	}
	return nil
}

// querier is what both a pool and a transaction offer.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// inMaintenance returns the members (checks or heartbeats, by id) of ids that sit in an
// active, enabled maintenance window at now. Windows are few per organization, so they are
// read with their member ids and evaluated here.
func inMaintenance(ctx context.Context, q querier, kind string, ids []uuid.UUID, now time.Time) (map[uuid.UUID]bool, error) {
	out := map[uuid.UUID]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	link, col := "maintenance_window_checks", "check_id"
	if kind == "heartbeats" {
		link, col = "maintenance_window_heartbeats", "heartbeat_id"
	}
	rows, err := q.Query(ctx, `SELECT l.`+col+`, w.start_date, w.duration_minutes, w.timezone, w.days_of_week
		FROM `+link+` l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
		WHERE l.`+col+` = ANY($1) AND w.status = 'ENABLED'`, ids)
	if err != nil {
		return nil, fmt.Errorf("read maintenance windows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var w MaintenanceWindow
		var days []int16
		if err := rows.Scan(&id, &w.StartDate, &w.DurationMinutes, &w.Timezone, &days); err != nil {
			return nil, fmt.Errorf("read maintenance windows: %w", err)
		}
		w.DaysOfWeek, w.Status = weekdays(days), WindowEnabled
		if !out[id] && recurrence.Active(w.Recurrence(), now) {
			out[id] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read maintenance windows: %w", err)
	}
	return out, nil
}

// ChecksInMaintenance returns which of the organization's checks ids are inside an active
// maintenance window at now.
func (s *Store) ChecksInMaintenance(ctx context.Context, ids []uuid.UUID, now time.Time) (map[uuid.UUID]bool, error) {
	return inMaintenance(ctx, s.pool, "checks", ids, now)
}

// HeartbeatsInMaintenance is ChecksInMaintenance for heartbeats.
func (s *Store) HeartbeatsInMaintenance(ctx context.Context, ids []uuid.UUID, now time.Time) (map[uuid.UUID]bool, error) {
	return inMaintenance(ctx, s.pool, "heartbeats", ids, now)
}

// InMaintenance is ChecksInMaintenance inside a pipeline transaction: the evaluator treats a
// check in an active window like a muted one.
func (p *PipelineTx) InMaintenance(ctx context.Context, checks []*PipelineCheck, now time.Time) (map[uuid.UUID]bool, error) {
	ids := make([]uuid.UUID, len(checks))
	for i, c := range checks {
		ids[i] = c.ID
	}
	return inMaintenance(ctx, p.tx, "checks", ids, now)
}

// checkWindowsColumn is a select-list column of a query on checks: the enabled maintenance
// windows of the row's check as a JSON array, for windowsActive. It lets a check read decide
// MAINTENANCE in the same query (windows per check are few).
const checkWindowsColumn = `(SELECT coalesce(json_agg(json_build_object('start', w.start_date,
		'duration', w.duration_minutes, 'tz', w.timezone, 'days', w.days_of_week)), '[]')
	FROM maintenance_window_checks l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
	WHERE l.check_id = checks.id AND l.org_id = checks.org_id AND w.status = 'ENABLED')`

// windowsActive reports whether any window of a checkWindowsColumn value is active at now.
func windowsActive(raw []byte, now time.Time) (bool, error) {
	if len(raw) == 0 {
		return false, nil
	}
	var ws []struct {
		Start    time.Time `json:"start"`
		Duration int       `json:"duration"`
		TZ       string    `json:"tz"`
		Days     []int16   `json:"days"`
	}
	if err := json.Unmarshal(raw, &ws); err != nil {
		return false, fmt.Errorf("decode maintenance windows: %w", err)
	}
	for _, w := range ws {
		mw := MaintenanceWindow{StartDate: w.Start, DurationMinutes: w.Duration, Timezone: w.TZ, DaysOfWeek: weekdays(w.Days), Status: WindowEnabled}
		if recurrence.Active(mw.Recurrence(), now) {
			return true, nil
		}
	}
	return false, nil
}

// rowWithExtra scans a row whose last columns come after what a shared scan function reads.
type rowWithExtra struct {
	row   pgx.Row
	extra any
}

func (r rowWithExtra) Scan(dest ...any) error { return r.row.Scan(append(dest, r.extra)...) }
