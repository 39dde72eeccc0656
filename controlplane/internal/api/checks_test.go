package api

import (
	"context"
	"github.com/vantagehq/vantage/pkg/check"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// Fixtures of the checks tests (prefixed ck to stay clear of other files' helpers). Projects
// and variables are written with SQL so that these tests depend on the checks API only.

// ckCreate creates a check through the API and returns the result.
func ckCreate(t *testing.T, h *harness, token, path string, body map[string]any) map[string]any {
	t.Helper()
	r := h.do(http.MethodPost, path, token, body)
	expectStatus(t, r, http.StatusCreated)
	return r.Result()
}

// ckID creates a check and returns its id.
func ckID(t *testing.T, h *harness, path string, body map[string]any) string {
	t.Helper()
	return ckCreate(t, h, h.tokenA, path, body)["id"].(string)
}

// ckInsertProject writes a project of org and returns its id.
func ckInsertProject(t *testing.T, h *harness, org uuid.UUID, name string) string {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO projects (id, org_id, name) VALUES ($1, $2, $3)`, id, org, name); err != nil {
		t.Fatalf("insert project: %v", err)
	}
	return id.String()
}

// ckInsertVar writes a variable of org in project ("" = the organization scope).
func ckInsertVar(t *testing.T, h *harness, org uuid.UUID, project, name, typ string) string {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	var p *string
	if project != "" {
		p = &project
	}
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc)
		VALUES ($1, $2, $3, $4, $5, '\x00')`, id, org, p, name, typ); err != nil {
		t.Fatalf("insert variable: %v", err)
	}
	return id.String()
}

