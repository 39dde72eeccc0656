package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// BenchmarkConsoleReads measures the console's two reads against an organization of 10,000
// checks with a week of hourly rollups each (1.68 million rows, one region), their regional
// views and 30 days of daily counters; the measured check has 30 days of rollups in three
// regions. It reports the latency percentiles of a 30-day series (720 rollup rows merged into
// 120 points per region), of the overview of 100 checks (4 queries), and of a bare SELECT 1
// round trip in the same run, the floor of any read.
//
//	go test ./controlplane/internal/store -run '^$' -bench BenchmarkConsoleReads -benchtime 50x
func BenchmarkConsoleReads(b *testing.B) {
	const checks = 10000
	ctx := context.Background()
	st := storetest.New(b)
	org, err := st.CreateOrganization(ctx, "console bench", "paid")
	if err != nil {
		b.Fatal(err)
	}
	sp := check.Defaults(check.Uptime)
	sp.Name = "tmpl"
	url := "https://example.com/"
	sp.HTTP.URL = &url
	sp.TestRegions = []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-south-1"}
	tmpl, err := st.CreateCheck(ctx, store.SystemActor, org.ID, nil, sp)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 1, 12, 30, 0, 0, time.UTC)
	hour := now.Truncate(time.Hour)
	pool := st.Pool()
	cols, err := insertableColumns(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	// 60 passing results an hour, 27 to 38 ms (counters 20 to 22).
	hist := fmt.Sprintf("(array_fill(0, ARRAY[20]) || ARRAY[40, 15, 5] || array_fill(0, ARRAY[%d]))", store.LatencyBuckets-23)
	setup := []struct {
		sql  string
		args []any
	}{
		{fmt.Sprintf(`INSERT INTO checks (id, name, %s) SELECT gen_random_uuid(), 'check ' || g, %s
			FROM checks c, generate_series(2, %d) g WHERE c.id = $1`, cols, cols, checks), []any{tmpl.ID}},
		{`INSERT INTO check_rollups (org_id, check_id, region, bucket_start, runs, failed, latency_hist,
				dns_ms_sum, dns_n, connect_ms_sum, connect_n, tls_ms_sum, tls_n, first_byte_ms_sum, first_byte_n)
			SELECT c.org_id, c.id, 'cloud:us-east-1', h, 60, (random() * 2)::int, ` + hist + `, 300, 60, 600, 60, 900, 60, 3000, 60
			FROM checks c, generate_series($1::timestamptz - interval '7 days', $1::timestamptz, '1 hour') h
			WHERE c.id <> $2`, []any{hour, tmpl.ID}},
		{`INSERT INTO check_rollups (org_id, check_id, region, bucket_start, runs, failed, latency_hist,
				dns_ms_sum, dns_n, connect_ms_sum, connect_n, tls_ms_sum, tls_n, first_byte_ms_sum, first_byte_n)
			SELECT c.org_id, c.id, r, h, 60, (random() * 2)::int, ` + hist + `, 300, 60, 600, 60, 900, 60, 3000, 60
			FROM checks c, unnest(c.test_regions) r, generate_series($1::timestamptz - interval '30 days', $1::timestamptz, '1 hour') h
			WHERE c.id = $2`, []any{hour, tmpl.ID}},
		{`INSERT INTO check_regions (org_id, check_id, region, passing, checked_at, result_id, response_time_ms)
			SELECT c.org_id, c.id, r, random() > 0.01, $1, gen_random_uuid(), 80
			FROM checks c, unnest(c.test_regions) r`, []any{now.Add(-time.Minute)}},
		{`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
			SELECT c.org_id, c.id, d::date, 4320, (random() * 3)::int
			FROM checks c, generate_series($1::date - 29, $1::date, '1 day') d`, []any{now}},
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
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE checks, check_rollups, check_regions, check_daily_stats, check_progress`); err != nil {
		b.Fatal(err)
	}
	var page []uuid.UUID
	rows, err := pool.Query(ctx, `SELECT id FROM checks WHERE org_id = $1 ORDER BY id LIMIT 100 OFFSET 5000`, org.ID)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		page = append(page, id)
	}
	rows.Close()
	chk, err := st.GetCheck(ctx, org.ID, tmpl.ID, false)
	if err != nil {
		b.Fatal(err)
	}

	measure := func(name string, read func() error) {
		var lat []time.Duration
		for i := 0; i < b.N; i++ {
			at := time.Now()
			if err := read(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			lat = append(lat, time.Since(at))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(pct(0.50), name+"_p50_ms")
		b.ReportMetric(pct(0.99), name+"_p99_ms")
	}
	b.ResetTimer()
	measure("select1", func() error { _, err := pool.Exec(ctx, `SELECT 1`); return err })
	measure("series30d", func() error {
		to := hour.Truncate(6 * time.Hour).Add(6 * time.Hour)
		s, err := st.CheckSeries(ctx, chk, to.Add(-30*24*time.Hour), to, 6*time.Hour)
		if err == nil && (len(s) != 3 || len(s[0].Points) != 120 || s[0].Points[100].Runs != 360) {
			err = fmt.Errorf("unexpected series: %d regions", len(s))
		}
		return err
	})
	measure("overview100", func() error {
		o, err := st.ChecksOverview(ctx, org.ID, page, now)
		if err == nil && (len(o) != 100 || o[0].Uptime30d == nil || o[0].Sparkline[0].Runs != 60) {
			err = fmt.Errorf("unexpected overview: %d checks", len(o))
		}
		return err
	})
}

// insertableColumns lists the columns of checks a copy of a row may take as they are.
func insertableColumns(ctx context.Context, st *store.Store) (string, error) {
	rows, err := st.Pool().Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_name = 'checks' AND column_name NOT IN ('id', 'name') AND is_generated = 'NEVER' ORDER BY ordinal_position`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return "", err
		}
		cols = append(cols, c)
	}
	return strings.Join(cols, ", "), rows.Err()
}
