package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// ckNames lists the names of a list response's items, in order.
func ckNames(r response) []string {
	var out []string
	for _, it := range r.Items() {
		out = append(out, it["name"].(string))
	}
	return out
}

func ckTotal(r response) float64 {
	info, _ := r.Body["result_info"].(map[string]any)
	n, _ := info["total_count"].(float64)
	return n
}

func TestCheckList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := ckInsertProject(t, h, h.orgA, "Shop")
	alpha := ckID(t, h, "/v1/checks", ckWith(ckUptimeBody(), "name", "Alpha API", "url", "https://alpha.example.com/health"))
	bravo := ckID(t, h, "/v1/checks/dns", ckWith(ckDNSBody(), "name", "Bravo DNS", "dns_resolver", "1.1.1.1:53", "project_id", project))
	charlie := ckID(t, h, "/v1/checks/tcp", ckWith(ckTCPBody(), "name", "Charlie TCP", "project_id", project))
	delta := ckID(t, h, "/v1/checks/browser", ckWith(ckBrowserBody(), "name", "Delta browser"))
	ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "name", "Echo", "url", "https://echo.example.org"))
	ckSQL(t, h, `UPDATE checks SET state = 'UP' WHERE id = $1`, alpha)
	ckSQL(t, h, `UPDATE checks SET state = 'DOWN' WHERE id = $1`, bravo)
	ckSQL(t, h, `UPDATE checks SET state = 'DOWN', paused = true WHERE id = $1`, charlie)
	ckSQL(t, h, `UPDATE checks SET state = 'UP', muted = true WHERE id = $1`, delta)
	ckSQL(t, h, `UPDATE checks SET last_queued = '2026-03-04T05:06:07.089Z' WHERE id = $1`, alpha)

	r := h.do(http.MethodGet, "/v1/checks", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "check_list", r.Raw)

	cases := []struct {
		query string
		names []string
		total float64
	}{
		{"", []string{"Echo", "Delta browser", "Charlie TCP", "Bravo DNS", "Alpha API"}, 5},
		{"?filter=UP", []string{"Alpha API"}, 1},
		{"?filter=up", []string{"Alpha API"}, 1},
		{"?filter=DOWN", []string{"Bravo DNS"}, 1},
		{"?filter=PAUSED", []string{"Charlie TCP"}, 1},
		{"?filter=MUTED", []string{"Delta browser"}, 1},
		{"?filter=PENDING", []string{"Echo"}, 1},
		{"?filter=RECOVERING", nil, 0},
		{"?filter=VERIFYING", nil, 0},
		{"?filter=NA", []string{"Echo", "Delta browser", "Charlie TCP", "Bravo DNS", "Alpha API"}, 5},
		{"?filter=SOMETHING", []string{"Echo", "Delta browser", "Charlie TCP", "Bravo DNS", "Alpha API"}, 5},
		{"?search=alpha", []string{"Alpha API"}, 1},
		{"?search=ECHO.EXAMPLE", []string{"Echo"}, 1},
		{"?search=example.org", []string{"Echo"}, 1},
		{"?search=%25", nil, 0},
		{"?search=br", []string{"Delta browser", "Bravo DNS"}, 2},
		{"?project_id=" + project, []string{"Charlie TCP", "Bravo DNS"}, 2},
		{"?project_id=unassigned", []string{"Echo", "Delta browser", "Alpha API"}, 3},
		{"?project_id=" + project + "&filter=DOWN", []string{"Bravo DNS"}, 1},
		{"?project_id=unassigned&search=a&filter=MUTED", []string{"Delta browser"}, 1},
		{"?per_page=2", []string{"Echo", "Delta browser"}, 5},
		{"?per_page=2&page=3", []string{"Alpha API"}, 5},
		{"?per_page=2&page=4", nil, 5},
	}
	for _, tc := range cases {
		r := h.do(http.MethodGet, "/v1/checks"+tc.query, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if got := ckNames(r); fmt.Sprint(got) != fmt.Sprint(tc.names) || ckTotal(r) != tc.total {
			t.Errorf("%s: %v (total %v), want %v (total %v)", tc.query, got, ckTotal(r), tc.names, tc.total)
		}
	}

	if it := r.Items()[4]; it["name"] != "Alpha API" || it["last_queued"] != "2026-03-04T05:06:07.089Z" {
		t.Errorf("last_queued: %v", it)
	}
	r = h.do(http.MethodGet, "/v1/checks?per_page=1000&page=1", h.tokenA, nil)
	if info := r.Body["result_info"].(map[string]any); info["per_page"] != 100.0 || info["count"] != 5.0 || info["page"] != 1.0 {
		t.Errorf("per_page above 100: result_info %v", info)
	}
	for _, tc := range []struct {
		query string
		want  int
		msg   string
	}{
		{"?page=0", 400, "page: must be at least 1"},
		{"?per_page=abc", 400, "per_page: must be a positive integer"},
		{"?project_id=abc", 400, "project_id: must be a project id"},
		{"?project_id=" + strings.ToUpper(project), 400, "project_id: is not a canonical project id"},
		{"?project_id=" + uuid.NewString(), 404, "project not found"},
		{"?project_id=" + ckInsertProject(t, h, h.orgB, "B's"), 404, "project not found"},
	} {
		r := h.do(http.MethodGet, "/v1/checks"+tc.query, h.tokenA, nil)
		expectStatus(t, r, tc.want)
		if !strings.Contains(r.ErrorText(), tc.msg) {
			t.Errorf("%s: %q does not mention %q", tc.query, r.ErrorText(), tc.msg)
		}
	}
}

