package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// PipelineTx is what the evaluator may do inside a pipeline transaction (IngestResults,
// JudgeDueRuns; JudgeChecks, fenced) to the checks it was handed locked: read and write pending runs, record the
// status machine's state, open and close incidents, and queue alerts. Every statement is
// scoped by organization. The evaluator decides all of it; this only persists.
type PipelineTx struct {
	tx pgx.Tx
	// read: the checks the transaction locked, as it read them (UpdateCheckStates writes only
	// what changed).
	read map[uuid.UUID]*PipelineCheck
	// fenced: the checks were read without their lock (JudgeChecks), so the progress write
	// moves only what is still as read.
	fenced bool
}

func newPipelineTx(tx pgx.Tx, checks []*PipelineCheck) *PipelineTx {
	read := make(map[uuid.UUID]*PipelineCheck, len(checks))
	for _, c := range checks {
		read[c.ID] = c
	}
	return &PipelineTx{tx: tx, read: read}
}

func (p *PipelineTx) q() *dbsqlc.Queries { return dbsqlc.New(p.tx) }

// Run is a run of a check (one job id) that has final attempts but no verdict yet: a
// check_runs row, with the regions expected when its first result came and those that passed
// and failed since.
type Run = dbsqlc.CheckRun

// PendingRuns returns the pending runs of the given (locked) checks.
func (p *PipelineTx) PendingRuns(ctx context.Context, checks []*PipelineCheck) ([]Run, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	arg := dbsqlc.PendingRunsParams{OrgIds: make([]uuid.UUID, len(checks)), CheckIds: make([]uuid.UUID, len(checks))}
	for i, c := range checks {
		arg.OrgIds[i], arg.CheckIds[i] = c.OrgID, c.ID
	}
	runs, err := p.q().PendingRuns(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read pending runs: %w", err)
	}
	return runs, nil
}

// SaveRuns inserts or updates pending runs (region values never contain a comma: they are
// "cloud:<name>", and ingest rejects others).
func (p *PipelineTx) SaveRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	n := len(runs)
	arg := dbsqlc.SaveRunsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n), JobIds: make([]uuid.UUID, n),
		ScheduledAts: make([]time.Time, n), Deadlines: make([]time.Time, n), FirstResultAts: make([]time.Time, n),
		ExpectedRegions: make([]string, n), PassedRegions: make([]string, n), FailedRegions: make([]string, n),
		HeldSinceMs: make([]int64, n), SlowRegions: make([]string, n)}
	for i, r := range runs {
		arg.OrgIds[i], arg.CheckIds[i], arg.JobIds[i] = r.OrgID, r.CheckID, r.JobID
		arg.ScheduledAts[i], arg.Deadlines[i], arg.FirstResultAts[i] = r.ScheduledAt, r.Deadline, r.FirstResultAt
		arg.ExpectedRegions[i] = strings.Join(r.ExpectedRegions, ",")
		arg.PassedRegions[i] = strings.Join(r.PassedRegions, ",")
		arg.FailedRegions[i] = strings.Join(r.FailedRegions, ",")
		arg.SlowRegions[i] = strings.Join(r.SlowRegions, ",")
		if r.HeldSince != nil {
			arg.HeldSinceMs[i] = r.HeldSince.UnixMilli()
		}
	}
	if err := p.q().SaveRuns(ctx, arg); err != nil {
		return fmt.Errorf("save pending runs: %w", err)
	}
	return nil
}

// DeleteRuns removes runs that got their verdict (or were discarded).
func (p *PipelineTx) DeleteRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	n := len(runs)
	arg := dbsqlc.DeleteRunsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n), JobIds: make([]uuid.UUID, n)}
	for i, r := range runs {
		arg.OrgIds[i], arg.CheckIds[i], arg.JobIds[i] = r.OrgID, r.CheckID, r.JobID
	}
	if err := p.q().DeleteRuns(ctx, arg); err != nil {
		return fmt.Errorf("delete judged runs: %w", err)
	}
	return nil
}

// CheckState is the status machine's state of one check as it is written back. The JSON names
// are the columns of UpdateCheckStates' record set; LastRunAt goes to check_progress.
type CheckState struct {
	OrgID             uuid.UUID  `json:"org_id"`
	CheckID           uuid.UUID  `json:"check_id"`
	State             string     `json:"state"`
	StateChangedAt    *time.Time `json:"state_changed_at"`
	FailingSince      *time.Time `json:"failing_since"`
	PassingSince      *time.Time `json:"passing_since"`
	LastAlertAt       *time.Time `json:"last_alert_at"`
	DownAlerted       bool       `json:"down_alerted"`
	CurrentIncidentID *uuid.UUID `json:"current_incident_id"`
	LastRunAt         *time.Time `json:"-"`
}

