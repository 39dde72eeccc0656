package ingest

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Stored rows are accounted once each: not-run rows as skipped runs per region and reason
// (with their final attempt), first attempts by their lateness, late past LateAfter.
func TestRunMetricsAccount(t *testing.T) {
	t.Parallel()
	m := newRunMetrics(NewRunsSkipped())
	due := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := due.Add(d); return &v }
	m.account([]store.ResultRow{
		{Region: "cloud:us-east-1", AttemptNumber: 1, ScheduledAt: due, DispatchedAt: at(20 * time.Millisecond)},
		{Region: "cloud:us-east-1", AttemptNumber: 1, ScheduledAt: due, DispatchedAt: at(3 * time.Second)},
		{Region: "cloud:us-east-1", AttemptNumber: 2, ScheduledAt: due, DispatchedAt: at(9 * time.Second)}, // a retry: not a run's start
		{Region: "cloud:eu-west-2", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: due, NotRunReason: store.SkipExpired},
		{Region: "cloud:eu-west-2", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: due, NotRunReason: store.SkipShutdown},
		// A run whose two attempts both came late is one skipped run.
		{Region: "cloud:eu-west-2", AttemptNumber: 1, ScheduledAt: due, NotRunReason: store.SkipLate},
		{Region: "cloud:eu-west-2", AttemptNumber: 2, IsFinalAttempt: true, ScheduledAt: due, NotRunReason: store.SkipLate},
	})
	if n := testutil.ToFloat64(m.skipped.WithLabelValues("cloud:eu-west-2", store.SkipExpired)); n != 1 {
		t.Errorf("EXPIRED skips %v, want 1", n)
	}
	if n := testutil.ToFloat64(m.skipped.WithLabelValues("cloud:eu-west-2", store.SkipShutdown)); n != 1 {
		t.Errorf("SHUTDOWN skips %v, want 1", n)
	}
	if n := testutil.ToFloat64(m.skipped.WithLabelValues("cloud:eu-west-2", store.SkipLate)); n != 1 {
		t.Errorf("LATE skips %v, want 1", n)
	}
	if n := testutil.ToFloat64(m.late.WithLabelValues("cloud:us-east-1")); n != 1 {
		t.Errorf("late runs %v, want 1", n)
	}
	if n := testutil.CollectAndCount(m.lateness); n != 1 {
		t.Errorf("lateness series %d, want one region's", n)
	}
}