// TestCheckListLargeOrganization: a page of 100 out of 10,000 checks is served from the
// checks_org index, not by sorting the organization's checks.
func TestCheckListLargeOrganization(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// One statement for 10,000 rows: storetest.Check, a transaction each, would take minutes.
	ckSQL(t, h, `INSERT INTO checks (id, org_id, kind, name, test_interval, test_regions, alert_priority,
			confirmation_period_seconds, recovery_period_seconds, spec, created_at)
		SELECT gen_random_uuid(), $1, 'UPTIME', 'check ' || i, 60, ARRAY['cloud:us-east-1'], 'HIGH', 60, 180,
			jsonb_build_object('url', 'https://example.com/' || i, 'method', 'GET'), now() - i * interval '1 second'
		FROM generate_series(1, 10000) AS i`, h.orgA)
	ckSQL(t, h, `ANALYZE checks`)
	for _, q := range []string{"?per_page=100", "?per_page=100&page=100", "?per_page=100&search=check%2099", "?per_page=100&filter=UP"} {
		// How fast a page is served is bench-api's figure (a page of 100 among 10,000); the
		// test holds the property that makes it fast: the plan below walks the index.
		r := h.do(http.MethodGet, "/v1/checks"+q, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if len(r.Items()) == 0 && q != "?per_page=100&filter=UP" {
			t.Errorf("%s: no items of %v", q, ckTotal(r))
		}
	}
	r := h.do(http.MethodGet, "/v1/checks?per_page=100", h.tokenA, nil)
	if len(r.Items()) != 100 || ckTotal(r) != 10000 || r.Items()[0]["name"] != "check 1" || r.Items()[99]["name"] != "check 100" {
		t.Fatalf("first page: %d items, total %v, first %v", len(r.Items()), ckTotal(r), r.Items()[0]["name"])
	}
	r = h.do(http.MethodGet, "/v1/checks?per_page=100&page=100", h.tokenA, nil)
	if len(r.Items()) != 100 || r.Items()[99]["name"] != "check 10000" {
		t.Fatalf("last page: %d items, last %v", len(r.Items()), r.Items()[len(r.Items())-1]["name"])
	}
	// The page query walks the index in order and stops after the page.
	rows, err := h.st.Pool().Query(context.Background(), `EXPLAIN SELECT id FROM checks WHERE org_id = $1
		ORDER BY created_at DESC, id DESC LIMIT 100 OFFSET 0`, h.orgA)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	rows.Close()
	if p := strings.Join(lines, "\n"); !strings.Contains(p, "checks_org") || strings.Contains(p, "Sort") {
		t.Fatalf("list page is not served from the checks_org index:\n%s", p)
	}
}

func TestCheckProjectsAndVariables(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shop := ckInsertProject(t, h, h.orgA, "Shop")
	blog := ckInsertProject(t, h, h.orgA, "Blog")
	orgVar := ckInsertVar(t, h, h.orgA, "", "API_TOKEN", "secret")
	ckInsertVar(t, h, h.orgA, "", "USER", "config")
	shopVar := ckInsertVar(t, h, h.orgA, shop, "API_TOKEN", "secret")
	ckInsertVar(t, h, h.orgA, blog, "API_TOKEN", "config") // same name, another type

	refs := func(checkID string) []string {
		rows, err := h.st.Pool().Query(context.Background(), `SELECT env_var_id::text FROM check_env_refs WHERE check_id = $1 ORDER BY 1`, checkID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}

	// Uptime headers and Basic-auth fields bind references in the check's scope.
	id := ckID(t, h, "/v1/checks", ckWith(ckUptimeBody(), "headers", map[string]string{"Authorization": "Bearer {{API_TOKEN}}"},
		"auth_username", "{{USER}}", "auth_password", "{{ API_TOKEN }}"))
	if got := refs(id); len(got) != 2 {
		t.Fatalf("references %v, want API_TOKEN and USER", got)
	}
	for _, tc := range []struct {
		path string
		body map[string]any
		want int
		msg  string
	}{
		{"/v1/checks", ckWith(ckUptimeBody(), "headers", map[string]string{"X-Key": "{{MISSING}}"}), 400, "headers.X-Key: references {{MISSING}}"},
		{"/v1/checks/uptime", ckWith(ckUptimeBody(), "auth_password", "{{NOPE}}"), 400, "auth_password: references {{NOPE}}"},
		{"/v1/checks/uptime", ckWith(ckUptimeBody(), "project_id", blog, "auth_username", "{{USER}}"), 400, "auth_username: references {{USER}}"},
		{"/v1/checks/browser", ckWith(ckBrowserBody(), "auth_password", "{{MISSING}}"), 400, "auth_password: references {{MISSING}}"},
	} {
		r := h.do(http.MethodPost, tc.path, h.tokenA, tc.body)
		expectStatus(t, r, tc.want)
		if !strings.Contains(r.ErrorText(), tc.msg) {
			t.Errorf("%s: %q does not mention %q", tc.path, r.ErrorText(), tc.msg)
		}
	}
	browser := ckCreate(t, h, h.tokenA, "/v1/checks/browser", ckWith(ckBrowserBody(), "auth_password", "{{API_TOKEN}}", "project_id", shop))
	if got := refs(browser["id"].(string)); len(got) != 1 || got[0] != shopVar {
		t.Fatalf("browser references %v, want the Shop project's API_TOKEN", got)
	}
	// A text in body or url is not a reference.
	plain := ckID(t, h, "/v1/checks", ckWith(ckUptimeBody(), "body", "{{NOT_A_VAR}}"))
	if got := refs(plain); len(got) != 0 {
		t.Fatalf("body references %v", got)
	}

	// The generic PATCH moves with the move rules: a missing name in the destination is a 409.
	r := h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"project_id": shop})
	expectStatus(t, r, http.StatusConflict)
	golden(t, "check_patch_move_conflict", r.Raw)
	if errs := r.Body["errors"].([]any); errs[0].(map[string]any)["code"] != 10010.0 || errs[0].(map[string]any)["type"] != "project_move_variable_conflict" {
		t.Fatalf("conflict: %s", r.Raw)
	}
	// Same-name variable of another type: also a conflict.
	onlyToken := ckID(t, h, "/v1/checks", ckWith(ckUptimeBody(), "headers", map[string]string{"X-Token": "{{API_TOKEN}}"}))
	r = h.do(http.MethodPatch, "/v1/checks/"+onlyToken, h.tokenA, map[string]any{"project_id": blog})
	expectStatus(t, r, http.StatusConflict)
	// Into Shop it rebinds to Shop's API_TOKEN.
	r = h.do(http.MethodPatch, "/v1/checks/"+onlyToken, h.tokenA, map[string]any{"project_id": shop, "name": "moved"})
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["project_id"] != shop || res["name"] != "moved" {
		t.Fatalf("moved: %s", r.Raw)
	}
	if got := refs(onlyToken); len(got) != 1 || got[0] != shopVar {
		t.Fatalf("after move references %v, want %s", got, shopVar)
	}
	// null moves back to Unassigned.
	r = h.do(http.MethodPatch, "/v1/checks/"+onlyToken, h.tokenA, map[string]any{"project_id": nil})
	expectStatus(t, r, http.StatusOK)
	if v, present := r.Result()["project_id"]; !present || v != nil {
		t.Fatalf("to Unassigned: %s", r.Raw)
	}
	if got := refs(onlyToken); len(got) != 1 || got[0] != orgVar {
		t.Fatalf("after move back references %v, want %s", got, orgVar)
	}
	// A PATCH that drops the reference while moving is judged on what remains.
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"project_id": blog, "headers": nil, "auth_username": "u", "auth_password": nil})
	expectStatus(t, r, http.StatusOK)
	if got := refs(id); len(got) != 0 {
		t.Fatalf("references %v after dropping them", got)
	}
	// A reference new in this PATCH that the destination lacks is a 400 on its field.
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"project_id": nil, "auth_password": "{{MISSING}}"})
	expectStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(r.ErrorText(), "auth_password: references {{MISSING}}") {
		t.Fatalf("new missing reference: %s", r.Raw)
	}
	if r := h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil); r.Result()["project_id"] != blog {
		t.Fatalf("a refused PATCH moved the check: %s", r.Raw)
	}
	// The same project again is no move; a project of another organization is not found.
	expectStatus(t, h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"project_id": blog}), http.StatusOK)
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"project_id": ckInsertProject(t, h, h.orgB, "B")})
	expectStatus(t, r, http.StatusNotFound)
	if r.FirstError() != "project not found" {
		t.Fatalf("foreign project: %s", r.Raw)
	}
	var moves int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE auditable_id = $1 AND action = 'moved'`, onlyToken).Scan(&moves); err != nil {
		t.Fatal(err)
	}
	if moves != 2 {
		t.Fatalf("%d moved events, want 2", moves)
	}
}

// ckTime parses a test timestamp.
func ckTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCheckIncidents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	other := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	incident := func(n int, started string, ended any) string {
		iid := fmt.Sprintf("00000000-0000-7000-8000-%012d", n)
		ckSQL(t, h, `INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES ($1, $2, $3, $4, $5)`,
			iid, h.orgA, id, ckTime(started), ended)
		return iid
	}
	i1 := incident(1, "2026-01-01T00:00:00Z", ckTime("2026-01-01T01:00:00Z"))
	i2 := incident(2, "2026-01-02T00:00:00Z", ckTime("2026-01-02T00:30:00Z"))
	i4 := incident(4, "2026-01-02T00:00:00Z", ckTime("2026-01-02T05:00:00Z"))
	i3 := incident(3, "2026-01-03T00:00:00Z", nil)
	ckSQL(t, h, `INSERT INTO check_incidents (id, org_id, check_id, started_at) VALUES ($1, $2, $3, '2026-01-01T12:00:00Z')`, uuid.New(), h.orgA, other)

	r := h.do(http.MethodGet, "/v1/checks/tcp/"+id+"/incidents", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "check_incidents", r.Raw)
	if items := r.Items(); items[0]["started_at"] != "2026-01-03T00:00:00.000Z" || items[3]["ended_at"] != "2026-01-01T01:00:00.000Z" {
		t.Fatalf("incident timestamps: %s", r.Raw)
	}
	ids := func(r response) []string {
		var out []string
		for _, it := range r.Items() {
			out = append(out, it["id"].(string))
		}
		return out
	}
	cases := []struct {
		query string
		want  []string
		total float64
	}{
		{"", []string{i3, i4, i2, i1}, 4},
		{"?from=2026-01-01T00:30:00Z&to=2026-01-01T02:00:00Z", []string{i1}, 1},
		{"?from=2026-01-02T00:30:00.000Z", []string{i3, i4}, 2}, // i2 ended exactly at from
		{"?to=2026-01-01T00:00:00Z", nil, 0},                    // i1 starts exactly at to
		{"?to=2026-01-01T00:00:00.001Z", []string{i1}, 1},       // millisecond precision
		{"?from=2030-01-01T00:00:00%2B02:00", []string{i3}, 1},  // open incidents last forever
		{"?from=2026-01-02T04:59:59.999Z&to=2026-01-02T05:00:00Z", []string{i4}, 1},
		{"?per_page=2", []string{i3, i4}, 4},
		{"?per_page=2&page=2", []string{i2, i1}, 4},
		{"?per_page=2&page=3", nil, 4},
	}
	for _, tc := range cases {
		r := h.do(http.MethodGet, "/v1/checks/tcp/"+id+"/incidents"+tc.query, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if got := ids(r); fmt.Sprint(got) != fmt.Sprint(tc.want) || ckTotal(r) != tc.total {
			t.Errorf("%s: %v (total %v), want %v (total %v)", tc.query, got, ckTotal(r), tc.want, tc.total)
		}
	}
	for _, tc := range []struct{ query, msg string }{
		{"?per_page=101", "per_page: must be at most 100"},
		{"?per_page=0", "per_page: must be at least 1"},
		{"?page=-1", "page: must be at least 1"},
		{"?page=9007199254740992", "page: must be a positive integer"},
		{"?page=9007199254740991&per_page=100", "page × per_page is too large"},
		{"?from=yesterday", "from: must be an ISO 8601 date-time"},
		{"?from=2026-01-01T00:00:00.0001Z", "from: must have at most 3 fractional digits"},
		{"?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "to: must be later than from"},
		{"?from=2026-01-02T00:00:00Z&to=2026-01-02T00:00:00Z", "to: must be later than from"},
	} {
		r := h.do(http.MethodGet, "/v1/checks/tcp/"+id+"/incidents"+tc.query, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), tc.msg) {
			t.Errorf("%s: %q does not mention %q", tc.query, r.ErrorText(), tc.msg)
		}
	}
	// The incident list of any kind works the same.
	dnsID := ckID(t, h, "/v1/checks/dns", ckDNSBody())
	r = h.do(http.MethodGet, "/v1/checks/dns/"+dnsID+"/incidents", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if len(r.Items()) != 0 || ckTotal(r) != 0 {
		t.Fatalf("empty incident list: %s", r.Raw)
	}
}

// ckInsertResult writes one result row of check at checked.
func ckInsertResult(t *testing.T, h *harness, checkID string, n int, checked string, kindCols string, kindVals ...any) {
	t.Helper()
	cols := "id, org_id, check_id, job_id, region, attempt_number, is_final_attempt, checked_at, dispatched_at, passing, response_time_ms, body_availability"
	args := []any{fmt.Sprintf("00000000-0000-7000-9000-%012d", n), h.orgA, checkID, uuid.New(), "cloud:eu-west-2", 1, true,
		ckTime(checked), ckTime(checked).Add(-250 * time.Millisecond), n%2 == 1, 120.5 + float64(n), "AVAILABLE"}
	if kindCols != "" {
		cols += ", " + kindCols
		args = append(args, kindVals...)
	}
	ph := make([]string, len(args))
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	ckSQL(t, h, `INSERT INTO check_results (`+cols+`) VALUES (`+strings.Join(ph, ", ")+`)`, args...)
}

func TestCheckResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	up := ckID(t, h, "/v1/checks/uptime", ckUptimeBody())
	dns := ckID(t, h, "/v1/checks/dns", ckDNSBody())
	tcp := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	httpCols := "response_code, result_summary, response_body"
	ckInsertResult(t, h, up, 3, "2026-02-01T10:02:00Z", httpCols, 500, "HTTP 500", nil)
	ckInsertResult(t, h, up, 1, "2026-02-01T10:00:00Z", httpCols, 200, "HTTP 200", `{"status":"ok"}`)
	ckInsertResult(t, h, up, 2, "2026-02-01T10:01:00.5Z", httpCols, 200, nil, "")
	ckInsertResult(t, h, up, 4, "2026-02-01T11:00:00Z", httpCols, 200, nil, nil) // outside the window
	ckInsertResult(t, h, dns, 5, "2026-02-01T10:00:00Z", "dns_status, failure_source, failure_type, resolver, parsed_response",
		"NOERROR", nil, nil, "1.1.1.1:53", `[{"type":"A","data":"93.184.216.34"}]`)
	ckInsertResult(t, h, dns, 6, "2026-02-01T10:01:00Z", "dns_status, failure_source, failure_type, resolver",
		"NXDOMAIN", "ASSERTION", "ASSERTION_FAILED", "1.1.1.1:53")
	ckInsertResult(t, h, tcp, 7, "2026-02-01T10:00:00Z", "tcp_status, failure_source, failure_type, dns_time_ms, connect_time_ms, data_time_ms",
		"CONNECTED", nil, nil, 1.5, 20.25, nil)

	window := "?from=2026-02-01T10:00:00.000Z&to=2026-02-01T11:00:00Z"
	for _, tc := range []struct{ kind, id, golden string }{
		{"uptime", up, "check_results_uptime"},
		{"dns", dns, "check_results_dns"},
		{"tcp", tcp, "check_results_tcp"},
	} {
		r := h.do(http.MethodGet, "/v1/checks/"+tc.kind+"/"+tc.id+"/results"+window, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		golden(t, tc.golden, r.Raw)
		if w := r.Result()["window"].(map[string]any); w["from"] != "2026-02-01T10:00:00.000Z" || w["to"] != "2026-02-01T11:00:00.000Z" {
			t.Errorf("%s: window %v", tc.kind, w)
		}
		if first := r.Result()["results"].([]any)[0].(map[string]any); first["checked_at"] != "2026-02-01T10:00:00.000Z" {
			t.Errorf("%s: checked_at %v", tc.kind, first["checked_at"])
		}
		if _, present := r.Body["result_info"]; present {
			t.Errorf("%s: result_info belongs inside result: %s", tc.kind, r.Raw)
		}
	}
	r := h.do(http.MethodGet, "/v1/checks/uptime/"+up+"/results"+window+"&per_page=2&page=2", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	res := r.Result()
	results := res["results"].([]any)
	info := res["result_info"].(map[string]any)
	if len(results) != 1 || results[0].(map[string]any)["response_code"] != 500.0 || results[0].(map[string]any)["checked_at"] != "2026-02-01T10:02:00.000Z" || info["total_count"] != 3.0 || info["count"] != 1.0 || info["page"] != 2.0 {
		t.Fatalf("second page: %s", r.Raw)
	}
	for _, tc := range []struct{ query, msg string }{
		{"", "from: is required; to: is required"},
		{"?from=2026-02-01T10:00:00Z", "to: is required"},
		{"?from=2026-02-01T10:00:00Z&to=2026-02-08T10:00:00.001Z", "to: the range from..to must not exceed 7 days"},
		{"?from=2026-02-01T10:00:00Z&to=2026-02-01T10:00:00Z", "to: must be later than from"},
		{"?from=2026-02-01T10:00:00Z&to=2026-02-01", "to: must be an ISO 8601 date-time"},
		{window + "&per_page=101", "per_page: must be at most 100"},
	} {
		r := h.do(http.MethodGet, "/v1/checks/uptime/"+up+"/results"+tc.query, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), tc.msg) {
			t.Errorf("%s: %q does not mention %q", tc.query, r.ErrorText(), tc.msg)
		}
	}
	r = h.do(http.MethodGet, "/v1/checks/uptime/"+up+"/results"+window+"&per_page=1&page=2", h.tokenA, nil)
	if got := r.Result()["results"].([]any)[0].(map[string]any)["checked_at"]; got != "2026-02-01T10:01:00.500Z" {
		t.Fatalf("checked_at with milliseconds: %v", got)
	}
	// Exactly seven days is allowed.
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/uptime/"+up+"/results?from=2026-02-01T10:00:00Z&to=2026-02-08T10:00:00Z", h.tokenA, nil), http.StatusOK)
}

// TestCheckResultsStorageUnavailable: a result query the database cannot answer in time is a
// 503, not a 500.
func TestCheckResultsStorageUnavailable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/dns", ckDNSBody())
	ctx := context.Background()
	tx, err := h.st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `LOCK TABLE check_results IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	reqCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	req := httptest.NewRequest(http.MethodGet, "/v1/checks/dns/"+id+"/results?from=2026-02-01T10:00:00Z&to=2026-02-02T10:00:00Z", nil).WithContext(reqCtx)
	req.Header.Set("Authorization", "Bearer "+h.tokenA)
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"success":false`) {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
}
