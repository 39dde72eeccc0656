package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// This file is the persistence of the result pipeline (docs/architecture.md, "The flow", steps 7 and 8): one
// transaction per batch of results that de-duplicates, stores with COPY and hands the batch's
// final attempts, with their checks locked, to the evaluator, which decides everything else.
// pipeline_eval.go holds what the evaluator may write inside that transaction;
// pipeline_partitions.go the partition maintenance; queries/pipeline.sql the queries.

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
	TLSTimeMs        *float64        // kept in Details, not in a column; here for the rollups
	FirstByteTimeMs  *float64        // likewise
	Details          json.RawMessage // timings, TLS expiry, assertion outcomes, agent; nil for NULL
	Screenshot       []byte          // a browser run's page at the failure (PNG or JPEG); nil for NULL
	Artifacts        []Artifact      // a scripted browser run's files, in the order it kept them
	// NotRunReason, when set, says the agent did not run the job and why (SkipExpired,
	// SkipShutdown, SkipShed), or that its result came too late (SkipLate): the row is
	// recorded in skipped_runs, not in check_results, and not judged.
	NotRunReason string
}

// ResultKey is what makes a result unique: one attempt of one job in one region.
type ResultKey struct {
	JobID         uuid.UUID
	Region        string
	AttemptNumber int32
	IsFinal       bool // see ingest_dedupe in 0002_pipeline.sql: a re-run restarts at attempt 1
}

// Key returns the row's de-duplication key.
func (r *ResultRow) Key() ResultKey {
	return ResultKey{JobID: r.JobID, Region: r.Region, AttemptNumber: r.AttemptNumber, IsFinal: r.IsFinalAttempt}
}

// IngestStats counts what happened to a batch's rows. Received = Stored + Skipped +
// Duplicates + Dropped.
type IngestStats struct {
	Received   int
	Stored     int // new rows written to check_results
	Skipped    int // new not-run rows (NotRunReason) recorded in skipped_runs
	Duplicates int // already stored (a redelivered job) or repeated within the batch
	Dropped    int // their check does not exist (deleted) in the result's organization
	// Accepted are the new rows, stored or skipped, for the caller's accounting (lateness,
	// skips per region).
	Accepted []ResultRow
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
	Alerts                       json.RawMessage // the nine *_alerts id lists
	FailingSince                 *time.Time
	PassingSince                 *time.Time
	LastAlertAt                  *time.Time
	DownAlerted                  bool
	CurrentIncidentID            *uuid.UUID
	LastRunAt                    *time.Time
	RegionQuorum                 string // check.Quorum
	DegradedResponseTimeMs       *int32 // nil: slowness is not judged
}

// pipelineCheck maps a locked check row (LockChecksForResults and LockChecksWithDueRuns
// return the same columns) to the evaluator's view.
func pipelineCheck(r dbsqlc.LockChecksForResultsRow) *PipelineCheck {
	return &PipelineCheck{ID: r.ID, OrgID: r.OrgID, Kind: r.Kind, Name: r.Name, URL: r.Url, State: r.State,
		StateChangedAt: r.StateChangedAt, Paused: r.Paused, Muted: r.Muted, TestRegions: r.TestRegions,
		TimeoutMs: r.TimeoutMs, AlertPriority: r.AlertPriority, ConfirmationPeriodSeconds: r.ConfirmationPeriodSeconds,
		RecoveryPeriodSeconds: r.RecoveryPeriodSeconds, ReminderAlertIntervalMinutes: r.ReminderAlertIntervalMinutes,
		Alerts: r.Alerts, FailingSince: r.FailingSince, PassingSince: r.PassingSince, LastAlertAt: r.LastAlertAt,
		DownAlerted: r.DownAlerted, CurrentIncidentID: r.CurrentIncidentID, LastRunAt: r.LastRunAt,
		RegionQuorum: r.RegionQuorum, DegradedResponseTimeMs: r.DegradedResponseTimeMs}
}

// JudgeFunc is the evaluator's part of a pipeline transaction: checks are locked (their check_progress
// rows, in id order) and sorted by id; finals are the newly stored final attempts of those
// checks (none when called by JudgeDueRuns). JudgeChecks hands it checks read without a lock,
// and fences their progress write instead (pipeline_owner.go). It may run more than once when the transaction is
// retried, so it must not keep state across calls.
type JudgeFunc func(ctx context.Context, tx *PipelineTx, checks []*PipelineCheck, finals []ResultRow) error

