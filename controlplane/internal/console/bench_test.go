package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// benchChecks is the size of the organization the console is measured against.
const benchChecks = 10000

// BenchmarkConsole measures the console in real Chromium against an organization of 10,000
// checks with a week of hourly rollups each (the measured check: three regions, 30 days of
// rollups and a week of raw results at one a minute per region). For the checks overview and
// for a check's page with its 7-day chart it reports the time from navigationStart until the
// view is rendered, the /v1 calls the view made and the bytes it transferred; beside them, in
// the same run, a bare Go HTTP client making the same /v1 calls one after the other, and the
// ratio of the two. Seeding goes through SQL bulk inserts: through ingest it would take hours.
//
//	make bench-console   (go test ./controlplane/internal/console -run '^$' -bench BenchmarkConsole -benchtime 1x)
func BenchmarkConsole(b *testing.B) {
	s := newSite(b, siteOptions{})
	at := time.Now()
	measured := seedConsoleBench(b, s)
	b.Logf("seeded %d checks with a week of rollups in %s", benchChecks, time.Since(at).Round(time.Second))

	const samples = 6 // the first from an empty cache, five warm
	tb := s.tab(b, 1280, 900)
	rec := newNetRecorder(b, tb)
	tb.signIn(s.tokenA, "/console/checks")

	// The pager's total shows the list came from all 10,000 checks.
	overview := consoleView{name: "overview", path: "/console/checks",
		ready: `document.querySelectorAll('.view[data-ready] tbody tr a.check-name').length === 50 &&
			document.querySelector('.pager')?.textContent.includes('of 10000 checks')`}
	detail := consoleView{name: "detail_7d", path: "/console/checks/" + measured,
		ready: `document.querySelector('.view[data-ready] h1')`, after: sevenDays}

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, v := range []consoleView{overview, detail} {
			var loads []float64
			var last netTotals
			// The first load of each view starts from an empty cache, as a first visit does.
			if _, err := chromedp.Call(tb.ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
				b.Fatal(err)
			}
			for n := 0; n < samples; n++ {
				ms, totals := v.load(tb, rec)
				if n == 0 {
					b.Logf("%s cold (empty cache): %.0f ms (DOMContentLoaded at %.0f ms), %d requests, %.1f KB transferred",
						v.name, ms, totals.domLoaded, totals.requests, float64(totals.bytes)/1024)
				} else {
					loads = append(loads, ms)
				}
				last = totals
			}
			// A call per row would make 50 or more; the views make a fixed handful.
			if len(last.v1URLs) > 12 {
				b.Fatalf("%s made %d /v1 calls: %s", v.name, len(last.v1URLs), shorten(last.v1URLs))
			}
			api := rawCalls(b, s, last.v1URLs, samples)
			browser := median(loads)
			b.Logf("%s: browser %.0f ms (median of %d loads, warm cache; DOMContentLoaded at %.0f ms); %d /v1 calls, %.1f KB of /v1 responses, %.1f KB in all; "+
				"the same calls from a bare Go client one after the other %.1f ms; ratio %.1f\n    calls: %s",
				v.name, browser, len(loads), last.domLoaded, len(last.v1URLs), float64(last.v1Bytes)/1024, float64(last.bytes)/1024,
				api, browser/api, shorten(last.v1URLs))
			b.ReportMetric(browser, v.name+"_ms")
			b.ReportMetric(api, v.name+"_rawapi_ms")
			b.ReportMetric(float64(len(last.v1URLs)), v.name+"_v1_calls")
			b.ReportMetric(float64(last.bytes)/1024, v.name+"_KB")
		}
	}
	tb.noErrors()
}

// consoleView is a view to measure: its URL, the condition that says it is rendered, and an
// optional step after that (the detail's switch to the 7-day chart).
type consoleView struct {
	name, path, ready string
	after             string
}

// sevenDays presses the chart's 7d button and resolves when the 7-day chart is drawn.
const sevenDays = `new Promise((resolve) => {
	const chart = document.querySelector('section[aria-label="Response time by region"]');
	[...chart.querySelectorAll('.seg button')].find((b) => b.textContent === '7d').click();
	const drawn = () => chart.querySelector('.seg button[aria-pressed="true"]')?.textContent === '7d' &&
		chart.querySelector('.panel-body svg.chart');
	const poll = () => (drawn() ? resolve() : requestAnimationFrame(poll));
	poll();
})`

