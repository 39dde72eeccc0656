package evaluator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// BenchmarkJudgeFinals compares the cost per final attempt of a batch of finals, one per check:
// of single-region checks (every run complete at once), and of three-region checks whose
// regions report in three batches (the runs pending in between: check_runs in the locking
// path, memory in the owner's):
//
//   - store: IngestResults without judging, the ceiling both paths share;
//   - locking: IngestBatch, which stores the batch and judges it under the checks' locks (its
//     judging costs locking − store);
//   - owner: Owner.Judge on the same batch already stored (the storing is not timed).
func BenchmarkJudgeFinals(b *testing.B) {
	const checks = 100
	all := check.DefaultRegions()
	for _, regions := range []int{1, 3} {
		for _, mode := range []string{"store", "locking", "owner"} {
			b.Run(fmt.Sprintf("regions=%d/%s", regions, mode), func(b *testing.B) {
				benchJudgeFinals(b, mode, all[:regions], checks)
			})
		}
	}
}

func benchJudgeFinals(b *testing.B, mode string, regions []string, checks int) {
	ctx := context.Background()
	clock := &testClock{t: t0}
	specs := make([]testCheck, checks)
	for i := range specs {
		specs[i] = testCheck{regions: regions, quorum: check.QuorumMajority, timeoutMs: 1000, reminder: -1}
	}
	w := newWorld(b, clock, specs)
	o := NewOwner(w.e, OwnerConfig{})
	if err := o.Take(ctx, allShards); err != nil {
		b.Fatal(err)
	}
	// Batch i carries region i mod len(regions) of run i / len(regions) of every check.
	jobs := make([]uuid.UUID, checks)
	batch := func(i int) []store.ResultRow {
		run, region := i/len(regions), i%len(regions)
		at := t0.Add(time.Duration(run) * time.Second)
		clock.Set(at.Add(time.Duration(region) * time.Millisecond))
		if region == 0 {
			for c := range jobs {
				jobs[c] = uuid.New()
			}
		}
		rows := make([]store.ResultRow, checks)
		for c := range rows {
			rows[c] = store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[c], JobID: jobs[c],
				Region: regions[region], AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: clock.Now(),
				Passing: true, ResponseTimeMs: 42, BodyAvailability: "NONE"}
		}
		return rows
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		rows := batch(i)
		if mode == "owner" {
			if _, err := w.st.IngestResults(ctx, rows, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		var err error
		switch mode {
		case "store":
			_, err = w.st.IngestResults(ctx, rows, nil)
		case "locking":
			_, err = w.e.IngestBatch(ctx, rows)
		case "owner":
			err = o.Judge(ctx, rows)
		}
		if err != nil {
			b.Fatal(fmt.Errorf("%s: %w", mode, err))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*checks), "ns/final")
}
