package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Reasons a run did not run (skipped_runs.reason).
const (
	// SkipExpired: the agent got the job past its deadline (late in the queue, or redelivered
	// after its agent died) and reported it not run.
	SkipExpired = "EXPIRED"
	// SkipShutdown: the agent stopped with the job in hand and no delivery was left.
	SkipShutdown = "SHUTDOWN"
	// SkipShed: shed in rotation with the other checks under overload, because this check's
	// previous run ran — by the scheduler, unpublished, while the region's queue was behind,
	// or by the agent, the job having come late.
	SkipShed = "SHED"
	// SkipNotQueued: the scheduler could not queue the run before its deadline.
	SkipNotQueued = "NOT_QUEUED"
	// SkipLate: the run's result reached the control plane after its job's last attempt
	// could have ended, plus a slack (ingest.LateSlack); it is recorded, never judged.
	SkipLate = "LATE"
)

// SkippedRun is one region's run of a check that did not run, and why.
type SkippedRun struct {
	OrgID, CheckID uuid.UUID
	Region         string
	ScheduledAt    time.Time
	Reason         string
}

// RecordSkippedRuns stores skipped runs; skips of deleted checks, and of a run's region already
// recorded, are ignored. It returns how many were recorded.
func (s *Store) RecordSkippedRuns(ctx context.Context, runs []SkippedRun) (int64, error) {
	n, err := recordSkippedRuns(ctx, s.q, runs, s.now())
	return n, translate(err)
}

func recordSkippedRuns(ctx context.Context, q *dbsqlc.Queries, runs []SkippedRun, now time.Time) (int64, error) {
	if len(runs) == 0 {
		return 0, nil
	}
	p := dbsqlc.RecordSkippedRunsParams{RecordedAt: now, OrgIds: make([]uuid.UUID, len(runs)),
		CheckIds: make([]uuid.UUID, len(runs)), Regions: make([]string, len(runs)),
		ScheduledAts: make([]time.Time, len(runs)), Reasons: make([]string, len(runs))}
	for i, r := range runs {
		p.OrgIds[i], p.CheckIds[i], p.Regions[i], p.ScheduledAts[i], p.Reasons[i] = r.OrgID, r.CheckID, r.Region, r.ScheduledAt, r.Reason
	}
	return q.RecordSkippedRuns(ctx, p)
}

// SkippedRunsWindow is the window of Check.SkippedRuns24h and CheckSummary.SkippedRuns24h.
const SkippedRunsWindow = 24 * time.Hour

// skippedRetention is how long skipped runs are kept (twice the window the API shows).
const skippedRetention = 2 * SkippedRunsWindow

// skippedRunCounts returns the skipped runs of the last SkippedRunsWindow of the
// organization's checks ids (checks without any are absent).
func (s *Store) skippedRunCounts(ctx context.Context, q *dbsqlc.Queries, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.CountSkippedRuns(ctx, dbsqlc.CountSkippedRunsParams{OrgID: orgID, CheckIds: ids, Since: s.now().Add(-SkippedRunsWindow)})
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[uuid.UUID]int64, len(rows))
	for _, r := range rows {
		out[r.CheckID] = r.Skipped
	}
	return out, nil
}

// PruneSkippedRuns deletes skipped runs older than their retention (two days) as of now and
// returns how many.
func (s *Store) PruneSkippedRuns(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.q.PruneSkippedRuns(ctx, now.Add(-skippedRetention))
	return n, translate(err)
}