// load opens the view with a full page load and returns the milliseconds from navigationStart
// until it was rendered (performance.now() is measured from the navigation's start) and the
// traffic of the load.
func (v consoleView) load(tb *tab, rec *netRecorder) (float64, netTotals) {
	tb.t.Helper()
	rec.reset()
	tb.run(chromedp.Navigate(tb.base + v.path))
	tb.waitFor(v.ready)
	ms := eval[float64](tb, `window.__rendered ?? performance.now()`)
	if v.after != "" {
		ms = evalAsync[float64](tb, `(async () => { await `+v.after+`; return performance.now(); })()`)
	}
	// The responses' loadingFinished events may trail the render by a few milliseconds.
	time.Sleep(200 * time.Millisecond)
	totals := rec.totals()
	totals.domLoaded = eval[float64](tb, `performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd`)
	return ms, totals
}

// uuidPattern finds the ids in call URLs, which the log shows as {id}.
var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// shorten writes the calls on one line with their ids as {id}: go test keeps only the first
// lines of a benchmark's log.
func shorten(urls []string) string {
	out := make([]string, len(urls))
	for i, u := range urls {
		if unescaped, err := url.QueryUnescape(u); err == nil {
			u = unescaped
		}
		if n := strings.Count(u, ","); n > 0 {
			u = u[:strings.Index(u, "check_ids=")] + fmt.Sprintf("check_ids={%d ids}", n+1)
		}
		out[i] = uuidPattern.ReplaceAllString(u, "{id}")
	}
	return strings.Join(out, " ")
}

// renderProbe runs in every page before its scripts: it notes performance.now() the moment the
// overview's rows or the detail's heading exist in a ready view, so the figure does not depend
// on how often the test polls.
const renderProbe = `new MutationObserver((_, obs) => {
	if (document.querySelector('.view[data-ready] tbody tr a.check-name, .view[data-ready] h1')) {
		window.__rendered = performance.now();
		obs.disconnect();
	}
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready'] });`

// netRecorder counts a tab's requests and the bytes on the wire (CDP encodedDataLength).
type netRecorder struct {
	mu    sync.Mutex
	urls  map[network.RequestID]string
	bytes map[network.RequestID]int64
	order []network.RequestID
}

type netTotals struct {
	domLoaded float64 // the navigation's domContentLoadedEventEnd, ms after navigationStart
	requests  int
	bytes     int64
	v1Bytes   int64
	v1URLs    []string // path and query of each /v1 call, in the order sent
}

func newNetRecorder(t testing.TB, tb *tab) *netRecorder {
	t.Helper()
	r := &netRecorder{}
	r.reset()
	if err := chromedp.Listen(tb.ctx, func(ev any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if _, seen := r.urls[e.RequestID]; !seen {
				r.order = append(r.order, e.RequestID)
			}
			r.urls[e.RequestID] = e.Request.URL
		case *network.EventLoadingFinished:
			r.bytes[e.RequestID] = int64(e.EncodedDataLength)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: renderProbe}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *netRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls, r.bytes, r.order = map[network.RequestID]string{}, map[network.RequestID]int64{}, nil
}

func (r *netRecorder) totals() netTotals {
	r.mu.Lock()
	defer r.mu.Unlock()
	var t netTotals
	for _, id := range r.order {
		t.requests++
		t.bytes += r.bytes[id]
		u, err := url.Parse(r.urls[id])
		if err != nil || !strings.HasPrefix(u.Path, "/v1/") {
			continue
		}
		t.v1Bytes += r.bytes[id]
		t.v1URLs = append(t.v1URLs, u.RequestURI())
	}
	return t
}

// rawCalls makes the calls with a bearer token from a bare Go client, one after the other, and
// returns the median over rounds of their summed time in milliseconds.
func rawCalls(t testing.TB, s *site, calls []string, rounds int) float64 {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	var sums []float64
	for range rounds {
		start := time.Now()
		for _, c := range calls {
			req, err := http.NewRequest(http.MethodGet, s.srv.URL+c, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+s.tokenA)
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %v", c, res.StatusCode, err)
			}
		}
		sums = append(sums, float64(time.Since(start).Microseconds())/1000)
	}
	return median(sums)
}

