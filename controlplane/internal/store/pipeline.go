package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// This file is the SQL of the result pipeline (DESIGN.md steps 5 and 6): one transaction per
// batch of results that de-duplicates, stores with COPY and hands the batch's final attempts,
// with their checks locked, to the evaluator. pipeline_eval.go holds what the evaluator does
// inside that transaction; pipeline_partitions.go the partition maintenance.

// ResultRow is one probe attempt from one region, as check_results stores it.
type ResultRow struct {
	ID               uuid.UUID
	OrgID            uuid.UUID
	CheckID          uuid.UUID
	JobID            uuid.UUID
	Region           string
	AttemptNumber    int32
	IsFinalAttempt   bool
	ScheduledAt      time.Time // the run's due time; part of the de-duplication key
	CheckedAt        time.Time
	DispatchedAt     *time.Time
	Passing          bool
	ResponseTimeMs   float64
	ResponseCode     *int32
	ResponseBody     *string
	BodyAvailability string
	ResultSummary    *string
	FailureSource    *string
	FailureType      *string
	DNSStatus        *string
	Resolver         *string
	ParsedResponse   *string
	TCPStatus        *string
	DNSTimeMs        *float64
	ConnectTimeMs    *float64
	DataTimeMs       *float64
	Details          []byte // jsonb: timings, TLS expiry, assertion outcomes, agent; nil for NULL
	Screenshot       []byte // bytea: a browser run's page at the failure (PNG or JPEG); nil for NULL
}

// ResultKey is what makes a result unique: one attempt of one job in one region.
type ResultKey struct {
	JobID         uuid.UUID
	Region        string
	AttemptNumber int32
	Final         bool // see ingest_dedupe in 0002_pipeline.sql: a re-run restarts at attempt 1
}

// Key returns the row's de-duplication key.
func (r *ResultRow) Key() ResultKey {
	return ResultKey{JobID: r.JobID, Region: r.Region, AttemptNumber: r.AttemptNumber, Final: r.IsFinalAttempt}
}

// IngestStats counts what happened to a batch's rows. Received = Stored + Duplicates + Dropped.
type IngestStats struct {
	Received   int
	Stored     int // new rows written to check_results
	Duplicates int // already stored (a redelivered job) or repeated within the batch
	Dropped    int // their check does not exist (deleted) in the result's organization
}

// PipelineCheck is a check as the evaluator reads it, locked for the transaction.
type PipelineCheck struct {
	ID                           uuid.UUID
	OrgID                        uuid.UUID
	Kind                         string
	Name                         string
	URL                          *string
	State                        string
	StateChangedAt               *time.Time
	Paused                       bool
	Muted                        bool
	TestRegions                  []string
	TimeoutMs                    *int32
	AlertPriority                string
	ConfirmationPeriodSeconds    int32
	RecoveryPeriodSeconds        int32
	ReminderAlertIntervalMinutes *int32
	Alerts                       []byte // jsonb: the nine *_alerts id lists
	FailingSince                 *time.Time
	PassingSince                 *time.Time
	LastAlertAt                  *time.Time
	DownAlerted                  bool
	CurrentIncidentID            *uuid.UUID
	LastRunAt                    *time.Time
}

const pipelineCheckColumns = `c.id, c.org_id, c.kind, c.name, c.url, c.state, c.state_changed_at, c.paused, c.muted,
	c.test_regions, c.timeout_ms, c.alert_priority, c.confirmation_period_seconds, c.recovery_period_seconds,
	c.reminder_alert_interval_minutes, c.alerts, c.failing_since, c.passing_since, c.last_alert_at,
	c.down_alerted, c.current_incident_id, c.last_run_at`

func scanPipelineCheck(row pgx.CollectableRow) (*PipelineCheck, error) {
	var c PipelineCheck
	var id, org, incident pgtype.UUID
	err := row.Scan(&id, &org, &c.Kind, &c.Name, &c.URL, &c.State, &c.StateChangedAt, &c.Paused, &c.Muted,
		&c.TestRegions, &c.TimeoutMs, &c.AlertPriority, &c.ConfirmationPeriodSeconds, &c.RecoveryPeriodSeconds,
		&c.ReminderAlertIntervalMinutes, &c.Alerts, &c.FailingSince, &c.PassingSince, &c.LastAlertAt,
		&c.DownAlerted, &incident, &c.LastRunAt)
	c.ID, c.OrgID, c.CurrentIncidentID = id.Bytes, org.Bytes, fromPgUUIDPtr(incident)
	return &c, err
}

// The pipeline passes uuids as pgtype.UUID: google/uuid's UUID encodes through its
// driver.Valuer (a string) and decodes through sql.Scanner, which costs more than the rest of
// a batch's encoding together.

func pgUUID(u uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: u, Valid: true} }