// UpdateCheckStates records each check's progress (check_progress: its last judged run) and
// writes the machine's state of each check whose state differs from what the transaction read
// (configuration and updated_at are not touched: they belong to the API). Most judged runs
// change nothing but the progress; the rows that do change are locked in id order first, as
// every multi-row writer of checks locks them.
func (p *PipelineTx) UpdateCheckStates(ctx context.Context, states []CheckState) error {
	var progress dbsqlc.SaveCheckProgressParams
	var changed []CheckState
	for _, s := range states {
		if s.LastRunAt != nil {
			progress.CheckIds = append(progress.CheckIds, s.CheckID)
			progress.LastRunAts = append(progress.LastRunAts, *s.LastRunAt)
		}
		// PostgreSQL keeps microseconds and would round the nanoseconds of the JSON text;
		// truncate them, as the binary encoding of a timestamp does.
		s.StateChangedAt, s.FailingSince, s.PassingSince = micros(s.StateChangedAt), micros(s.FailingSince), micros(s.PassingSince)
		s.LastAlertAt = micros(s.LastAlertAt)
		if before := p.read[s.CheckID]; before == nil || s.differs(before) {
			changed = append(changed, s)
		}
	}
	if len(progress.CheckIds) > 0 && p.fenced {
		if err := p.saveProgressFenced(ctx, progress); err != nil {
			return err
		}
	} else if len(progress.CheckIds) > 0 {
		if err := p.q().SaveCheckProgress(ctx, progress); err != nil {
			return fmt.Errorf("save check progress: %w", err)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(changed))
	for i, s := range changed {
		ids[i] = s.CheckID
	}
	if _, err := p.q().LockCheckRows(ctx, ids); err != nil {
		return fmt.Errorf("lock checks: %w", err)
	}
	body, err := json.Marshal(changed)
	if err != nil {
		return fmt.Errorf("update check states: %w", err)
	}
	if err := p.q().UpdateCheckStates(ctx, body); err != nil {
		return fmt.Errorf("update check states: %w", err)
	}
	return nil
}

// differs reports whether s is another state than the row c was read as.
func (s CheckState) differs(c *PipelineCheck) bool {
	return s.State != c.State || !sameTime(s.StateChangedAt, c.StateChangedAt) || !sameTime(s.FailingSince, c.FailingSince) ||
		!sameTime(s.PassingSince, c.PassingSince) || !sameTime(s.LastAlertAt, c.LastAlertAt) || s.DownAlerted != c.DownAlerted ||
		!sameID(s.CurrentIncidentID, c.CurrentIncidentID)
}

func sameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

func sameID(a, b *uuid.UUID) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func micros(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := t.Truncate(time.Microsecond)
	return &m
}

// Incident is a check incident as the evaluator opens and closes it.
type Incident struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	CheckID   uuid.UUID
	StartedAt time.Time
	EndedAt   *time.Time
}

// OpenIncident opens an incident of the check starting at startedAt, or returns the one that is
// already open (at most one is, by the check_incidents_one_open index).
func (p *PipelineTx) OpenIncident(ctx context.Context, orgID, checkID uuid.UUID, startedAt time.Time) (Incident, error) {
	r, err := p.q().OpenIncident(ctx, dbsqlc.OpenIncidentParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, CheckID: checkID, StartedAt: startedAt})
	if err != nil {
		return Incident{}, fmt.Errorf("open incident of check %s: %w", checkID, err)
	}
	return Incident{ID: r.ID, OrgID: orgID, CheckID: checkID, StartedAt: r.StartedAt}, nil
}

// CloseIncident ends the check's open incident at endedAt (never before it started). ok is
// false when no incident was open.
func (p *PipelineTx) CloseIncident(ctx context.Context, orgID, checkID uuid.UUID, endedAt time.Time) (inc Incident, ok bool, err error) {
	r, err := p.q().CloseIncident(ctx, dbsqlc.CloseIncidentParams{OrgID: orgID, CheckID: checkID, EndedAt: endedAt})
	if errors.Is(err, pgx.ErrNoRows) {
		return Incident{}, false, nil
	}
	if err != nil {
		return Incident{}, false, fmt.Errorf("close incident of check %s: %w", checkID, err)
	}
	return Incident{ID: r.ID, OrgID: orgID, CheckID: checkID, StartedAt: r.StartedAt, EndedAt: r.EndedAt}, true, nil
}

// CurrentIncident returns the check's open incident; ok is false when none is open.
func (p *PipelineTx) CurrentIncident(ctx context.Context, orgID, checkID uuid.UUID) (inc Incident, ok bool, err error) {
	r, err := p.q().CurrentIncident(ctx, dbsqlc.CurrentIncidentParams{OrgID: orgID, CheckID: checkID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Incident{}, false, nil
	}
	if err != nil {
		return Incident{}, false, fmt.Errorf("read open incident of check %s: %w", checkID, err)
	}
	return Incident{ID: r.ID, OrgID: orgID, CheckID: checkID, StartedAt: r.StartedAt}, true, nil
}

// InsertOutbox queues alerts, due at once (insertOutbox, outbox.go).
func (p *PipelineTx) InsertOutbox(ctx context.Context, events []OutboxEvent) error {
	return insertOutbox(ctx, p.tx, events)
}

// Verdict is one judged run, as the daily counters record it.
type Verdict struct {
	OrgID   uuid.UUID
	CheckID uuid.UUID
	Day     time.Time // the day the verdict counts in (its date, at midnight UTC)
	Passing bool
}

// CountVerdicts adds judged runs to their checks' daily counters (check_daily_stats), in the
// transaction that judged them.
func (p *PipelineTx) CountVerdicts(ctx context.Context, verdicts []Verdict) error {
	if len(verdicts) == 0 {
		return nil
	}
	n := len(verdicts)
	arg := dbsqlc.CountVerdictsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n),
		Days: make([]time.Time, n), Failed: make([]bool, n)}
	for i, v := range verdicts {
		arg.OrgIds[i], arg.CheckIds[i], arg.Days[i], arg.Failed[i] = v.OrgID, v.CheckID, v.Day, !v.Passing
	}
	if err := p.q().CountVerdicts(ctx, arg); err != nil {
		return fmt.Errorf("count verdicts: %w", err)
	}
	return nil
}
