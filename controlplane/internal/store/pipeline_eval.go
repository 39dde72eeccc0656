package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// PipelineTx is what the evaluator may do inside a pipeline transaction (IngestResults,
// JudgeDueRuns) to the checks it was handed locked: read and write pending runs, record the
// status machine's state, open and close incidents, and queue alerts. Every statement is
// scoped by organization.
type PipelineTx struct {
	tx pgx.Tx
}

// Run is a run of a check (one job id) that has final attempts but no verdict yet.
type Run struct {
	OrgID           uuid.UUID
	CheckID         uuid.UUID
	JobID           uuid.UUID
	ScheduledAt     time.Time
	Deadline        time.Time
	ExpectedRegions []string
	PassedRegions   []string
	FailedRegions   []string
	FirstResultAt   time.Time
}

// PendingRuns returns the pending runs of the given (locked) checks.
func (p *PipelineTx) PendingRuns(ctx context.Context, checks []*PipelineCheck) ([]Run, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	orgs, ids := checkKeys(checks)
	rows, err := p.tx.Query(ctx, `SELECT r.org_id, r.check_id, r.job_id, r.scheduled_at, r.deadline,
			r.expected_regions, r.passed_regions, r.failed_regions, r.first_result_at
		FROM check_runs r JOIN unnest($1::uuid[], $2::uuid[]) AS k(org_id, id)
			ON r.org_id = k.org_id AND r.check_id = k.id`, orgs, ids)
	if err != nil {
		return nil, fmt.Errorf("read pending runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) {
		var r Run
		var org, check, job pgtype.UUID
		err := row.Scan(&org, &check, &job, &r.ScheduledAt, &r.Deadline,
			&r.ExpectedRegions, &r.PassedRegions, &r.FailedRegions, &r.FirstResultAt)
		r.OrgID, r.CheckID, r.JobID = org.Bytes, check.Bytes, job.Bytes
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pending runs: %w", err)
	}
	return runs, nil
}

// SaveRuns inserts or updates pending runs. Region values never contain a comma (they are
// "cloud:<name>"; ingest rejects others), which lets the region lists travel as joined text.
func (p *PipelineTx) SaveRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	n := len(runs)
	orgs, checks, jobs := make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n)
	scheduled, deadlines, firsts := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	expected, passed, failed := make([]string, n), make([]string, n), make([]string, n)
	for i, r := range runs {
		orgs[i], checks[i], jobs[i] = pgUUID(r.OrgID), pgUUID(r.CheckID), pgUUID(r.JobID)
		scheduled[i], deadlines[i], firsts[i] = r.ScheduledAt, r.Deadline, r.FirstResultAt
		expected[i] = strings.Join(r.ExpectedRegions, ",")
		passed[i] = strings.Join(r.PassedRegions, ",")
		failed[i] = strings.Join(r.FailedRegions, ",")
	}
	_, err := p.tx.Exec(ctx, `INSERT INTO check_runs (org_id, check_id, job_id, scheduled_at, deadline,
			expected_regions, passed_regions, failed_regions, first_result_at)
		SELECT o, c, j, s, d, string_to_array(e, ','), string_to_array(pa, ','), string_to_array(f, ','), fr
		FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::timestamptz[],
			$6::text[], $7::text[], $8::text[], $9::timestamptz[]) AS u(o, c, j, s, d, e, pa, f, fr)
		ON CONFLICT (check_id, job_id) DO UPDATE
			SET passed_regions = EXCLUDED.passed_regions, failed_regions = EXCLUDED.failed_regions`,
		orgs, checks, jobs, scheduled, deadlines, expected, passed, failed, firsts)
	if err != nil {
		return fmt.Errorf("save pending runs: %w", err)
	}
	return nil
}

// DeleteRuns removes runs that got their verdict (or were discarded).
func (p *PipelineTx) DeleteRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	orgs, checks, jobs := make([]pgtype.UUID, len(runs)), make([]pgtype.UUID, len(runs)), make([]pgtype.UUID, len(runs))
	for i, r := range runs {
		orgs[i], checks[i], jobs[i] = pgUUID(r.OrgID), pgUUID(r.CheckID), pgUUID(r.JobID)
	}
	_, err := p.tx.Exec(ctx, `DELETE FROM check_runs r USING unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS k(o, c, j)
		WHERE r.org_id = k.o AND r.check_id = k.c AND r.job_id = k.j`, orgs, checks, jobs)
	if err != nil {
		return fmt.Errorf("delete judged runs: %w", err)
	}
	return nil
}

// CheckState is the status machine's state of one check as it is written back.
type CheckState struct {
	OrgID             uuid.UUID
	CheckID           uuid.UUID
	State             string
	StateChangedAt    *time.Time
	FailingSince      *time.Time
	PassingSince      *time.Time
	LastAlertAt       *time.Time
	DownAlerted       bool
	CurrentIncidentID *uuid.UUID
	LastRunAt         *time.Time
}