func pgUUIDPtr(u *uuid.UUID) pgtype.UUID {
	if u == nil {
		return pgtype.UUID{}
	}
	return pgUUID(*u)
}

func fromPgUUIDPtr(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}

// JudgeFunc is the evaluator's part of a pipeline transaction: checks are locked (FOR NO KEY
// UPDATE, in id order) and sorted by id; finals are the newly stored final attempts of those
// checks (none when called by JudgeDueRuns). It may run more than once when the transaction is
// retried, so it must not keep state across calls.
type JudgeFunc func(ctx context.Context, tx *PipelineTx, checks []*PipelineCheck, finals []ResultRow) error

// IngestResults stores a batch of results in one transaction:
//
//  1. repeats within the batch are dropped, then every key is inserted into ingest_dedupe in
//     key order (ON CONFLICT DO NOTHING); only keys inserted now are new;
//  2. the checks of the new rows are locked in id order, scoped to each row's organization;
//     rows whose check is missing are dropped;
//  3. the remaining rows are written to check_results with COPY;
//  4. judge (if not nil) runs with the locked checks that got new final attempts;
//  5. commit.
//
// A transaction that loses a deadlock or serialization race is retried.
func (s *Store) IngestResults(ctx context.Context, rows []ResultRow, judge JudgeFunc) (IngestStats, error) {
	rows, repeats := uniqueResults(rows)
	var stats IngestStats
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		stats = IngestStats{Received: len(rows)} // inTx may run this again after a conflict
		fresh, err := insertDedupeKeys(ctx, tx, rows)
		if err != nil {
			return err
		}
		stats.Duplicates = len(rows) - len(fresh)
		checks, err := lockChecks(ctx, tx, checkRefs(fresh))
		if err != nil {
			return err
		}
		byID := make(map[uuid.UUID]*PipelineCheck, len(checks))
		for _, c := range checks {
			byID[c.ID] = c
		}
		accepted := fresh[:0]
		for _, r := range fresh {
			if c := byID[r.CheckID]; c != nil && c.OrgID == r.OrgID {
				accepted = append(accepted, r)
			}
		}
		stats.Dropped = len(fresh) - len(accepted)
		if err := copyResults(ctx, tx, accepted); err != nil {
			return err
		}
		stats.Stored = len(accepted)
		if judge == nil {
			return nil
		}
		var finals []ResultRow
		withFinals := map[uuid.UUID]bool{}
		for _, r := range accepted {
			if r.IsFinalAttempt {
				finals = append(finals, r)
				withFinals[r.CheckID] = true
			}
		}
		if len(finals) == 0 {
			return nil
		}
		judged := make([]*PipelineCheck, 0, len(withFinals))
		for _, c := range checks {
			if withFinals[c.ID] {
				judged = append(judged, c)
			}
		}
		return judge(ctx, &PipelineTx{tx: tx}, judged, finals)
	})
	if err != nil {
		return IngestStats{}, err
	}
	stats.Received += repeats
	stats.Duplicates += repeats
	return stats, nil
}

// uniqueResults keeps the first row of each key and reports how many repeats it removed.
func uniqueResults(rows []ResultRow) ([]ResultRow, int) {
	seen := make(map[ResultKey]struct{}, len(rows))
	out := make([]ResultRow, 0, len(rows))
	for _, r := range rows {
		k := r.Key()
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, r)
	}
	return out, len(rows) - len(out)
}