// IngestResults stores a batch of results in one transaction:
//
//  1. repeats within the batch are dropped, then every key is inserted into ingest_dedupe in
//     key order (ON CONFLICT DO NOTHING); only keys inserted now are new;
//  2. the checks of the new rows are locked in id order, scoped to each row's organization
//     (read without a lock when there is no judge: the shard's owner judges them, fenced,
//     evaluator.Owner); rows whose check is missing are dropped;
//  3. the remaining rows are written to check_results with COPY, and the final attempts to the
//     regional view and the hourly rollups;
//  4. judge (if not nil) runs with the locked checks that got new final attempts;
//  5. commit.
//
// A transaction that loses a deadlock or serialization race is retried.
func (s *Store) IngestResults(ctx context.Context, rows []ResultRow, judge JudgeFunc) (IngestStats, error) {
	rows, repeats := uniqueResults(rows)
	var stats IngestStats
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		stats = IngestStats{Received: len(rows)} // inTx may run this again after a conflict
		q := s.q.WithTx(tx)
		fresh, err := insertResultKeys(ctx, q, rows)
		if err != nil {
			return err
		}
		stats.Duplicates = len(rows) - len(fresh)
		checks, err := checksOf(ctx, q, fresh, judge != nil)
		if err != nil {
			return err
		}
		byID := make(map[uuid.UUID]*PipelineCheck, len(checks))
		for _, c := range checks {
			byID[c.ID] = c
		}
		accepted := keepRows(fresh, func(r *ResultRow) bool {
			c := byID[r.CheckID]
			return c != nil && c.OrgID == r.OrgID
		})
		stats.Dropped = len(fresh) - len(accepted)
		stats.Accepted = accepted
		probes, skipped := splitNotRun(accepted)
		if _, err := recordSkippedRuns(ctx, q, skipped, s.now()); err != nil {
			return err
		}
		stats.Skipped = len(skipped)
		if err := copyResults(ctx, q, probes); err != nil {
			return err
		}
		if err := saveRegionResults(ctx, q, probes); err != nil {
			return err
		}
		if err := saveRollups(ctx, q, probes); err != nil {
			return err
		}
		stats.Stored = len(probes)
		if judge == nil {
			return nil
		}
		var finals []ResultRow
		withFinals := map[uuid.UUID]bool{}
		for _, r := range probes {
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
		return judge(ctx, newPipelineTx(tx, checks), judged, finals)
	})
	if err != nil {
		return IngestStats{}, err
	}
	stats.Received += repeats
	stats.Duplicates += repeats
	return stats, nil
}

// splitNotRun separates the rows of probes from those of runs the agent did not run. probes
// is rows itself when every row is a probe, else a new slice: rows is the caller's accounting.
func splitNotRun(rows []ResultRow) (probes []ResultRow, skipped []SkippedRun) {
	for i := range rows {
		if r := &rows[i]; r.NotRunReason != "" {
			skipped = append(skipped, SkippedRun{OrgID: r.OrgID, CheckID: r.CheckID, Region: r.Region,
				ScheduledAt: r.ScheduledAt, Reason: r.NotRunReason})
		}
	}
	return keepRows(rows, func(r *ResultRow) bool { return r.NotRunReason == "" }), skipped
}

// keepRows returns the rows that keep reports true for: rows itself when that is all of them
// (the common case, which then copies no row), else a new slice. It never writes to rows,
// which a retried transaction reads again.
func keepRows(rows []ResultRow, keep func(*ResultRow) bool) []ResultRow {
	for i := range rows {
		if keep(&rows[i]) {
			continue
		}
		out := make([]ResultRow, i, len(rows)-1)
		copy(out, rows[:i])
		for j := i + 1; j < len(rows); j++ {
			if keep(&rows[j]) {
				out = append(out, rows[j])
			}
		}
		return out
	}
	return rows
}

// uniqueResults keeps the first row of each key (keepRows) and reports how many repeats it
// removed.
func uniqueResults(rows []ResultRow) ([]ResultRow, int) {
	seen := make(map[ResultKey]struct{}, len(rows))
	out := keepRows(rows, func(r *ResultRow) bool {
		k := r.Key()
		if _, dup := seen[k]; dup {
			return false
		}
		seen[k] = struct{}{}
		return true
	})
	return out, len(rows) - len(out)
}

// insertResultKeys records the rows' keys and returns the rows whose key is new.
func insertResultKeys(ctx context.Context, q *dbsqlc.Queries, rows []ResultRow) ([]ResultRow, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	n := len(rows)
	arg := dbsqlc.InsertResultKeysParams{JobIds: make([]uuid.UUID, n), Regions: make([]string, n),
		AttemptNumbers: make([]int32, n), Finals: make([]bool, n), ScheduledAts: make([]time.Time, n)}
	for i, r := range rows {
		arg.JobIds[i], arg.Regions[i], arg.AttemptNumbers[i] = r.JobID, r.Region, r.AttemptNumber
		arg.Finals[i], arg.ScheduledAts[i] = r.IsFinalAttempt, r.ScheduledAt
	}
	keys, err := q.InsertResultKeys(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("record result keys: %w", err)
	}
	inserted := make(map[ResultKey]struct{}, len(keys))
	for _, k := range keys {
		inserted[ResultKey(k)] = struct{}{}
	}
	return keepRows(rows, func(r *ResultRow) bool {
		_, ok := inserted[r.Key()]
		return ok
	}), nil
}