// ckSQL runs a statement on the test database.
func ckSQL(t *testing.T, h *harness, sql string, args ...any) {
	t.Helper()
	if _, err := h.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

const ckScript = "import { test, expect } from '@playwright/test'\n\ntest('home page', async ({ page }) => {\n  await page.goto('https://example.com')\n})\n"

func ckUptimeBody() map[string]any {
	return map[string]any{"name": "API health", "url": "https://api.example.com/health"}
}

func ckBrowserBody() map[string]any {
	return map[string]any{"name": "Login flow", "script": ckScript}
}

func ckDNSBody() map[string]any {
	return map[string]any{"name": "Apex A record", "dns_domain": "example.com", "dns_record_type": "A"}
}

func ckTCPBody() map[string]any {
	return map[string]any{"name": "Postgres port", "tcp_hostname": "db.example.com", "tcp_port": 5432}
}

// ckWith returns body with extra fields set (a nil value sets JSON null).
func ckWith(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// ckWithout returns body without the named fields.
func ckWithout(body map[string]any, names ...string) map[string]any {
	out := ckWith(body)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func TestCheckShapesGolden(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := ckInsertProject(t, h, h.orgA, "Shop")

	full := map[string]any{
		"project_id": project, "name": "Checkout API", "type": "UPTIME_CHECK", "test_interval": 300,
		"test_regions": []string{"cloud:eu-west-2", "cloud:us-west-1"}, "user_alerts": []string{"u1"},
		"webhook_alerts": []string{"w1", "w2"}, "alert_priority": "LOW", "confirmation_period_seconds": 0,
		"recovery_period_seconds": 300, "reminder_alert_interval_minutes": -1, "timeout": 5000,
		"url": "https://shop.example.com/api/checkout", "text_to_search_for": "ok",
		"headers": map[string]string{"Accept": "application/json"}, "method": "POST", "body": `{"dry_run":true}`,
		"follow_redirects": false, "verify_ssl": false,
		"assertions": []any{map[string]any{"type": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "expected": "ok"},
			map[string]any{"type": "RESPONSE_HEADERS", "property": "Content-Type", "comparison": "CONTAINS", "expected": "json"}},
		"auth_username": "monitor", "auth_password": "hunter2",
	}
	cases := []struct {
		name string
		path string
		get  string
		body map[string]any
	}{
		{"check_uptime", "/v1/checks", "/v1/checks/", full},
		{"check_uptime_defaults", "/v1/checks/uptime", "/v1/checks/uptime/", ckUptimeBody()},
		{"check_browser", "/v1/checks/browser", "/v1/checks/browser/", ckWith(ckBrowserBody(), "version", "NODE24_BROWSER", "timeout", 90000)},
		{"check_dns", "/v1/checks/dns", "/v1/checks/dns/", ckDNSBody()},
		{"check_tcp", "/v1/checks/tcp", "/v1/checks/tcp/", ckWith(ckTCPBody(), "type", "TCP_CHECK", "tcp_ip_family", "IPv6",
			"tcp_data", "PING\r\n", "tcp_should_fail", true, "project_id", project,
			"assertions", []any{map[string]any{"type": "TCP_RESPONSE_TIME", "property": "responseTime", "comparison": "LESS_THAN", "expected": "200"}})},
		{"check_multistep", "/v1/checks/multistep", "/v1/checks/multistep/", ckMultistepBody()},
	}
	for _, tc := range cases {
		r := h.do(http.MethodPost, tc.path, h.tokenA, tc.body)
		expectStatus(t, r, http.StatusCreated)
		golden(t, tc.name+"_create", r.Raw)
		r = h.do(http.MethodGet, tc.get+r.Result()["id"].(string), h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		golden(t, tc.name+"_get", r.Raw)
	}
}

func TestCheckDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	common := map[string]any{"status": "PENDING", "test_interval": 60.0, "timeout": 10000.0, "confirmation_period_seconds": 60.0,
		"recovery_period_seconds": 180.0, "reminder_alert_interval_minutes": 1440.0, "last_queued": nil, "project_id": nil}
	cases := []struct {
		path string
		body map[string]any
		want map[string]any
	}{
		{"/v1/checks", ckUptimeBody(), map[string]any{"check_type": "UPTIME", "alert_priority": "HIGH", "method": "GET",
			"follow_redirects": true, "verify_ssl": true, "version": nil, "headers": nil, "assertions": nil}},
		{"/v1/checks", ckWith(ckBrowserBody(), "type", "BROWSER_CHECK"), map[string]any{"check_type": "BROWSER", "version": "NODE24_BROWSER", "url": nil}},
		{"/v1/checks/browser", ckBrowserBody(), map[string]any{"check_type": "BROWSER", "alert_priority": "HIGH", "version": "NODE24_BROWSER"}},
		{"/v1/checks/dns", ckDNSBody(), map[string]any{"check_type": "DNS", "alert_priority": "HIGH", "dns_protocol": "UDP",
			"dns_resolver": nil, "url": nil, "version": "NODE24_DNS"}},
		{"/v1/checks/tcp", ckTCPBody(), map[string]any{"check_type": "TCP", "alert_priority": "LOW", "tcp_ip_family": "IPv4",
			"tcp_should_fail": false, "tcp_data": nil, "url": nil, "version": "NODE24_TCP"}},
	}
	for _, tc := range cases {
		res := ckCreate(t, h, h.tokenA, tc.path, tc.body)
		for _, want := range []map[string]any{common, tc.want} {
			for k, v := range want {
				if got, ok := res[k]; !ok || got != v {
					t.Errorf("%s %v: %s = %#v, want %#v", tc.path, tc.body["name"], k, got, v)
				}
			}
		}
		if regions, _ := res["test_regions"].([]any); len(regions) != 3 || regions[0] != "cloud:us-east-1" {
			t.Errorf("%s: default test_regions = %v", tc.path, res["test_regions"])
		}
		for _, l := range []string{"user_alerts", "slack_alerts", "discord_alerts", "incident_io_alerts", "microsoft_teams_alerts",
			"telegram_alerts", "pushover_alerts", "webhook_alerts", "oncall_alerts"} {
			if arr, ok := res[l].([]any); !ok || len(arr) != 0 {
				t.Errorf("%s: %s = %#v, want []", tc.path, l, res[l])
			}
		}
	}
}

func TestCheckPatchSemantics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "alert_priority", "LOW", "timeout", 5000, "method", "POST",
		"test_regions", []string{"cloud:ap-south-1"}, "slack_alerts", []string{h.newIntegration(h.orgA, integration.Slack)}, "follow_redirects", false,
		"headers", map[string]string{"X-A": "1"}, "assertions", []any{map[string]any{"type": "TEXT_BODY", "property": "", "comparison": "CONTAINS", "expected": "ok"}}))

	// Only given fields change; nothing falls back to a default.
	r := h.do(http.MethodPatch, "/v1/checks/uptime/"+id, h.tokenA, map[string]any{"name": "  Renamed  "})
	expectStatus(t, r, http.StatusOK)
	res := r.Result()
	want := map[string]any{"name": "Renamed", "alert_priority": "LOW", "timeout": 5000.0, "method": "POST", "follow_redirects": false,
		"url": "https://api.example.com/health", "status": "PENDING"}
	for k, v := range want {
		if res[k] != v {
			t.Errorf("after PATCH name: %s = %#v, want %#v", k, res[k], v)
		}
	}
	if regions := res["test_regions"].([]any); len(regions) != 1 || regions[0] != "cloud:ap-south-1" {
		t.Errorf("test_regions reset: %v", regions)
	}
	if s := res["slack_alerts"].([]any); len(s) != 1 {
		t.Errorf("slack_alerts reset: %v", s)
	}
	if a, _ := res["assertions"].([]any); len(a) != 1 {
		t.Errorf("assertions reset: %v", res["assertions"])
	}

	// Status: paused wins over muted, muted over the state.
	steps := []struct {
		body   map[string]any
		status string
	}{
		{map[string]any{"muted": true}, "MUTED"},
		{map[string]any{"paused": true}, "PAUSED"},
		{map[string]any{"muted": false}, "PAUSED"},
		{map[string]any{"paused": false}, "PENDING"},
		{map[string]any{"paused": true, "muted": true}, "PAUSED"},
		{map[string]any{"paused": false}, "MUTED"},
		{map[string]any{"muted": false}, "PENDING"},
	}
	for i, s := range steps {
		r := h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, s.body)
		expectStatus(t, r, http.StatusOK)
		if got := r.Result()["status"]; got != s.status {
			t.Fatalf("step %d %v: status %v, want %s", i, s.body, got, s.status)
		}
	}
	ckSQL(t, h, `UPDATE checks SET state = 'DOWN' WHERE id = $1`, id)
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"muted": true})
	if r.Result()["status"] != "MUTED" {
		t.Fatalf("muted DOWN check: %s", r.Raw)
	}
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"muted": false})
	if r.Result()["status"] != "DOWN" {
		t.Fatalf("unmuted DOWN check: %s", r.Raw)
	}

	// null clears nullable fields; an empty PATCH changes nothing.
	r = h.do(http.MethodPatch, "/v1/checks/uptime/"+id, h.tokenA, map[string]any{"headers": nil, "assertions": nil, "text_to_search_for": nil})
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["headers"] != nil || res["assertions"] != nil || res["text_to_search_for"] != nil {
		t.Fatalf("null did not clear: %s", r.Raw)
	}
	before := h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil)
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{})
	expectStatus(t, r, http.StatusOK)
	after := h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil)
	if string(before.Raw) != string(after.Raw) {
		t.Fatalf("empty PATCH changed the check:\n%s\n%s", before.Raw, after.Raw)
	}

	// TCP: LOW stays LOW on PATCH of other fields; tcp_data null clears it.
	tcpID := ckID(t, h, "/v1/checks/tcp", ckWith(ckTCPBody(), "tcp_data", "PING", "alert_priority", "HIGH"))
	r = h.do(http.MethodPatch, "/v1/checks/tcp/"+tcpID, h.tokenA, map[string]any{"tcp_data": nil, "tcp_port": 6432})
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["tcp_data"] != nil || res["tcp_port"] != 6432.0 || res["alert_priority"] != "HIGH" || res["tcp_hostname"] != "db.example.com" {
		t.Fatalf("TCP PATCH: %s", r.Raw)
	}
	// DNS: dns_resolver null goes back to the default resolver.
	dnsID := ckID(t, h, "/v1/checks/dns", ckWith(ckDNSBody(), "dns_resolver", "1.1.1.1:53"))
	r = h.do(http.MethodPatch, "/v1/checks/dns/"+dnsID, h.tokenA, map[string]any{"dns_resolver": nil, "dns_record_type": "MX", "type": "DNS_CHECK"})
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["dns_resolver"] != nil || res["dns_record_type"] != "MX" || res["dns_protocol"] != "UDP" {
		t.Fatalf("DNS PATCH: %s", r.Raw)
	}

	// The generic PATCH switches uptime to browser and back.
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"type": "BROWSER_CHECK", "script": ckScript})
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["check_type"] != "BROWSER" || res["version"] != "NODE24_BROWSER" || res["script"] != nil {
		t.Fatalf("to browser: %s", r.Raw)
	}
	r = h.do(http.MethodGet, "/v1/checks/browser/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["script"] != ckScript {
		t.Fatalf("browser script not stored: %s", r.Raw)
	}
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"type": "UPTIME_CHECK"})
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodGet, "/v1/checks/uptime/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["check_type"] != "UPTIME" || res["version"] != nil || res["script"] != nil {
		t.Fatalf("back to uptime: %s", r.Raw)
	}

	// Every change is audited in its transaction.
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM audit_events
		WHERE org_id = $1 AND auditable_id = $2 AND auditable_type = 'Check' AND audit_action = 'check.updated'`, h.orgA, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 14 {
		t.Fatalf("%d check.updated events, want 14 (one per accepted PATCH)", n)
	}
}

func TestCheckNullVersusEmpty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	empty := ckCreate(t, h, h.tokenA, "/v1/checks", ckWith(ckUptimeBody(), "auth_username", "", "auth_password", "",
		"headers", map[string]string{}, "assertions", []any{}, "text_to_search_for", "", "body", ""))
	unset := ckCreate(t, h, h.tokenA, "/v1/checks", ckUptimeBody())
	for _, res := range []map[string]any{empty, h.do(http.MethodGet, "/v1/checks/"+empty["id"].(string), h.tokenA, nil).Result()} {
		for _, k := range []string{"auth_username", "auth_password", "text_to_search_for", "body"} {
			if res[k] != "" {
				t.Errorf("%s = %#v, want \"\"", k, res[k])
			}
		}
		if m, ok := res["headers"].(map[string]any); !ok || len(m) != 0 {
			t.Errorf("headers = %#v, want {}", res["headers"])
		}
		if a, ok := res["assertions"].([]any); !ok || len(a) != 0 {
			t.Errorf("assertions = %#v, want []", res["assertions"])
		}
	}
	for _, res := range []map[string]any{unset, h.do(http.MethodGet, "/v1/checks/"+unset["id"].(string), h.tokenA, nil).Result()} {
		for _, k := range []string{"auth_username", "auth_password", "text_to_search_for", "body", "headers", "assertions", "script", "version", "last_queued", "project_id"} {
			if v, present := res[k]; !present || v != nil {
				t.Errorf("%s = %#v (present %v), want null", k, v, present)
			}
		}
	}
	// TCP and DNS: unset nullable fields are null, and present.
	tcp := ckCreate(t, h, h.tokenA, "/v1/checks/tcp", ckWith(ckTCPBody(), "tcp_data", ""))
	if tcp["tcp_data"] != "" || tcp["assertions"] != nil {
		t.Errorf("tcp_data/assertions: %#v %#v", tcp["tcp_data"], tcp["assertions"])
	}
}

func TestCheckScriptOnlyOnRetrieve(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := ckCreate(t, h, h.tokenA, "/v1/checks/browser", ckBrowserBody())
	id := res["id"].(string)
	if v, present := res["script"]; !present || v != nil {
		t.Fatalf("create response script = %#v, want null", v)
	}
	for _, path := range []string{"/v1/checks/" + id, "/v1/checks/browser/" + id} {
		r := h.do(http.MethodGet, path, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if r.Result()["script"] != ckScript {
			t.Fatalf("GET %s script = %#v", path, r.Result()["script"])
		}
	}
	for _, path := range []string{"/v1/checks/" + id, "/v1/checks/browser/" + id} {
		r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"name": "Renamed"})
		expectStatus(t, r, http.StatusOK)
		if v, present := r.Result()["script"]; !present || v != nil {
			t.Fatalf("PATCH %s script = %#v, want null", path, v)
		}
	}
	r := h.do(http.MethodGet, "/v1/checks", h.tokenA, nil)
	if _, present := r.Items()[0]["script"]; present {
		t.Fatalf("list items carry script: %s", r.Raw)
	}
	// A PATCH that does not touch the script keeps it.
	r = h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil)
	if r.Result()["script"] != ckScript {
		t.Fatalf("script lost by PATCH: %s", r.Raw)
	}
}

func TestCheckAuthPasswordSealed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const secret = "correct-horse-battery-staple"
	res := ckCreate(t, h, h.tokenA, "/v1/checks", ckWith(ckUptimeBody(), "auth_username", "monitor", "auth_password", secret))
	id := res["id"].(string)
	if res["auth_password"] != secret {
		t.Fatalf("create response auth_password = %#v", res["auth_password"])
	}
	sealed := func() []byte {
		var b []byte
		if err := h.st.Pool().QueryRow(context.Background(), `SELECT auth_password_enc FROM checks WHERE id = $1`, id).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := sealed()
	if len(b) == 0 || strings.Contains(string(b), secret) || strings.Contains(string(b), "horse") {
		t.Fatalf("auth_password_enc does not look sealed: %q", b)
	}
	var plainColumns int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM checks WHERE id = $1 AND row_to_json(checks)::text LIKE '%' || $2 || '%'`, id, secret).Scan(&plainColumns); err != nil {
		t.Fatal(err)
	}
	if plainColumns != 0 {
		t.Fatal("the plaintext password is stored in some column")
	}
	if r := h.do(http.MethodGet, "/v1/checks/uptime/"+id, h.tokenA, nil); r.Result()["auth_password"] != secret {
		t.Fatalf("GET auth_password = %#v", r.Result()["auth_password"])
	}
	// A PATCH of another field keeps the password; null removes it.
	r := h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"name": "x"})
	if r.Result()["auth_password"] != secret {
		t.Fatalf("PATCH lost auth_password: %s", r.Raw)
	}
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"auth_password": nil})
	if v, present := r.Result()["auth_password"]; !present || v != nil {
		t.Fatalf("auth_password null: %s", r.Raw)
	}
	if b := sealed(); b != nil {
		t.Fatalf("auth_password_enc = %q after null, want NULL", b)
	}
}

func TestCheckOrgIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := map[string]string{
		"uptime":    ckID(t, h, "/v1/checks/uptime", ckUptimeBody()),
		"browser":   ckID(t, h, "/v1/checks/browser", ckBrowserBody()),
		"dns":       ckID(t, h, "/v1/checks/dns", ckDNSBody()),
		"tcp":       ckID(t, h, "/v1/checks/tcp", ckTCPBody()),
		"multistep": ckID(t, h, "/v1/checks/multistep", ckMultistepBody()),
	}
	for kind, id := range ids {
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, "/v1/checks/" + id},
			{http.MethodPatch, "/v1/checks/" + id},
			{http.MethodDelete, "/v1/checks/" + id},
			{http.MethodGet, "/v1/checks/" + kind + "/" + id},
			{http.MethodPatch, "/v1/checks/" + kind + "/" + id},
			{http.MethodDelete, "/v1/checks/" + kind + "/" + id},
			{http.MethodGet, "/v1/checks/" + kind + "/" + id + "/incidents"},
			{http.MethodGet, "/v1/checks/" + kind + "/" + id + "/results?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"},
		} {
			var body any
			if req.method == http.MethodPatch {
				body = map[string]any{"name": "stolen"}
			}
			r := h.do(req.method, req.path, h.tokenB, body)
			expectStatus(t, r, http.StatusNotFound)
			missing := h.do(req.method, strings.Replace(req.path, id, uuid.NewString(), 1), h.tokenB, body)
			if r.FirstError() != missing.FirstError() {
				t.Errorf("%s %s: another org's id answers %q, a missing id %q", req.method, req.path, r.FirstError(), missing.FirstError())
			}
		}
	}
	if r := h.do(http.MethodGet, "/v1/checks", h.tokenB, nil); len(r.Items()) != 0 || r.Body["result_info"].(map[string]any)["total_count"] != 0.0 {
		t.Fatalf("org B lists org A's checks: %s", r.Raw)
	}
	// Nothing of org A changed.
	r := h.do(http.MethodGet, "/v1/checks", h.tokenA, nil)
	if len(r.Items()) != len(ids) {
		t.Fatalf("org A has %d checks, want %d", len(r.Items()), len(ids))
	}
	for _, it := range r.Items() {
		if it["name"] == "stolen" {
			t.Fatal("org B renamed a check of org A")
		}
	}
}