// insertDedupeKeys records the rows' keys and returns the rows whose key is new. Keys are
// inserted in key order (ORDER BY in the INSERT) so that two batches sharing keys cannot
// deadlock each other.
func insertDedupeKeys(ctx context.Context, tx pgx.Tx, rows []ResultRow) ([]ResultRow, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	jobs := make([]pgtype.UUID, len(rows))
	regions := make([]string, len(rows))
	attempts := make([]int32, len(rows))
	finals := make([]bool, len(rows))
	scheduled := make([]time.Time, len(rows))
	for i, r := range rows {
		jobs[i], regions[i], attempts[i], finals[i], scheduled[i] = pgUUID(r.JobID), r.Region, r.AttemptNumber, r.IsFinalAttempt, r.ScheduledAt
	}
	res, err := tx.Query(ctx, `INSERT INTO ingest_dedupe (job_id, region, attempt_number, is_final, scheduled_at)
		SELECT j, r, a, f, s FROM unnest($1::uuid[], $2::text[], $3::int4[], $4::bool[], $5::timestamptz[]) AS u(j, r, a, f, s)
		ORDER BY j, r, a, f
		ON CONFLICT DO NOTHING
		RETURNING job_id, region, attempt_number, is_final`, jobs, regions, attempts, finals, scheduled)
	if err != nil {
		return nil, fmt.Errorf("record result keys: %w", err)
	}
	inserted := map[ResultKey]struct{}{}
	var k ResultKey
	var job pgtype.UUID
	_, err = pgx.ForEachRow(res, []any{&job, &k.Region, &k.AttemptNumber, &k.Final}, func() error {
		k.JobID = job.Bytes
		inserted[k] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record result keys: %w", err)
	}
	fresh := make([]ResultRow, 0, len(inserted))
	for _, r := range rows {
		if _, ok := inserted[r.Key()]; ok {
			fresh = append(fresh, r)
		}
	}
	return fresh, nil
}

type checkRef struct{ orgID, checkID uuid.UUID }

func checkRefs(rows []ResultRow) []checkRef {
	seen := map[checkRef]struct{}{}
	var out []checkRef
	for _, r := range rows {
		ref := checkRef{r.OrgID, r.CheckID}
		if _, ok := seen[ref]; !ok {
			seen[ref] = struct{}{}
			out = append(out, ref)
		}
	}
	return out
}

// lockChecks locks the referenced checks that exist, in id order, and returns them sorted by id.
// FOR NO KEY UPDATE: the evaluator changes no key columns, so inserts referencing the checks
// elsewhere are not blocked.
func lockChecks(ctx context.Context, tx pgx.Tx, refs []checkRef) ([]*PipelineCheck, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	orgs := make([]pgtype.UUID, len(refs))
	ids := make([]pgtype.UUID, len(refs))
	for i, r := range refs {
		orgs[i], ids[i] = pgUUID(r.orgID), pgUUID(r.checkID)
	}
	rows, err := tx.Query(ctx, `SELECT `+pipelineCheckColumns+` FROM checks c
		JOIN unnest($1::uuid[], $2::uuid[]) AS k(org_id, id) ON c.org_id = k.org_id AND c.id = k.id
		ORDER BY c.id FOR NO KEY UPDATE OF c`, orgs, ids)
	if err != nil {
		return nil, fmt.Errorf("lock checks: %w", err)
	}
	checks, err := pgx.CollectRows(rows, scanPipelineCheck)
	if err != nil {
		return nil, fmt.Errorf("lock checks: %w", err)
	}
	return checks, nil
}

var resultColumns = []string{"id", "org_id", "check_id", "job_id", "region", "attempt_number",
	"is_final_attempt", "checked_at", "dispatched_at", "passing", "response_time_ms", "response_code",
	"response_body", "body_availability", "result_summary", "failure_source", "failure_type",
	"dns_status", "resolver", "parsed_response", "tcp_status", "dns_time_ms", "connect_time_ms",
	"data_time_ms", "details", "screenshot"}

func copyResults(ctx context.Context, tx pgx.Tx, rows []ResultRow) error {
	if len(rows) == 0 {
		return nil
	}
	src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		var details any
		if r.Details != nil {
			details = r.Details
		}
		return []any{pgUUID(r.ID), pgUUID(r.OrgID), pgUUID(r.CheckID), pgUUID(r.JobID), r.Region, r.AttemptNumber,
			r.IsFinalAttempt, r.CheckedAt, r.DispatchedAt, r.Passing, r.ResponseTimeMs, r.ResponseCode,
			r.ResponseBody, r.BodyAvailability, r.ResultSummary, r.FailureSource, r.FailureType,
			r.DNSStatus, r.Resolver, r.ParsedResponse, r.TCPStatus, r.DNSTimeMs, r.ConnectTimeMs,
			r.DataTimeMs, details, r.Screenshot}, nil
	})
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"check_results"}, resultColumns, src)
	if err != nil {
		return fmt.Errorf("copy results: %w", err)
	}
	if int(n) != len(rows) {
		return fmt.Errorf("copy results: wrote %d of %d rows", n, len(rows))
	}
	return nil
}

// JudgeDueRuns runs judge, in one transaction, on up to limit checks that have a run whose
// deadline is at or before now, locked in id order. Checks locked by another transaction are
// skipped (SKIP LOCKED): whoever holds them judges them, or the next sweep does. It returns how
// many checks were judged.
func (s *Store) JudgeDueRuns(ctx context.Context, now time.Time, limit int, judge JudgeFunc) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+pipelineCheckColumns+` FROM checks c
			WHERE (c.org_id, c.id) IN (
				SELECT DISTINCT org_id, check_id FROM check_runs WHERE deadline <= $1 ORDER BY check_id LIMIT $2)
			ORDER BY c.id FOR NO KEY UPDATE OF c SKIP LOCKED`, now, limit)
		if err != nil {
			return fmt.Errorf("lock checks with due runs: %w", err)
		}
		checks, err := pgx.CollectRows(rows, scanPipelineCheck)
		if err != nil {
			return fmt.Errorf("lock checks with due runs: %w", err)
		}
		n = len(checks)
		if n == 0 {
			return nil
		}
		return judge(ctx, &PipelineTx{tx: tx}, checks, nil)
	})
	return n, err
}
