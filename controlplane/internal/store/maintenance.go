package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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

// Recurrence is the window's schedule. An unknown time zone (it was validated on write) makes a
// window that is never active.
func (w MaintenanceWindow) Recurrence() recurrence.Window {
	return schedule(w.StartDate, w.DurationMinutes, w.Timezone, dayNumbers(w.DaysOfWeek), w.Status == WindowEnabled)
}

func schedule(start time.Time, minutes int, tz string, days []int16, enabled bool) recurrence.Window {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = nil
	}
	return recurrence.Window{Start: start, DurationMinutes: minutes, Location: loc, Days: weekdays(days), Enabled: enabled}
}

// Window statuses.
const (
	WindowEnabled  = "ENABLED"
	WindowDisabled = "DISABLED"
)

func windowOf[R dbsqlc.GetMaintenanceWindowRow | dbsqlc.ListMaintenanceWindowsRow](r R) MaintenanceWindow {
	g := dbsqlc.GetMaintenanceWindowRow(r)
	return MaintenanceWindow{ID: g.ID, OrgID: g.OrgID, Name: g.Name, StartDate: g.StartDate, DurationMinutes: int(g.DurationMinutes),
		Timezone: g.Timezone, DaysOfWeek: weekdays(g.DaysOfWeek), Status: g.Status, Checks: g.CheckIds, Heartbeats: g.HeartbeatIds,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
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
	total, err := s.q.CountMaintenanceWindows(ctx, dbsqlc.CountMaintenanceWindowsParams{OrgID: orgID, Search: f.Search})
	if err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []MaintenanceWindow{}, total, nil
	}
	rows, err := s.q.ListMaintenanceWindows(ctx, dbsqlc.ListMaintenanceWindowsParams{OrgID: orgID, Search: f.Search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	items := make([]MaintenanceWindow, len(rows))
	for i, r := range rows {
		items[i] = windowOf(r)
	}
	return items, total, nil
}

// GetMaintenanceWindow returns one window of the organization (ErrNotFound when missing).
func (s *Store) GetMaintenanceWindow(ctx context.Context, orgID, id uuid.UUID) (MaintenanceWindow, error) {
	r, err := s.q.GetMaintenanceWindow(ctx, dbsqlc.GetMaintenanceWindowParams{OrgID: orgID, ID: id})
	return windowOf(r), translate(err)
}

// CreateMaintenanceWindow stores a new window (ENABLED unless w.Status says otherwise) with its
// associations and audits it. Check or heartbeat ids the organization does not have are a
// *ValidationError.
func (s *Store) CreateMaintenanceWindow(ctx context.Context, actor Actor, orgID uuid.UUID, w MaintenanceWindow) (MaintenanceWindow, error) {
	w.ID = uuid.Must(uuid.NewV7())
	if w.Status == "" {
		w.Status = WindowEnabled
	}
	var out MaintenanceWindow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.CreateMaintenanceWindow(ctx, dbsqlc.CreateMaintenanceWindowParams{ID: w.ID, OrgID: orgID, Name: w.Name,
			StartDate: w.StartDate, DurationMinutes: int32(w.DurationMinutes), Timezone: w.Timezone,
			DaysOfWeek: dayNumbers(w.DaysOfWeek), Status: w.Status, Now: s.now()}); err != nil {
			return fmt.Errorf("insert maintenance window: %w", err)
		}
		if err := setWindowMembers(ctx, q, orgID, w.ID, &w.Checks, &w.Heartbeats); err != nil {
			return err
		}
		r, err := q.GetMaintenanceWindow(ctx, dbsqlc.GetMaintenanceWindowParams{OrgID: orgID, ID: w.ID})
		if err != nil {
			return err
		}
		out = windowOf(r)
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "MaintenanceWindow",
			AuditableID: w.ID.String(), AuditableDisplayName: w.Name})
	})
	return out, err
}

