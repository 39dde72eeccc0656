package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// A not-run result is recorded as a skipped run — once, however often it is delivered — and
// not stored as a probe result nor judged; the check shows it in SkippedRuns24h. The
// scheduler's skips of the same run and region add nothing.
func TestNotRunResultsAreSkippedRuns(t *testing.T) {
	t.Parallel()
	st, _, org := schedSetup(t)
	ctx := context.Background()
	id := schedInsertCheck(t, st, org, nil, "UPTIME", false, "", nil, nil)
	due := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org, CheckID: id, JobID: uuid.Must(uuid.NewV7()),
		Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: due, CheckedAt: due.Add(40 * time.Second),
		BodyAvailability: "NONE", NotRunReason: store.SkipExpired}
	judged := 0
	judge := func(context.Context, *store.PipelineTx, []*store.PipelineCheck, []store.ResultRow) error {
		judged++
		return nil
	}
	for range 2 { // delivered twice
		stats, err := st.IngestResults(ctx, []store.ResultRow{row}, judge)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Stored != 0 {
			t.Errorf("stats %+v: a not-run result stored as a result", stats)
		}
	}
	if judged != 0 {
		t.Errorf("a not-run result was judged")
	}
	if n, err := st.RecordSkippedRuns(ctx, []store.SkippedRun{{OrgID: org, CheckID: id, Region: row.Region, ScheduledAt: due, Reason: store.SkipNotQueued},
		{OrgID: org, CheckID: uuid.Must(uuid.NewV7()), Region: row.Region, ScheduledAt: due, Reason: store.SkipNotQueued}}); err != nil || n != 0 {
		t.Errorf("recorded %d (%v), want 0: the run is known, the other check does not exist", n, err)
	}
	c, err := st.GetCheck(ctx, org, id, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.SkippedRuns24h != 1 {
		t.Errorf("skipped_runs_24h %d, want 1", c.SkippedRuns24h)
	}
	var results int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM check_results WHERE check_id = $1`, id).Scan(&results); err != nil || results != 0 {
		t.Errorf("%d results stored (%v), want none", results, err)
	}
	if n, err := st.PruneSkippedRuns(ctx, time.Now().Add(72*time.Hour)); err != nil || n != 1 {
		t.Errorf("pruned %d (%v), want the one past retention", n, err)
	}
}
