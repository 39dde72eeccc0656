package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// BenchmarkSLAReport measures the organization SLA report over 13 months for 10,000 checks:
// 13 months of daily rollups each (3.97 million rows), three incidents each, and a
// maintenance window on a tenth of them. It reports the latency percentiles of the whole
// report (every check and the total) and of one check's report.
//
//	go test ./controlplane/internal/store -run '^$' -bench BenchmarkSLAReport -benchtime 50x
func BenchmarkSLAReport(b *testing.B) {
	const checks = 10000
	ctx := context.Background()
	st := storetest.New(b)
	org, err := st.CreateOrganization(ctx, "SLA bench", "paid")
	if err != nil {
		b.Fatal(err)
	}
	sp := check.Defaults(check.TCP)
	sp.Name = "tmpl"
	sp.TCP.Hostname, sp.TCP.Port = "db.internal", 5432
	tmpl, err := st.CreateCheck(ctx, store.SystemActor, org.ID, nil, sp)
	if err != nil {
		b.Fatal(err)
	}
	to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	from := to.AddDate(0, -13, 0)
	pool := st.Pool()
	var cols []string
	rows, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_name = 'checks' AND column_name NOT IN ('id', 'name', 'created_at') AND is_generated = 'NEVER' ORDER BY ordinal_position`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			b.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	list := strings.Join(cols, ", ")
	created := from.AddDate(0, -1, 0)
	const window = "01900000-0000-7000-8000-00000000beef"
	setup := []struct {
		sql  string
		args []any
	}{
		{fmt.Sprintf(`INSERT INTO checks (id, name, created_at, %s) SELECT gen_random_uuid(), 'check ' || g, $2, %s
			FROM checks c, generate_series(2, %d) g WHERE c.id = $1`, list, list, checks), []any{tmpl.ID, created}},
		{`UPDATE checks SET created_at = $2 WHERE id = $1`, []any{tmpl.ID, created}},
		{`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
			SELECT c.org_id, c.id, d::date, 1440, (random() * 3)::int FROM checks c, generate_series($1::date, $2::date, '1 day') d`,
			[]any{from, to}},
		{`INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at)
			SELECT gen_random_uuid(), c.org_id, c.id, x.t, x.t + make_interval(mins => 1 + (random() * 90)::int)
			FROM checks c, generate_series(1, 3) g,
			LATERAL (SELECT $1::timestamptz + random() * ($2::timestamptz - $1::timestamptz) + g * interval '0' AS t) x`,
			[]any{from, to}},
		{`INSERT INTO maintenance_windows (id, org_id, name, start_date, duration_minutes, timezone, days_of_week)
			VALUES ($1, $2, 'nightly', $3, 60, 'Europe/Berlin', '{0,1,2,3,4,5,6}')`, []any{window, org.ID, created}},
		{`INSERT INTO maintenance_window_checks (org_id, window_id, check_id)
			SELECT org_id, $1, id FROM checks WHERE random() < 0.1`, []any{window}},
	}
	// Millions of rows take longer than the store's statement timeout.
	tx, err := pool.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
		b.Fatal(err)
	}
	for _, q := range setup {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			b.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	// The months before to are closed: the maintainer has folded them into monthly counters.
	for m := from; m.Before(to); m = m.AddDate(0, 1, 0) {
		if _, err := st.FoldMonthlyStats(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	// As autovacuum leaves tables in a steady state: statistics and the visibility map (which
	// index-only scans need).
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE checks, check_incidents, check_daily_stats, check_monthly_stats`); err != nil {
		b.Fatal(err)
	}
	measure := func(name string, scope store.SLAScope, want int) {
		var lat []time.Duration
		for i := 0; i < b.N; i++ {
			at := time.Now()
			rep, err := st.SLAReport(ctx, org.ID, scope, from, to)
			lat = append(lat, time.Since(at))
			if err != nil || len(rep) != want {
				b.Fatalf("%s: %d checks, %v", name, len(rep), err)
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(pct(0.50), name+"_p50_ms")
		b.ReportMetric(pct(0.99), name+"_p99_ms")
	}
	b.ResetTimer()
	measure("org", store.SLAScope{}, checks)
	measure("check", store.SLAScope{CheckID: &tmpl.ID}, 1)
}