func TestCheckPermissions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/dns", ckDNSBody())
	read := h.token(h.orgA, "UPTIME_CHECKS:READ")
	none := h.token(h.orgA, "WEBHOOKS:EDIT")
	cases := []struct {
		method, path, token string
		body                any
		want                int
	}{
		{http.MethodGet, "/v1/checks", read, nil, 200},
		{http.MethodGet, "/v1/checks/" + id, read, nil, 200},
		{http.MethodGet, "/v1/checks/dns/" + id + "/incidents", read, nil, 200},
		{http.MethodPost, "/v1/checks", read, ckUptimeBody(), 403},
		{http.MethodPost, "/v1/checks/dns", read, ckDNSBody(), 403},
		{http.MethodPost, "/v1/checks/tcp", read, ckTCPBody(), 403},
		{http.MethodPatch, "/v1/checks/" + id, read, map[string]any{"name": "x"}, 403},
		{http.MethodPatch, "/v1/checks/dns/" + id, read, map[string]any{"name": "x"}, 403},
		{http.MethodDelete, "/v1/checks/" + id, read, nil, 403},
		{http.MethodDelete, "/v1/checks/dns/" + id, read, nil, 403},
		{http.MethodGet, "/v1/checks", none, nil, 403},
		{http.MethodGet, "/v1/checks/dns/" + id, none, nil, 403},
		{http.MethodGet, "/v1/checks", "", nil, 401},
	}
	for _, tc := range cases {
		r := h.do(tc.method, tc.path, tc.token, tc.body)
		if r.Status != tc.want {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, r.Status, tc.want, r.Raw)
		}
	}
	if r := h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil); r.Result()["name"] != "Apex A record" {
		t.Fatal("a refused request changed the check")
	}
}

