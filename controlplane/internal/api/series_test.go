package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// seriesNow is the API's clock in the series tests: 12:34:56 is inside the 1-minute bucket
// 12:34, the 15-minute bucket 12:30, the hour 12:00 and the 6-hour bucket 12:00.
var seriesNow = time.Date(2026, 3, 14, 12, 34, 56, 0, time.UTC)

// seriesResult is one result the tests ingest.
type seriesResult struct {
	region  string
	at      time.Time
	ms      float64
	passing bool
	final   bool    // false: a retry's attempt, which no series counts
	agent   bool    // the agent's own failure, which no series counts
	dns     float64 // with connect, tls and first byte: phases (0: not recorded)
}

// ingestSeries stores results through the store's ingest transaction, which writes the
// results, the regional view and the rollups.
func ingestSeries(t *testing.T, h *harness, org uuid.UUID, checkID string, results []seriesResult) {
	t.Helper()
	rows := make([]store.ResultRow, len(results))
	for i, r := range results {
		row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org, CheckID: uuid.MustParse(checkID),
			JobID: uuid.New(), Region: r.region, AttemptNumber: 1, IsFinalAttempt: r.final, ScheduledAt: r.at,
			CheckedAt: r.at, Passing: r.passing, ResponseTimeMs: r.ms, BodyAvailability: "NOT_RECORDED"}
		if r.agent {
			row.FailureSource = strPtr(wire.FailureSourceAgent)
		}
		if r.dns > 0 {
			dns, connect, tls, firstByte := r.dns, 2*r.dns, 3*r.dns, 4*r.dns
			row.DNSTimeMs, row.ConnectTimeMs, row.TLSTimeMs, row.FirstByteTimeMs = &dns, &connect, &tls, &firstByte
			row.Details = fmt.Appendf(nil, `{"timings": {"dns_ms": %v, "connect_ms": %v, "tls_ms": %v, "first_byte_ms": %v, "total_ms": %v}}`,
				dns, connect, tls, firstByte, r.ms)
		}
		rows[i] = row
	}
	if _, err := h.st.IngestResults(context.Background(), rows, nil); err != nil {
		t.Fatal(err)
	}
}

// seriesPoints returns the points of region in a timeseries answer, by their time.
func seriesPoints(t *testing.T, r response, region string) (order []string, byTime map[string]map[string]any) {
	t.Helper()
	regions, _ := r.Result()["regions"].([]any)
	for _, x := range regions {
		rs := x.(map[string]any)
		if rs["region"] != region {
			continue
		}
		byTime = map[string]map[string]any{}
		for _, p := range rs["points"].([]any) {
			pm := p.(map[string]any)
			order = append(order, pm["t"].(string))
			byTime[pm["t"].(string)] = pm
		}
		return order, byTime
	}
	t.Fatalf("no region %s in %s", region, r.Raw)
	return nil, nil
}

// within reports whether got is within bound (relative) of want.
func within(got any, want, bound float64) bool {
	g, ok := got.(float64)
	return ok && math.Abs(g-want) <= bound*want+1e-9
}