// checksOf returns the checks of the rows that exist, each in its row's organization: locked
// in id order and sorted by id when lock is set, else only their ids and organizations
// (nothing is judged with them).
func checksOf(ctx context.Context, q *dbsqlc.Queries, rows []ResultRow, lock bool) ([]*PipelineCheck, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	arg, asked := checkArgs(len(rows), func(i int) CheckRef { return CheckRef{OrgID: rows[i].OrgID, CheckID: rows[i].CheckID} })
	if !lock {
		return existingChecks(ctx, q, dbsqlc.ExistingChecksParams(arg), asked)
	}
	locked, err := q.LockChecksForResults(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("lock checks: %w", err)
	}
	checks := make([]*PipelineCheck, 0, len(locked))
	for _, r := range locked {
		if _, ok := asked[CheckRef{OrgID: r.OrgID, CheckID: r.ID}]; ok {
			checks = append(checks, pipelineCheck(r))
		}
	}
	return checks, nil
}

// checkArgs are the parameters of a read of n checks (ref(i) for i < n; each id and
// organization once) and the pairs asked for, which the caller keeps of what comes back.
func checkArgs(n int, ref func(i int) CheckRef) (dbsqlc.LockChecksForResultsParams, map[CheckRef]struct{}) {
	asked := make(map[CheckRef]struct{}, n)
	ids, orgs := map[uuid.UUID]struct{}{}, map[uuid.UUID]struct{}{}
	var arg dbsqlc.LockChecksForResultsParams
	for i := range n {
		r := ref(i)
		asked[r] = struct{}{}
		if _, ok := ids[r.CheckID]; !ok {
			ids[r.CheckID] = struct{}{}
			arg.CheckIds = append(arg.CheckIds, r.CheckID)
		}
		if _, ok := orgs[r.OrgID]; !ok {
			orgs[r.OrgID] = struct{}{}
			arg.OrgIds = append(arg.OrgIds, r.OrgID)
		}
	}
	return arg, asked
}

func copyResults(ctx context.Context, q *dbsqlc.Queries, rows []ResultRow) error {
	if len(rows) == 0 {
		return nil
	}
	params := make([]dbsqlc.CopyResultsParams, len(rows))
	for i := range rows {
		r := &rows[i]
		index, blob, err := encodeArtifacts(r.Artifacts)
		if err != nil {
			return err
		}
		params[i] = dbsqlc.CopyResultsParams{ID: r.ID, OrgID: r.OrgID, CheckID: r.CheckID, JobID: r.JobID,
			Region: r.Region, AttemptNumber: r.AttemptNumber, IsFinalAttempt: r.IsFinalAttempt,
			CheckedAt: r.CheckedAt, DispatchedAt: r.DispatchedAt, Passing: r.Passing, ResponseTimeMs: r.ResponseTimeMs,
			ResponseCode: r.ResponseCode, ResponseBody: r.ResponseBody, BodyAvailability: r.BodyAvailability,
			ResultSummary: r.ResultSummary, FailureSource: r.FailureSource, FailureType: r.FailureType,
			DnsStatus: r.DNSStatus, Resolver: r.Resolver, ParsedResponse: r.ParsedResponse, TcpStatus: r.TCPStatus,
			DnsTimeMs: r.DNSTimeMs, ConnectTimeMs: r.ConnectTimeMs, DataTimeMs: r.DataTimeMs, Details: r.Details,
			Screenshot: r.Screenshot, ArtifactIndex: index, Artifacts: blob}
	}
	n, err := q.CopyResults(ctx, params)
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
		locked, err := s.q.WithTx(tx).LockChecksWithDueRuns(ctx, dbsqlc.LockChecksWithDueRunsParams{Now: now, MaxChecks: int64(limit)})
		if err != nil {
			return fmt.Errorf("lock checks with due runs: %w", err)
		}
		n = len(locked)
		if n == 0 {
			return nil
		}
		checks := make([]*PipelineCheck, n)
		for i, r := range locked {
			checks[i] = pipelineCheck(dbsqlc.LockChecksForResultsRow(r))
		}
		return judge(ctx, newPipelineTx(tx, checks), checks, nil)
	})
	return n, err
}

// existingChecks returns the checks asked for that exist, as their ids and organizations only,
// in no particular order.
func existingChecks(ctx context.Context, q *dbsqlc.Queries, arg dbsqlc.ExistingChecksParams, asked map[CheckRef]struct{}) ([]*PipelineCheck, error) {
	rows, err := q.ExistingChecks(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	checks := make([]*PipelineCheck, 0, len(rows))
	for _, r := range rows {
		if _, ok := asked[CheckRef{OrgID: r.OrgID, CheckID: r.ID}]; ok {
			checks = append(checks, &PipelineCheck{ID: r.ID, OrgID: r.OrgID})
		}
	}
	return checks, nil
}