// TestCheckKindRoutes: typed routes serve their kind only (api/openapi/checks-tcp.yaml [I]), and path ids
// follow api/openapi/openapi.yaml.
func TestCheckKindRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := map[string]string{
		"uptime":  ckID(t, h, "/v1/checks/uptime", ckUptimeBody()),
		"browser": ckID(t, h, "/v1/checks/browser", ckBrowserBody()),
		"dns":     ckID(t, h, "/v1/checks/dns", ckDNSBody()),
		"tcp":     ckID(t, h, "/v1/checks/tcp", ckTCPBody()),
	}
	for kind, id := range ids {
		for other := range ids {
			if other == kind {
				continue
			}
			for _, req := range []struct{ method, path string }{
				{http.MethodGet, "/v1/checks/" + other + "/" + id},
				{http.MethodPatch, "/v1/checks/" + other + "/" + id},
				{http.MethodDelete, "/v1/checks/" + other + "/" + id},
				{http.MethodGet, "/v1/checks/" + other + "/" + id + "/incidents"},
				{http.MethodGet, "/v1/checks/" + other + "/" + id + "/results?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"},
			} {
				var body any
				if req.method == http.MethodPatch {
					body = map[string]any{}
				}
				r := h.do(req.method, req.path, h.tokenA, body)
				expectStatus(t, r, http.StatusNotFound)
				if want := kindNoun[check.Kind(strings.ToUpper(other))] + " not found"; r.FirstError() != want {
					t.Errorf("%s %s: %q, want %q", req.method, req.path, r.FirstError(), want)
				}
			}
		}
		r := h.do(http.MethodGet, "/v1/checks/"+kind+"/"+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if r.Result()["check_type"] != strings.ToUpper(kind) {
			t.Errorf("GET %s: check_type %v", kind, r.Result()["check_type"])
		}
	}
	// Path id rules: CRUD needs 8 characters, lists 1; a well-formed id that is not ours is 404.
	for _, tc := range []struct {
		method, path string
		want         int
		msg          string
	}{
		{http.MethodGet, "/v1/checks/1234567", 400, "check_id must be at least 8 characters"},
		{http.MethodDelete, "/v1/checks/tcp/abc", 400, "check_id must be at least 8 characters"},
		{http.MethodGet, "/v1/checks/12345678", 404, "check not found"},
		{http.MethodGet, "/v1/checks/dns/x/incidents", 404, "DNS check not found"},
	} {
		r := h.do(tc.method, tc.path, h.tokenA, nil)
		expectStatus(t, r, tc.want)
		if !strings.Contains(r.FirstError(), tc.msg) {
			t.Errorf("%s %s: %q does not mention %q", tc.method, tc.path, r.FirstError(), tc.msg)
		}
	}
}

func TestCheckDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct{ create, del string }{
		{"/v1/checks/uptime", "/v1/checks/"},
		{"/v1/checks/dns", "/v1/checks/dns/"},
		{"/v1/checks/tcp", "/v1/checks/tcp/"},
		{"/v1/checks/browser", "/v1/checks/browser/"},
	} {
		body := map[string]map[string]any{"/v1/checks/uptime": ckUptimeBody(), "/v1/checks/dns": ckDNSBody(),
			"/v1/checks/tcp": ckTCPBody(), "/v1/checks/browser": ckBrowserBody()}[tc.create]
		id := ckID(t, h, tc.create, body)
		ckSQL(t, h, `INSERT INTO check_incidents (id, org_id, check_id, started_at) VALUES ($1, $2, $3, now())`, uuid.New(), h.orgA, id)
		r := h.do(http.MethodDelete, tc.del+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if len(r.Result()) != 1 || r.Result()["id"] != id {
			t.Fatalf("delete result: %s", r.Raw)
		}
		if tc.create == "/v1/checks/dns" {
			golden(t, "check_delete", r.Raw)
		}
		expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil), http.StatusNotFound)
		expectStatus(t, h.do(http.MethodDelete, tc.del+id, h.tokenA, nil), http.StatusNotFound)
		var n int
		if err := h.st.Pool().QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM check_incidents WHERE check_id = $1) +
			(SELECT count(*) FROM audit_events WHERE auditable_id = $2 AND audit_action = 'check.deleted') * 10`, id, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 10 {
			t.Fatalf("after delete: incidents+10*audits = %d, want 10 (incidents cascade, one audit event)", n)
		}
	}
}
