package api

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSLAReports: a check created two days before the period with two incidents in it (one
// overlapping another) and one before it; the check's report and the organization's, as JSON
// and CSV, and every bad query a 400.
func TestSLAReports(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	id := ckID(t, h, "/v1/checks/uptime", ckUptimeBody())
	other := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(10 * 24 * time.Hour)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := h.st.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE checks SET created_at = $2 WHERE id = $1 OR id = $3`, id, from.Add(-48*time.Hour), other)
	for _, iv := range [][2]time.Time{
		{from.Add(-2 * time.Hour), from.Add(30 * time.Minute)},              // 30 min inside the period
		{from.Add(24 * time.Hour), from.Add(24*time.Hour + 90*time.Minute)}, // 90 min
		{from.Add(-30 * time.Hour), from.Add(-29 * time.Hour)},              // before the period
	} {
		exec(`INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES (gen_random_uuid(), $1, $2, $3, $4)`,
			h.orgA, id, iv[0], iv[1])
	}
	exec(`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs) VALUES ($1, $2, '2026-01-02', 100, 3), ($1, $2, '2026-03-01', 7, 7)`,
		h.orgA, id)
	q := url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}}

	r := h.do(http.MethodGet, "/v1/checks/"+id+"/sla?"+q.Encode(), h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	got := r.Result()
	observed := float64(10 * 24 * 60)
	want := map[string]any{"downtime_minutes": 120.0, "incident_count": 2.0, "mttr_minutes": 60.0, "longest_outage_minutes": 90.0,
		"observed_minutes": observed, "maintenance_minutes": 0.0, "availability_percent": 99.1667, "runs": 100.0, "failed_runs": 3.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("check report %s = %v, want %v", k, got[k], v)
		}
	}

	r = h.do(http.MethodGet, "/v1/reports/sla?"+q.Encode(), h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	total := r.Result()["total"].(map[string]any)
	if total["downtime_minutes"] != 120.0 || total["observed_minutes"] != 2*observed || total["availability_percent"] != 99.5833 {
		t.Errorf("organization total = %v", total)
	}
	if checks := r.Result()["checks"].([]any); len(checks) != 2 {
		t.Errorf("organization report has %d checks, want 2", len(checks))
	}

	csvOf := func(path string, headers ...string) [][]string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+h.tokenA)
		for _, hv := range headers {
			k, v, _ := strings.Cut(hv, ":")
			req.Header.Set(k, strings.TrimSpace(v))
		}
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		rows, err := csv.NewReader(rec.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	rows := csvOf("/v1/checks/"+id+"/sla?"+q.Encode(), "Accept: text/csv")
	if len(rows) != 2 || rows[0][0] != "check_id" || rows[1][0] != id || rows[1][4] != "99.1667" || rows[1][5] != "120" {
		t.Errorf("check CSV = %v", rows)
	}
	rows = csvOf("/v1/reports/sla?format=csv&" + q.Encode())
	if len(rows) != 4 || rows[3][0] != "TOTAL" || rows[3][4] != "99.5833" {
		t.Errorf("organization CSV = %v", rows)
	}

	for _, tc := range []struct{ path, msg string }{
		{"/v1/checks/" + id + "/sla?to=" + url.QueryEscape(to.Format(time.RFC3339)), "from: is required"},
		{"/v1/checks/" + id + "/sla?from=2026-01-01T00:00:00Z&to=2027-02-01T00:00:01Z", "must not exceed 13 months"},
		{"/v1/reports/sla?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "to: must be later than from"},
		{"/v1/reports/sla?format=xml&" + q.Encode(), "format: must be json or csv"},
		{"/v1/reports/sla?from=yesterday&to=today", "from: must be an ISO 8601 date-time"},
		{"/v1/reports/sla?project_id=nope&" + q.Encode(), "project_id: must be a project id"},
	} {
		r := h.do(http.MethodGet, tc.path, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), tc.msg) {
			t.Errorf("GET %s: %s, want %q", tc.path, r.ErrorText(), tc.msg)
		}
	}
	r = h.do(http.MethodGet, "/v1/checks/00000000-0000-7000-8000-000000000000/sla?"+q.Encode(), h.tokenA, nil)
	expectStatus(t, r, http.StatusNotFound)
	// Whole months come from the monthly counters (kept by triggers), the edges from the daily
	// ones: December 15 to March 2 counts January 2 and March 1.
	r = h.do(http.MethodGet, "/v1/reports/sla?from=2025-12-15T00:00:00Z&to=2026-03-01T12:00:00Z", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	for _, c := range r.Result()["checks"].([]any) {
		c := c.(map[string]any)
		if c["check_id"] == id && (c["runs"] != 107.0 || c["failed_runs"] != 10.0) {
			t.Errorf("runs over whole months and edges = %v/%v, want 107/10", c["runs"], c["failed_runs"])
		}
	}
	exec(`UPDATE check_daily_stats SET runs = runs + 1 WHERE check_id = $1 AND day = '2026-01-02'`, id)
	r = h.do(http.MethodGet, "/v1/reports/sla?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z", h.tokenA, nil)
	for _, c := range r.Result()["checks"].([]any) {
		c := c.(map[string]any)
		if c["check_id"] == id && c["runs"] != 101.0 {
			t.Errorf("January runs after an update of a day = %v, want 101", c["runs"])
		}
	}
	// Thirteen months exactly is accepted.
	r = h.do(http.MethodGet, "/v1/reports/sla?from=2026-01-31T00:00:00Z&to=2027-02-28T00:00:00Z", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
}

// TestSLACSVNeutralisesFormulas: check names that a spreadsheet would run as formulas come out
// of the CSV export as text (a leading single quote, OWASP), the JSON report keeps them as
// they are, and the numbers stay numbers.
func TestSLACSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	names := map[string]string{ // name → its CSV cell
		"=cmd|'/C calc'!A0":              "'=cmd|'/C calc'!A0",
		"@SUM(1)":                        "'@SUM(1)",
		"+1+2":                           "'+1+2",
		"-2+3+cmd|' /C calc'!A0":         "'-2+3+cmd|' /C calc'!A0",
		"=HYPERLINK(\"http://x\",\"y\")": "'=HYPERLINK(\"http://x\",\"y\")",
		"API = health":                   "API = health",
	}
	for name := range names {
		ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "name", name))
	}
	q := url.Values{"format": {"csv"}, "from": {"2026-01-01T00:00:00Z"}, "to": {"2026-01-02T00:00:00Z"}}
	req := httptest.NewRequest(http.MethodGet, "/v1/reports/sla?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+h.tokenA)
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("CSV report: %d %s", rec.Code, rec.Body)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(names)+2 {
		t.Fatalf("CSV has %d rows, want a header, %d checks and the total: %v", len(rows), len(names), rows)
	}
	seen := map[string]bool{}
	for _, row := range rows[1 : len(rows)-1] {
		seen[row[1]] = true
		if row[4] != "100" && row[4] != "0" {
			t.Errorf("availability_percent cell %q is not a plain number", row[4])
		}
	}
	for name, cell := range names {
		if !seen[cell] {
			t.Errorf("check %q: no CSV cell %q in %v", name, cell, rows)
		}
	}

	r := h.do(http.MethodGet, "/v1/reports/sla?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	for _, c := range r.Result()["checks"].([]any) {
		if name := c.(map[string]any)["name"].(string); names[name] == "" {
			t.Errorf("JSON report renamed a check to %q", name)
		}
	}
}

func TestCSVCell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=1+1", "'=1+1"},
		{"+1+1", "'+1+1"},
		{"-1+1", "'-1+1"},
		{"@A1", "'@A1"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"-12.5", "-12.5"},
		{"+3", "+3"},
		{"99.1667", "99.1667"},
		{"-", "'-"},
		{"TOTAL", "TOTAL"},
	} {
		if got := csvCell(tc.in); got != tc.want {
			t.Errorf("csvCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