// UpdateCheckStates writes the machine's state of each check (configuration and updated_at
// are not touched: they belong to the API).
func (p *PipelineTx) UpdateCheckStates(ctx context.Context, states []CheckState) error {
	if len(states) == 0 {
		return nil
	}
	n := len(states)
	orgs, ids, st := make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]string, n)
	changed, failing, passing, alerted := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	lastRun, incident, downAlerted := make([]*time.Time, n), make([]pgtype.UUID, n), make([]bool, n)
	for i, s := range states {
		orgs[i], ids[i], st[i] = pgUUID(s.OrgID), pgUUID(s.CheckID), s.State
		changed[i], failing[i], passing[i], alerted[i] = s.StateChangedAt, s.FailingSince, s.PassingSince, s.LastAlertAt
		lastRun[i], incident[i], downAlerted[i] = s.LastRunAt, pgUUIDPtr(s.CurrentIncidentID), s.DownAlerted
	}
	_, err := p.tx.Exec(ctx, `UPDATE checks c SET state = u.state, state_changed_at = u.changed,
			failing_since = u.failing, passing_since = u.passing, last_alert_at = u.alerted,
			down_alerted = u.down_alerted, current_incident_id = u.incident, last_run_at = u.last_run
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[],
			$7::timestamptz[], $8::bool[], $9::uuid[], $10::timestamptz[])
			AS u(org_id, id, state, changed, failing, passing, alerted, down_alerted, incident, last_run)
		WHERE c.org_id = u.org_id AND c.id = u.id`,
		orgs, ids, st, changed, failing, passing, alerted, downAlerted, incident, lastRun)
	if err != nil {
		return fmt.Errorf("update check states: %w", err)
	}
	return nil
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
	inc := Incident{OrgID: orgID, CheckID: checkID}
	err := p.tx.QueryRow(ctx, `WITH ins AS (
			INSERT INTO check_incidents (id, org_id, check_id, started_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (check_id) WHERE ended_at IS NULL DO NOTHING
			RETURNING id, started_at)
		SELECT id, started_at FROM ins
		UNION ALL
		SELECT id, started_at FROM check_incidents WHERE org_id = $2 AND check_id = $3 AND ended_at IS NULL
		LIMIT 1`, uuid.Must(uuid.NewV7()), orgID, checkID, startedAt).Scan(&inc.ID, &inc.StartedAt)
	if err != nil {
		return Incident{}, fmt.Errorf("open incident of check %s: %w", checkID, err)
	}
	return inc, nil
}

// CloseIncident ends the check's open incident at endedAt (never before it started). ok is
// false when no incident was open.
func (p *PipelineTx) CloseIncident(ctx context.Context, orgID, checkID uuid.UUID, endedAt time.Time) (inc Incident, ok bool, err error) {
	inc = Incident{OrgID: orgID, CheckID: checkID}
	err = p.tx.QueryRow(ctx, `UPDATE check_incidents SET ended_at = GREATEST($3, started_at)
		WHERE org_id = $1 AND check_id = $2 AND ended_at IS NULL
		RETURNING id, started_at, ended_at`, orgID, checkID, endedAt).Scan(&inc.ID, &inc.StartedAt, &inc.EndedAt)
	if err == pgx.ErrNoRows {
		return Incident{}, false, nil
	}
	if err != nil {
		return Incident{}, false, fmt.Errorf("close incident of check %s: %w", checkID, err)
	}
	return inc, true, nil
}

// InsertOutbox queues alerts, due at once (insertOutbox, outbox.go).
func (p *PipelineTx) InsertOutbox(ctx context.Context, events []OutboxEvent) error {
	return insertOutbox(ctx, p.tx, events)
}

func checkKeys(checks []*PipelineCheck) (orgs, ids []pgtype.UUID) {
	orgs, ids = make([]pgtype.UUID, len(checks)), make([]pgtype.UUID, len(checks))
	for i, c := range checks {
		orgs[i], ids[i] = pgUUID(c.OrgID), pgUUID(c.ID)
	}
	return orgs, ids
}

// CurrentIncident returns the check's open incident; ok is false when none is open.
func (p *PipelineTx) CurrentIncident(ctx context.Context, orgID, checkID uuid.UUID) (inc Incident, ok bool, err error) {
	inc = Incident{OrgID: orgID, CheckID: checkID}
	err = p.tx.QueryRow(ctx, `SELECT id, started_at FROM check_incidents
		WHERE org_id = $1 AND check_id = $2 AND ended_at IS NULL`, orgID, checkID).Scan(&inc.ID, &inc.StartedAt)
	if err == pgx.ErrNoRows {
		return Incident{}, false, nil
	}
	if err != nil {
		return Incident{}, false, fmt.Errorf("read open incident of check %s: %w", checkID, err)
	}
	return inc, true, nil
}

// Verdict is one judged run, as the daily counters record it.
type Verdict struct {
	OrgID       uuid.UUID
	CheckID     uuid.UUID
	ScheduledAt time.Time
	Passing     bool
}

// CountVerdicts adds judged runs to their checks' daily counters (check_daily_stats, the day
// being the UTC date of the run's scheduled time), in the transaction that judged them.
func (p *PipelineTx) CountVerdicts(ctx context.Context, verdicts []Verdict) error {
	if len(verdicts) == 0 {
		return nil
	}
	n := len(verdicts)
	orgs, checks, days, failed := make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]string, n), make([]bool, n)
	for i, v := range verdicts {
		orgs[i], checks[i] = pgUUID(v.OrgID), pgUUID(v.CheckID)
		days[i], failed[i] = v.ScheduledAt.UTC().Format(time.DateOnly), !v.Passing
	}
	// Grouped first: ON CONFLICT may not touch the same row twice in one statement.
	_, err := p.tx.Exec(ctx, `INSERT INTO check_daily_stats AS s (org_id, check_id, day, runs, failed_runs)
		SELECT o, c, d::date, count(*), count(*) FILTER (WHERE f)
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bool[]) AS u(o, c, d, f)
		GROUP BY o, c, d
		ON CONFLICT (check_id, day) DO UPDATE
			SET runs = s.runs + EXCLUDED.runs, failed_runs = s.failed_runs + EXCLUDED.failed_runs`,
		orgs, checks, days, failed)
	if err != nil {
		return fmt.Errorf("count verdicts: %w", err)
	}
	return nil
}