// TestCheckTimeseries: each range has its buckets, ending with the one holding now; counts are
// exact, retries and the agent's own failures are left out; percentiles are exact from results
// (1h, 24h) and within the histogram's bound from rollups (7d, 30d); phases are means of the
// passing results. Another organization's check is a 404, a bad range a 400 naming it.
func TestCheckTimeseries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setNow(seriesNow)
	id := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "test_regions", []string{"cloud:us-east-1", "cloud:eu-west-2"}))

	// us-east-1, in the hour 12:00 and the quarter 12:15: 20 passing results of 10..200 ms
	// (minutes 12:15 to 12:24, two a minute) and 2 failures; a retry and an agent failure.
	base := time.Date(2026, 3, 14, 12, 15, 0, 0, time.UTC)
	var results []seriesResult
	for i := range 20 {
		results = append(results, seriesResult{region: "cloud:us-east-1", at: base.Add(time.Duration(i) * 30 * time.Second),
			ms: float64(10 * (i + 1)), passing: true, final: true, dns: float64(i%2 + 1)})
	}
	results = append(results,
		seriesResult{region: "cloud:us-east-1", at: base.Add(time.Minute), ms: 5000, final: true},
		seriesResult{region: "cloud:us-east-1", at: base.Add(2 * time.Minute), ms: 5000, final: true},
		seriesResult{region: "cloud:us-east-1", at: base.Add(3 * time.Minute), ms: 1, passing: true},
		seriesResult{region: "cloud:us-east-1", at: base.Add(4 * time.Minute), ms: 1, final: true, agent: true},
		// Bucket edges: 12:29:59.999 is in the minute 12:29 and the quarter 12:15; 12:30:00 in 12:30.
		seriesResult{region: "cloud:eu-west-2", at: time.Date(2026, 3, 14, 12, 29, 59, 999e6, time.UTC), ms: 40, passing: true, final: true},
		seriesResult{region: "cloud:eu-west-2", at: time.Date(2026, 3, 14, 12, 30, 0, 0, time.UTC), ms: 60, passing: true, final: true},
		// Two days earlier at 07:10: outside 1h and 24h, in the 7d hour 07:00 and the 30d bucket 06:00.
		seriesResult{region: "cloud:eu-west-2", at: time.Date(2026, 3, 12, 7, 10, 0, 0, time.UTC), ms: 80, final: true},
		// A region the check no longer tests from comes after its test regions.
		seriesResult{region: "cloud:ap-south-1", at: base, ms: 30, passing: true, final: true},
	)
	// Two batches: the second adds to the rollups the first wrote, several counters of one row.
	ingestSeries(t, h, h.orgA, id, results[:7])
	ingestSeries(t, h, h.orgA, id, results[7:])

	get := func(query string) response {
		t.Helper()
		r := h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries"+query, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		return r
	}
	ranges := []struct {
		query, name     string
		bucket          float64
		points          int
		first, last     string
		errorBound      float64
		usEastBucket    string // the bucket of the 22 results of us-east-1, when they share one
		usEastRuns      float64
		eu1229, eu1230  string // the buckets of eu-west-2's results at 12:29:59.999 and 12:30
		euOlder         string // the bucket of eu-west-2's failure two days earlier ("" outside)
		exactPercentile bool
	}{
		{"?range=1h", "1h", 60, 60, "2026-03-14T11:35:00.000Z", "2026-03-14T12:34:00.000Z", 0, "", 0,
			"2026-03-14T12:29:00.000Z", "2026-03-14T12:30:00.000Z", "", true},
		{"", "24h", 900, 96, "2026-03-13T12:45:00.000Z", "2026-03-14T12:30:00.000Z", 0, "2026-03-14T12:15:00.000Z", 22,
			"2026-03-14T12:15:00.000Z", "2026-03-14T12:30:00.000Z", "", true},
		{"?range=7d", "7d", 3600, 168, "2026-03-07T13:00:00.000Z", "2026-03-14T12:00:00.000Z", store.LatencyErrorBound,
			"2026-03-14T12:00:00.000Z", 22, "2026-03-14T12:00:00.000Z", "2026-03-14T12:00:00.000Z", "2026-03-12T07:00:00.000Z", false},
		{"?range=30d", "30d", 21600, 120, "2026-02-12T18:00:00.000Z", "2026-03-14T12:00:00.000Z", store.LatencyErrorBound,
			"2026-03-14T12:00:00.000Z", 22, "2026-03-14T12:00:00.000Z", "2026-03-14T12:00:00.000Z", "2026-03-12T06:00:00.000Z", false},
	}
	for _, tc := range ranges {
		t.Run(tc.name, func(t *testing.T) {
			r := get(tc.query)
			res := r.Result()
			if res["range"] != tc.name || res["bucket_seconds"] != tc.bucket || res["percentile_error_bound"] != tc.errorBound {
				t.Errorf("header: %v %v %v", res["range"], res["bucket_seconds"], res["percentile_error_bound"])
			}
			var names []string
			for _, x := range res["regions"].([]any) {
				names = append(names, x.(map[string]any)["region"].(string))
			}
			if strings.Join(names, ",") != "cloud:us-east-1,cloud:eu-west-2,cloud:ap-south-1" {
				t.Errorf("regions %v: test regions first, in order, then the others", names)
			}
			order, us := seriesPoints(t, r, "cloud:us-east-1")
			if len(order) != tc.points || order[0] != tc.first || order[len(order)-1] != tc.last {
				t.Fatalf("%d points from %s to %s, want %d from %s to %s", len(order), order[0], order[len(order)-1], tc.points, tc.first, tc.last)
			}
			var runs, failed float64
			for _, p := range us {
				runs += p["runs"].(float64)
				failed += p["failed"].(float64)
			}
			if runs != 22 || failed != 2 {
				t.Errorf("us-east-1 counts %v runs, %v failed; want 22 and 2 (no retry, no agent failure)", runs, failed)
			}
			if tc.usEastBucket != "" {
				p := us[tc.usEastBucket]
				if p["runs"] != tc.usEastRuns || p["failed"] != 2.0 {
					t.Errorf("bucket %s: %v", tc.usEastBucket, p)
				}
				if tc.exactPercentile {
					// percentile_cont of 10, 20, …, 200.
					if p["p50_ms"] != 105.0 || p["p95_ms"] != 190.5 {
						t.Errorf("exact percentiles: p50 %v p95 %v, want 105 and 190.5", p["p50_ms"], p["p95_ms"])
					}
				} else if !within(p["p50_ms"], 100, store.LatencyErrorBound) || !within(p["p95_ms"], 190, store.LatencyErrorBound) {
					// nearest rank: the 10th and 19th of 20.
					t.Errorf("histogram percentiles: p50 %v p95 %v, want within 9.06 %% of 100 and 190", p["p50_ms"], p["p95_ms"])
				}
				// dns alternates 1 and 2 ms; connect, tls and first byte are 2, 3 and 4 times it.
				if p["dns_ms"] != 1.5 || p["connect_ms"] != 3.0 || p["tls_ms"] != 4.5 || p["first_byte_ms"] != 6.0 {
					t.Errorf("phases: %v %v %v %v", p["dns_ms"], p["connect_ms"], p["tls_ms"], p["first_byte_ms"])
				}
			}
			_, eu := seriesPoints(t, r, "cloud:eu-west-2")
			if tc.eu1229 == tc.eu1230 {
				if p := eu[tc.eu1229]; p["runs"] != 2.0 {
					t.Errorf("eu-west-2 bucket %s: %v", tc.eu1229, p)
				}
			} else if p, q := eu[tc.eu1229], eu[tc.eu1230]; p["runs"] != 1.0 || q["runs"] != 1.0 || p["p50_ms"] != 40.0 || q["p50_ms"] != 60.0 {
				t.Errorf("eu-west-2 bucket edges: %s %v, %s %v", tc.eu1229, p, tc.eu1230, q)
			}
			if tc.euOlder != "" {
				if p := eu[tc.euOlder]; p["runs"] != 1.0 || p["failed"] != 1.0 || p["p50_ms"] != nil || p["dns_ms"] != nil {
					t.Errorf("eu-west-2 failure two days earlier, bucket %s: %v", tc.euOlder, p)
				}
			}
			for t0, p := range us {
				if p["runs"] == 0.0 && (p["p50_ms"] != nil || p["dns_ms"] != nil) {
					t.Errorf("empty bucket %s has values: %v", t0, p)
				}
			}
		})
	}

	for _, bad := range []string{"2h", "24H", "30", "7d,30d"} {
		r := h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries?range="+bad, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), "range") {
			t.Errorf("range=%s: %s does not name range", bad, r.Raw)
		}
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries", h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+uuid.NewString()+"/timeseries", h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries", "", nil), http.StatusUnauthorized)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries", h.token(h.orgA, "PROJECTS:READ"), nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id+"/timeseries", h.token(h.orgA, "UPTIME_CHECKS:READ"), nil), http.StatusOK)
}