// UpdateMaintenanceWindow applies p to one window and audits it.
func (s *Store) UpdateMaintenanceWindow(ctx context.Context, actor Actor, orgID, id uuid.UUID, p WindowPatch) (MaintenanceWindow, error) {
	var out MaintenanceWindow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		var days []int16
		if p.DaysOfWeek != nil {
			days = dayNumbers(p.DaysOfWeek)
		}
		var minutes *int32
		if p.DurationMinutes != nil {
			minutes = ptr(int32(*p.DurationMinutes))
		}
		name, err := q.UpdateMaintenanceWindow(ctx, dbsqlc.UpdateMaintenanceWindowParams{OrgID: orgID, ID: id, Name: p.Name,
			StartDate: p.StartDate, DurationMinutes: minutes, Timezone: p.Timezone, DaysOfWeek: days, Status: p.Status, Now: s.now()})
		if err != nil {
			return err
		}
		if err := setWindowMembers(ctx, q, orgID, id, p.Checks, p.Heartbeats); err != nil {
			return err
		}
		r, err := q.GetMaintenanceWindow(ctx, dbsqlc.GetMaintenanceWindowParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		out = windowOf(r)
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "MaintenanceWindow",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
	return out, err
}

// DeleteMaintenanceWindow deletes one window and its associations and audits it.
func (s *Store) DeleteMaintenanceWindow(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		name, err := s.q.WithTx(tx).DeleteMaintenanceWindow(ctx, dbsqlc.DeleteMaintenanceWindowParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "MaintenanceWindow",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
}

// setWindowMembers replaces the window's checks and heartbeats (a nil list stays), whose ids
// must all be the organization's (*ValidationError naming the unknown ones otherwise). The
// members are locked FOR KEY SHARE, so that none is deleted before its link is written.
func setWindowMembers(ctx context.Context, q *dbsqlc.Queries, orgID, windowID uuid.UUID, checks, heartbeats *[]uuid.UUID) error {
	if checks != nil {
		if err := q.ClearWindowChecks(ctx, dbsqlc.ClearWindowChecksParams{OrgID: orgID, WindowID: windowID}); err != nil {
			return fmt.Errorf("clear window checks: %w", err)
		}
		found, err := q.KeepChecks(ctx, dbsqlc.KeepChecksParams{OrgID: orgID, Ids: *checks})
		if err := missingMembers("checks", *checks, found, err); err != nil {
			return err
		}
		if err := q.LinkWindowChecks(ctx, dbsqlc.LinkWindowChecksParams{OrgID: orgID, WindowID: windowID, Ids: found}); err != nil {
			return fmt.Errorf("link window checks: %w", err)
		}
	}
	if heartbeats != nil {
		if err := q.ClearWindowHeartbeats(ctx, dbsqlc.ClearWindowHeartbeatsParams{OrgID: orgID, WindowID: windowID}); err != nil {
			return fmt.Errorf("clear window heartbeats: %w", err)
		}
		found, err := q.KeepHeartbeats(ctx, dbsqlc.KeepHeartbeatsParams{OrgID: orgID, Ids: *heartbeats})
		if err := missingMembers("heartbeats", *heartbeats, found, err); err != nil {
			return err
		}
		if err := q.LinkWindowHeartbeats(ctx, dbsqlc.LinkWindowHeartbeatsParams{OrgID: orgID, WindowID: windowID, Ids: found}); err != nil {
			return fmt.Errorf("link window heartbeats: %w", err)
		}
	}
	return nil
}

// missingMembers is a ValidationError naming the ids of kind that are not among found (or err).
func missingMembers(kind string, ids, found []uuid.UUID, err error) error {
	if err != nil {
		return fmt.Errorf("resolve window %s: %w", kind, err)
	}
	have := make(map[uuid.UUID]bool, len(found))
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
	return nil
}

// querier is what both a pool and a transaction offer.
type querier = dbsqlc.DBTX

// inMaintenance returns the members (checks or heartbeats, by id) of ids that sit in an
// active, enabled maintenance window at now. Windows are few per organization, so they are
// read with their member ids and evaluated here with their schedule model.
func inMaintenance(ctx context.Context, db querier, kind string, ids []uuid.UUID, now time.Time) (map[uuid.UUID]bool, error) {
	out := map[uuid.UUID]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	q := dbsqlc.New(db)
	var rows []dbsqlc.CheckWindowSchedulesRow
	var err error
	if kind == "heartbeats" {
		var hb []dbsqlc.HeartbeatWindowSchedulesRow
		hb, err = q.HeartbeatWindowSchedules(ctx, ids)
		for _, r := range hb {
			rows = append(rows, dbsqlc.CheckWindowSchedulesRow(r))
		}
	} else {
		rows, err = q.CheckWindowSchedules(ctx, ids)
	}
	if err != nil {
		return nil, fmt.Errorf("read maintenance windows: %w", err)
	}
	for _, r := range rows {
		if !out[r.MemberID] && recurrence.Active(schedule(r.StartDate, int(r.DurationMinutes), r.Timezone, r.DaysOfWeek, true), now) {
			out[r.MemberID] = true
		}
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
