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

// BenchmarkJudgeFinals compares the cost per final attempt of a batch of single-region finals
// (one per check, every run complete at once):
//
//   - store: IngestResults without judging, the ceiling both paths share;
//   - locking: IngestBatch, which stores the batch and judges it under the checks' locks (its
//     judging costs locking − store);
//   - owner: Owner.Judge on the same batch already stored (the storing is not timed).
func BenchmarkJudgeFinals(b *testing.B) {
	const checks = 100
	for _, mode := range []string{"store", "locking", "owner"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			clock := &testClock{t: t0}
			specs := make([]testCheck, checks)
			for i := range specs {
				specs[i] = testCheck{regions: []string{"cloud:us-east-1"}, quorum: check.QuorumMajority, timeoutMs: 1000, reminder: -1}
			}
			w := newWorld(b, clock, specs)
			o := NewOwner(w.e, OwnerConfig{})
			if err := o.Take(ctx, allShards); err != nil {
				b.Fatal(err)
			}
			batch := func(i int) []store.ResultRow {
				at := t0.Add(time.Duration(i) * time.Second)
				clock.Set(at)
				rows := make([]store.ResultRow, checks)
				for c := range rows {
					rows[c] = store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[c], JobID: uuid.New(),
						Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at,
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
		})
	}
}
