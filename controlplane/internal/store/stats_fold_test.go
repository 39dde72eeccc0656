package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestMonthlyFoldKeepsRunCounts counts verdicts across month ends, folds the closed months,
// counts late verdicts of a folded month and of open ones, and checks after each step that the
// organization's SLA report (monthly counters of folded months, daily ones elsewhere) and one
// check's report (daily counters) both equal the sum of the verdicts themselves.
func TestMonthlyFoldKeepsRunCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "fold", "paid")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateOrganization(ctx, "fold other", "paid")
	if err != nil {
		t.Fatal(err)
	}
	a, b, foreign := newFoldCheck(t, st, org.ID), newFoldCheck(t, st, org.ID), newFoldCheck(t, st, other.ID)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	var all []store.Verdict
	count := func(vs ...store.Verdict) {
		t.Helper()
		countVerdicts(t, st, vs)
		all = append(all, vs...)
	}
	v := func(o, c uuid.UUID, d time.Time, passing bool) store.Verdict {
		return store.Verdict{OrgID: o, CheckID: c, Day: d, Passing: passing}
	}
	// One batch spanning January's end and February's, and repeats of one check and day.
	count(v(org.ID, a, day(1, 31), true), v(org.ID, a, day(1, 31), false), v(org.ID, a, day(2, 1), true),
		v(org.ID, b, day(1, 15), false), v(org.ID, b, day(2, 28), true), v(org.ID, b, day(3, 1), true),
		v(other.ID, foreign, day(1, 20), true))
	count(v(org.ID, a, day(1, 1), true), v(org.ID, a, day(2, 14), false), v(org.ID, b, day(3, 9), false))

	// Whole months (February) and edge days (January 15-31, March 1-9) in one report.
	periods := [][2]time.Time{{day(1, 15), day(3, 10)}, {day(1, 1), day(4, 1)}, {day(2, 1), day(3, 1)}}
	check := func(step string) {
		t.Helper()
		for _, p := range periods {
			rep, err := st.SLAReport(ctx, org.ID, store.SLAScope{}, p[0], p[1])
			if err != nil {
				t.Fatal(err)
			}
			if len(rep) != 2 {
				t.Fatalf("%s: %d checks in the organization's report, want 2", step, len(rep))
			}
			for _, r := range rep {
				runs, failed := sumVerdicts(all, org.ID, r.CheckID, p[0], p[1])
				if r.Runs != runs || r.FailedRuns != failed {
					t.Errorf("%s, %s to %s, organization report: check %s runs %d/%d failed, want %d/%d", step,
						p[0].Format(time.DateOnly), p[1].Format(time.DateOnly), r.CheckID, r.Runs, r.FailedRuns, runs, failed)
				}
				id := r.CheckID
				one, err := st.SLAReport(ctx, org.ID, store.SLAScope{CheckID: &id}, p[0], p[1])
				if err != nil {
					t.Fatal(err)
				}
				if one[0].Runs != runs || one[0].FailedRuns != failed {
					t.Errorf("%s: check report runs %d/%d, want %d/%d", step, one[0].Runs, one[0].FailedRuns, runs, failed)
				}
			}
		}
	}
	check("before any fold")

	for _, m := range []time.Time{day(1, 20), day(2, 1)} {
		n, err := st.FoldMonthlyStats(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("fold of %s wrote no monthly rows", m.Format("2006-01"))
		}
	}
	if n, err := st.FoldMonthlyStats(ctx, day(1, 31)); err != nil || n != 0 {
		t.Errorf("second fold of January: %d rows, %v; want 0, nil", n, err)
	}
	monthly := func(c uuid.UUID, m time.Time) int64 {
		var runs int64
		if err := st.Pool().QueryRow(ctx, `SELECT coalesce(sum(runs), 0) FROM check_monthly_stats WHERE check_id = $1 AND month = $2`,
			c, m).Scan(&runs); err != nil {
			t.Fatal(err)
		}
		return runs
	}
	if got := monthly(a, day(1, 1)); got != 3 {
		t.Errorf("January's monthly runs of check a = %d, want 3", got)
	}
	if got := monthly(foreign, day(1, 1)); got != 1 {
		t.Errorf("January's monthly runs of the other organization's check = %d, want 1", got)
	}
	check("after folding January and February")

	// Late verdicts: of folded January (a check's first of that month too), of folded February,
	// and of open March and April.
	count(v(org.ID, a, day(1, 31), false), v(org.ID, b, day(1, 2), true), v(org.ID, a, day(2, 28), true),
		v(org.ID, b, day(3, 31), false), v(org.ID, a, day(4, 1), true))
	if got := monthly(b, day(1, 1)); got != 2 {
		t.Errorf("January's monthly runs of check b after a late verdict = %d, want 2", got)
	}
	if got := monthly(b, day(3, 1)); got != 0 {
		t.Errorf("open March has monthly runs %d, want none", got)
	}
	check("after late verdicts")
}

func newFoldCheck(t *testing.T, st *store.Store, org uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if _, err := st.Pool().Exec(context.Background(), `INSERT INTO checks (id, org_id, kind, name, test_interval, timeout_ms,
			test_regions, alert_priority, confirmation_period_seconds, recovery_period_seconds, spec, created_at)
		VALUES ($1, $2, 'UPTIME', 'fold', 60, 5000, '{cloud:us-east-1}', 'HIGH', 30, 60,
			'{"url": "https://example.com/", "method": "GET"}', '2025-12-01Z')`, id, org); err != nil {
		t.Fatal(err)
	}
	return id
}

// countVerdicts counts vs as the evaluator does: in the pipeline transaction of a batch (one
// fresh final result of the first verdict's check).
func countVerdicts(t *testing.T, st *store.Store, vs []store.Verdict) {
	t.Helper()
	at := time.Date(2026, 4, 2, 12, 0, 0, 0, time.UTC)
	row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: vs[0].OrgID, CheckID: vs[0].CheckID, JobID: uuid.Must(uuid.NewV7()),
		Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at, Passing: true,
		BodyAvailability: "NOT_RECORDED"}
	judged := false
	_, err := st.IngestResults(context.Background(), []store.ResultRow{row},
		func(ctx context.Context, tx *store.PipelineTx, _ []*store.PipelineCheck, _ []store.ResultRow) error {
			judged = true
			return tx.CountVerdicts(ctx, vs)
		})
	if err != nil || !judged {
		t.Fatalf("count verdicts: judged %v, %v", judged, err)
	}
}

// sumVerdicts is the runs and failed runs of a check on the UTC days [from, to) touches.
func sumVerdicts(vs []store.Verdict, org, c uuid.UUID, from, to time.Time) (runs, failed int64) {
	for _, v := range vs {
		if v.OrgID == org && v.CheckID == c && !v.Day.Before(from) && v.Day.Before(to) {
			runs++
			if !v.Passing {
				failed++
			}
		}
	}
	return runs, failed
}