// TestChecksOverview: the checks of the caller's organization among check_ids, in their order,
// with uptime from the rollups (24 h) and the daily counters (30 days), 24 hourly sparkline
// points, the regional view, the last run and since when the status holds; other ids are left out; bad lists are 400s.
func TestChecksOverview(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setNow(seriesNow)
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	first := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "test_regions", regions))
	second := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	other := ckCreate(t, h, h.tokenB, "/v1/checks/uptime", ckUptimeBody())["id"].(string)

	ingestSeries(t, h, h.orgA, first, []seriesResult{
		{region: "cloud:us-east-1", at: seriesNow.Add(-time.Minute), ms: 100, passing: true, final: true},
		{region: "cloud:eu-west-2", at: seriesNow.Add(-2 * time.Minute), ms: 300, final: true},
		{region: "cloud:us-east-1", at: seriesNow.Add(-3 * time.Hour), ms: 200, passing: true, final: true},
		{region: "cloud:eu-west-2", at: seriesNow.Add(-3 * time.Hour), ms: 200, passing: true, final: true},
		// 25 hours ago: outside the 24 hours.
		{region: "cloud:eu-west-2", at: seriesNow.Add(-25 * time.Hour), ms: 200, final: true},
	})
	ingestSeries(t, h, h.orgB, other, []seriesResult{{region: "cloud:us-east-1", at: seriesNow, ms: 1, passing: true, final: true}})
	ckSQL(t, h, `INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
		VALUES ($1, $2, '2026-03-14', 150, 1), ($1, $2, '2026-02-13', 50, 1), ($1, $2, '2026-02-12', 70, 70)`, h.orgA, first)
	ckSQL(t, h, `UPDATE check_progress SET last_run_at = $2 WHERE check_id = $1`, first, seriesNow.Add(-time.Minute))
	ckSQL(t, h, `UPDATE checks SET state = 'DOWN', state_changed_at = $2 WHERE id = $1`, first, seriesNow.Add(-90*time.Minute))
	ckSQL(t, h, `UPDATE checks SET created_at = $2 WHERE id = $1`, second, seriesNow.Add(-48*time.Hour))

	ids := []string{second, other, uuid.NewString(), first, second}
	r := h.do(http.MethodGet, "/v1/checks/overview?check_ids="+strings.Join(ids, ","), h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	items, _ := r.Body["result"].([]any)
	if len(items) != 2 {
		t.Fatalf("want the two checks of org A once each: %s", r.Raw)
	}
	sec, fst := items[0].(map[string]any), items[1].(map[string]any)
	if sec["check_id"] != second || fst["check_id"] != first {
		t.Fatalf("order: %v, %v", sec["check_id"], fst["check_id"])
	}
	if sec["uptime_24h"] != nil || sec["uptime_30d"] != nil || sec["last_run_at"] != nil {
		t.Errorf("a check without runs: %v", sec)
	}
	// 24 hours: 4 results, 1 failed. 30 days: 200 runs, 2 failed (2026-02-12 is 31 days back).
	if fst["uptime_24h"] != 75.0 || fst["uptime_30d"] != 99.0 {
		t.Errorf("uptime: 24h %v (want 75), 30d %v (want 99)", fst["uptime_24h"], fst["uptime_30d"])
	}
	if fst["last_run_at"] != "2026-03-14T12:33:56.000Z" {
		t.Errorf("last_run_at %v", fst["last_run_at"])
	}
	// status_since: the evaluator's state_changed_at, or the creation of a check never judged.
	if fst["status_since"] != "2026-03-14T11:04:56.000Z" || sec["status_since"] != "2026-03-12T12:34:56.000Z" {
		t.Errorf("status_since: %v (want 11:04:56), never judged %v (want its creation)", fst["status_since"], sec["status_since"])
	}
	spark := fst["sparkline_24h"].([]any)
	if len(spark) != 24 {
		t.Fatalf("%d sparkline points", len(spark))
	}
	firstPt, lastPt, at9 := spark[0].(map[string]any), spark[23].(map[string]any), spark[20].(map[string]any)
	if firstPt["t"] != "2026-03-13T13:00:00.000Z" || lastPt["t"] != "2026-03-14T12:00:00.000Z" {
		t.Errorf("sparkline from %v to %v", firstPt["t"], lastPt["t"])
	}
	if lastPt["runs"] != 2.0 || lastPt["failed"] != 1.0 || !within(lastPt["p50_ms"], 100, store.LatencyErrorBound) {
		t.Errorf("this hour: %v", lastPt)
	}
	if at9["t"] != "2026-03-14T09:00:00.000Z" || at9["runs"] != 2.0 || at9["failed"] != 0.0 || !within(at9["p50_ms"], 200, store.LatencyErrorBound) {
		t.Errorf("09:00: %v", at9)
	}
	if firstPt["runs"] != 0.0 || firstPt["p50_ms"] != nil {
		t.Errorf("an hour without results: %v", firstPt)
	}
	rs := fst["regions"].([]any)
	us, eu := rs[0].(map[string]any), rs[1].(map[string]any)
	if len(rs) != 2 || us["region"] != "cloud:us-east-1" || us["status"] != "UP" || eu["status"] != "DOWN" ||
		us["checked_at"] != "2026-03-14T12:33:56.000Z" {
		t.Errorf("regions: %v", rs)
	}
	if sr := sec["regions"].([]any); len(sr) == 0 || sr[0].(map[string]any)["status"] != "NO_DATA" {
		t.Errorf("regions of a check without results: %v", sr)
	}

	many := make([]string, 101)
	for i := range many {
		many[i] = uuid.NewString()
	}
	for name, query := range map[string]string{
		"missing":   "",
		"empty":     "?check_ids=",
		"malformed": "?check_ids=" + first + ",not-an-id",
		"short":     "?check_ids=" + first[:35],
		"too many":  "?check_ids=" + strings.Join(many, ","),
	} {
		r := h.do(http.MethodGet, "/v1/checks/overview"+query, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), "check_ids") {
			t.Errorf("%s: %s does not name check_ids", name, r.Raw)
		}
	}
	r = h.do(http.MethodGet, "/v1/checks/overview?check_ids="+strings.Join(many[:100], ","), h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if items, _ := r.Body["result"].([]any); len(items) != 0 {
		t.Errorf("100 unknown ids: %s", r.Raw)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/overview?check_ids="+first, "", nil), http.StatusUnauthorized)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/overview?check_ids="+first, h.token(h.orgA, "PROJECTS:READ"), nil), http.StatusForbidden)
}