func median(v []float64) float64 {
	sorted := append([]float64(nil), v...)
	sort.Float64s(sorted)
	return sorted[len(sorted)/2]
}

// seedConsoleBench fills organization A: a check created through the API, copied in SQL into
// 10,000 checks with a week of hourly rollups each in one region, their regional status and 30
// days of daily counters; the first check has 30 days of rollups in its three regions and a
// week of raw results. It returns the first check's id.
func seedConsoleBench(t testing.TB, s *site) string {
	t.Helper()
	ctx := context.Background()
	first := s.createUptime(s.tokenA, "check 00001", "https://example.com/")
	id, err := uuid.Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := checkColumns(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	hour := now.Truncate(time.Hour)
	// 60 passing results an hour, 27 to 38 ms: latency buckets 20 to 22 (store.LatencyBuckets).
	hist := fmt.Sprintf("(array_fill(0, ARRAY[20]) || ARRAY[40, 15, 5] || array_fill(0, ARRAY[%d]))", store.LatencyBuckets-23)
	rollup := `INSERT INTO check_rollups (org_id, check_id, region, bucket_start, runs, failed, latency_hist,
			dns_ms_sum, dns_n, connect_ms_sum, connect_n, tls_ms_sum, tls_n, first_byte_ms_sum, first_byte_n)
		SELECT c.org_id, c.id, %s, h, 60, (random() * 2)::int, ` + hist + `, 300, 60, 600, 60, 900, 60, 3000, 60
		FROM %s, generate_series($1::timestamptz - interval '%d days', $1::timestamptz, '1 hour') h
		WHERE %s`
	steps := []struct {
		sql  string
		args []any
	}{
		{fmt.Sprintf(`INSERT INTO checks (id, name, %s) SELECT gen_random_uuid(), 'check ' || lpad(g::text, 5, '0'), %s
			FROM checks c, generate_series(2, %d) g WHERE c.id = $1`, cols, cols, benchChecks), []any{id}},
		{fmt.Sprintf(rollup, `'cloud:us-east-1'`, `checks c`, 7, `c.id <> $2 AND c.org_id = $3`), []any{hour, id, s.orgA}},
		{fmt.Sprintf(rollup, `r`, `checks c, unnest(c.test_regions) r`, 30, `c.id = $2 AND c.org_id = $3`), []any{hour, id, s.orgA}},
		{`INSERT INTO check_regions (org_id, check_id, region, passing, checked_at, result_id, response_time_ms)
			SELECT c.org_id, c.id, r, random() > 0.01, $1, gen_random_uuid(), 80
			FROM checks c, unnest(c.test_regions) r WHERE c.org_id = $2`, []any{now.Add(-time.Minute), s.orgA}},
		{`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
			SELECT c.org_id, c.id, d::date, 4320, (random() * 3)::int
			FROM checks c, generate_series($1::date - 29, $1::date, '1 day') d WHERE c.org_id = $2`, []any{now, s.orgA}},
		{`INSERT INTO check_results (id, org_id, check_id, job_id, region, attempt_number, is_final_attempt, checked_at,
				passing, response_time_ms, response_code, body_availability, result_summary, dns_time_ms, connect_time_ms, data_time_ms)
			SELECT gen_random_uuid(), c.org_id, c.id, gen_random_uuid(), r, 1, true, m, true, 30 + random() * 10, 200,
				'NOT_RECORDED', 'HTTP 200', 5, 10, 15
			FROM checks c, unnest(c.test_regions) r, generate_series($1::timestamptz - interval '7 days', $1::timestamptz, '1 minute') m
			WHERE c.id = $2`, []any{now.Add(-time.Minute), id}},
	}
	pool := s.st.Pool()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	// Millions of rows take longer than the store's statement timeout.
	if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	for _, q := range steps {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE checks, check_rollups, check_regions, check_daily_stats, check_results`); err != nil {
		t.Fatal(err)
	}
	return first
}

// checkColumns lists the columns of checks a copy of a row may take as they are.
func checkColumns(ctx context.Context, s *site) (string, error) {
	rows, err := s.st.Pool().Query(ctx, `SELECT column_name FROM information_schema.columns
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
