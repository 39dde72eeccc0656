package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzTarget is one route whose body the fuzzer writes; path may hold one resource id, filled in
// from the resources created before fuzzing.
type fuzzTarget struct {
	method, path string
	resource     string // key into the created ids, or ""
}

var fuzzTargets = []fuzzTarget{
	{http.MethodPost, "/v1/checks", ""},
	{http.MethodPost, "/v1/checks/uptime", ""},
	{http.MethodPost, "/v1/checks/browser", ""},
	{http.MethodPost, "/v1/checks/dns", ""},
	{http.MethodPost, "/v1/checks/tcp", ""},
	{http.MethodPost, "/v1/env", ""},
	{http.MethodPost, "/v1/tokens", ""},
	{http.MethodPost, "/v1/projects", ""},
	{http.MethodPatch, "/v1/checks/%s", "uptime"},
	{http.MethodPatch, "/v1/checks/uptime/%s", "uptime"},
	{http.MethodPatch, "/v1/checks/browser/%s", "browser"},
	{http.MethodPatch, "/v1/checks/dns/%s", "dns"},
	{http.MethodPatch, "/v1/checks/tcp/%s", "tcp"},
	{http.MethodPatch, "/v1/env/%s", "env"},
	{http.MethodPatch, "/v1/projects/%s", "project"},
	{http.MethodPost, "/v1/checks/%s/move", "uptime"},
	// Every other route with a body; {name} is the id of the resource created as name.
	{http.MethodPost, "/v1/heartbeats", ""},
	{http.MethodPatch, "/v1/heartbeats/{heartbeat}", ""},
	{http.MethodPost, "/v1/heartbeats/{heartbeat}/move", ""},
	{http.MethodPost, "/v1/maintenance-windows", ""},
	{http.MethodPatch, "/v1/maintenance-windows/{window}", ""},
	{http.MethodPost, "/v1/webhooks", ""},
	{http.MethodPatch, "/v1/webhooks/{webhook}", ""},
	{http.MethodPost, "/v1/status_pages", ""},
	{http.MethodPost, "/v1/status_pages/{page}", ""},
	{http.MethodPatch, "/v1/status_pages/{page}", ""},
	{http.MethodPost, "/v1/status_pages/{page}/components", ""},
	{http.MethodPut, "/v1/status_pages/{page}/components/sort-order", ""},
	{http.MethodPatch, "/v1/status_pages/{page}/components/{component}", ""},
	{http.MethodPost, "/v1/status_pages/{page}/groups", ""},
	{http.MethodPut, "/v1/status_pages/{page}/groups/sort-order", ""},
	{http.MethodPatch, "/v1/status_pages/{page}/component_groups/{group}", ""},
	{http.MethodPut, "/v1/status_pages/{page}/groups/{group}/sort-order", ""},
	{http.MethodPost, "/v1/status_pages/{page}/subscribers", ""},
	{http.MethodPost, "/v1/status_pages/{page}/incidents", ""},
	{http.MethodPatch, "/v1/status_pages/{page}/incidents/{incident}", ""},
	{http.MethodPost, "/v1/status_pages/{page}/incidents/{incident}/updates", ""},
	{http.MethodPatch, "/v1/status_pages/{page}/incidents/{incident}/updates/{update}", ""},
	{http.MethodPost, "/v1/status_pages/{page}/scheduled_maintenance", ""},
	{http.MethodPatch, "/v1/status_pages/{page}/scheduled_maintenance/{maintenance}", ""},
	{http.MethodPost, "/v1/invitations", ""},
	{http.MethodPost, "/v1/integrations", ""},
	{http.MethodPatch, "/v1/integrations/{integration}", ""},
}

// fuzzTargetIndex finds a target by method and path pattern, for the seed corpus.
func fuzzTargetIndex(method, path string) uint8 {
	for i, t := range fuzzTargets {
		if t.method == method && t.path == path {
			return uint8(i)
		}
	}
	panic("no fuzz target " + method + " " + path)
}

const fuzzScript = `import { test, expect } from '@playwright/test'
test('home', async ({ page }) => { await page.goto('https://example.com') })`

// fuzzSeeds are valid and broken bodies per target.
var fuzzSeeds = []struct {
	method, path, body string
}{
	{"POST", "/v1/checks", `{"name":"api","url":"https://example.com/health","test_regions":["cloud:eu-west-2"],"assertions":[{"type":"JSON_BODY","property":"$.ok","comparison":"EQUALS","expected":"true"}]}`},
	{"POST", "/v1/checks", `{"name":"browser","type":"BROWSER_CHECK","script":` + jsonString(fuzzScript) + `}`},
	{"POST", "/v1/checks", `{"name":"x","url":"not a url","method":"FETCH","timeout":-1,"headers":{"a":1}}`},
	{"POST", "/v1/checks", `{"name":"x","url":"https://{{HOST}}/","auth_password":"{{PASS}}","project_id":null}`},
	{"POST", "/v1/checks", `{"name":"x","url":"https://example.com","test_interval":1e400}`},
	{"POST", "/v1/checks", `{"name":"x","url":"https://example.com","test_interval":30.5,"paused":true}`},
	{"POST", "/v1/checks", `{"name":"x","url":"https://example.com","assertions":[{}],"test_regions":"cloud:eu-west-2"}`},
	{"POST", "/v1/checks", `{"name":"x"} {"name":"y"}`},
	{"POST", "/v1/checks", `{"name":"\u0000\ud800","url":"https://example.com"}`},
	{"POST", "/v1/checks", `{"name":"x","name":"y","url":"https://example.com"}`},
	{"POST", "/v1/checks", `[{"name":"x"}]`},
	{"POST", "/v1/checks", `{"name":`},
	{"POST", "/v1/checks", ``},
	{"POST", "/v1/checks", `null`},
	{"POST", "/v1/checks/uptime", `{"name":"u","url":"https://example.com","method":"POST","body":"{}","headers":{"Authorization":"Bearer {{TOKEN}}"}}`},
	{"POST", "/v1/checks/uptime", `{"name":"u","type":"BROWSER_CHECK","url":"https://example.com"}`},
	{"POST", "/v1/checks/browser", `{"name":"b","script":` + jsonString(fuzzScript) + `,"version":"NODE24_BROWSER"}`},
	{"POST", "/v1/checks/browser", `{"name":"b","script":"console.log(1)","version":"NODE20_BROWSER"}`},
	{"POST", "/v1/checks/dns", `{"name":"dns","dns_domain":"example.com","dns_record_type":"A","dns_resolver":"[2001:db8::1]:53","assertions":[{"type":"DNS_RESPONSE_CODE","property":"status","comparison":"EQUALS","expected":"NOERROR"}]}`},
	{"POST", "/v1/checks/dns", `{"name":"dns","dns_domain":"","dns_record_type":"PTR","dns_protocol":"QUIC","test_interval":29}`},
	{"POST", "/v1/checks/dns", `{"name":"dns","dns_domain":"example.com","dns_record_type":"A","url":"https://example.com"}`},
	{"POST", "/v1/checks/tcp", `{"name":"tcp","tcp_hostname":"db.example.com","tcp_port":5432,"tcp_data":"PING\r\n","assertions":[{"type":"TCP_RESPONSE_TIME","property":"responseTime","comparison":"LESS_THAN","expected":"500"}]}`},
	{"POST", "/v1/checks/tcp", `{"name":"tcp","tcp_hostname":"h","tcp_port":65536,"tcp_ip_family":"IPv5","reminder_alert_interval_minutes":-2}`},
	{"POST", "/v1/checks/tcp", `{"name":"tcp","tcp_hostname":"h","tcp_port":"80"}`},
	{"POST", "/v1/env", `{"name":"API_TOKEN","type":"secret","value":"s3cr3t"}`},
	{"POST", "/v1/env", `{"name":"lower","type":"plain","value":1}`},
	{"POST", "/v1/env", `{"name":"HOST","type":"config","value":"example.com","project_id":"unassigned"}`},
	{"POST", "/v1/tokens", `{"name":"ci","grants":[{"scope":"UPTIME_CHECKS","permission":"EDIT"}],"expiresAt":null}`},
	{"POST", "/v1/tokens", `{"name":"ci","grants":[{"scope":"UPTIME_CHECKS","permission":"EDIT"}],"expiresAt":"2999-12-31T23:59:59.999Z"}`},
	{"POST", "/v1/tokens", `{"name":"","grants":[],"expiresAt":"2000-01-01T00:00:00Z","extra":true}`},
	{"POST", "/v1/tokens", `{"name":"x","grants":[{"scope":"UPTIME_CHECKS","permission":"EDIT","x":1},"READ",null]}`},
	{"POST", "/v1/tokens", `{"name":"x","grants":[{"scope":"UPTIME_CHECKS","permission":"EDIT"}],"expiresAt":"9999-99-99T99:99:99Z"}`},
	{"POST", "/v1/projects", `{"name":"Payments"}`},
	{"POST", "/v1/projects", `{"name":"","is_default":true}`},
	{"PATCH", "/v1/checks/%s", `{"paused":true,"muted":false,"name":"renamed"}`},
	{"PATCH", "/v1/checks/%s", `{"type":"BROWSER_CHECK","url":null}`},
	{"PATCH", "/v1/checks/%s", `{"project_id":"0192f7c4-8d3e-7a55-9b1e-3f5a2c7d9e01"}`},
	{"PATCH", "/v1/checks/%s", `{}`},
	{"PATCH", "/v1/checks/uptime/%s", `{"url":null,"assertions":null,"headers":null}`},
	{"PATCH", "/v1/checks/uptime/%s", `{"project_id":"x","timeout":999}`},
	{"PATCH", "/v1/checks/browser/%s", `{"script":"test()","version":"EDGE_RUNTIME"}`},
	{"PATCH", "/v1/checks/dns/%s", `{"dns_resolver":null,"dns_record_type":"MX","paused":true}`},
	{"PATCH", "/v1/checks/dns/%s", `{"dns_domain":null}`},
	{"PATCH", "/v1/checks/tcp/%s", `{"tcp_data":null,"tcp_should_fail":true}`},
	{"PATCH", "/v1/checks/tcp/%s", `{"tcp_port":0}`},
	{"PATCH", "/v1/env/%s", `{"name":"RENAMED","value":"v2"}`},
	{"PATCH", "/v1/env/%s", `{"type":"config","project_id":null}`},
	{"PATCH", "/v1/projects/%s", `{"name":"Renamed"}`},
	{"PATCH", "/v1/projects/%s", `{"name":null}`},
	{"POST", "/v1/checks/%s/move", `{"project_id":null}`},
	{"POST", "/v1/checks/%s/move", `{"project_id":"short"}`},
	{"POST", "/v1/checks/%s/move", `{}`},
	{"POST", "/v1/heartbeats", `{"name":"h","report_period":60,"grace_period":60,"reminder_alert_interval_minutes":99999999999999999999999}`},
	{"POST", "/v1/heartbeats", `{"name":"h","report_period_cron":"*/5 * * * *","timezone":"Europe/Berlin","grace_period":60}`},
	{"PATCH", "/v1/heartbeats/{heartbeat}", `{"report_period":null,"report_period_cron":"@daily","paused":true}`},
	{"POST", "/v1/heartbeats/{heartbeat}/move", `{"project_id":null}`},
	{"POST", "/v1/maintenance-windows", `{"name":"w","start_date":"22:30","duration_minutes":90,"timezone":"Europe/Berlin","days_of_week":["MONDAY"]}`},
	{"PATCH", "/v1/maintenance-windows/{window}", `{"start_date":"2026-01-05T22:30:00","timezone":"Asia/Tokyo","status":"DISABLED"}`},
	{"POST", "/v1/webhooks", `{"url":"https://hooks.example.com/in","events":["uptime.down"],"check_ids":[]}`},
	{"PATCH", "/v1/webhooks/{webhook}", `{"url":"http://[64:ff9b::7f00:1]/","events":[]}`},
	{"POST", "/v1/status_pages", `{"name":"P","subdomain":"fuzz-p","custom_domain":"https://status.fuzz.test","password":"x","allowed_ips":["10.0.0.0/8"]}`},
	{"POST", "/v1/status_pages/{page}", `{"name":"P","subdomain":"fuzz-page","description":"d","hide_from_search_engines":true}`},
	{"PATCH", "/v1/status_pages/{page}", `{"name":"P","subdomain":"-bad-","custom_domain":"not a uri"}`},
	{"POST", "/v1/status_pages/{page}/components", `{"name":"API","status":"OPERATIONAL","group_id":null,"check_ids":[]}`},
	{"PUT", "/v1/status_pages/{page}/components/sort-order", `{"component_ids":["{component}"]}`},
	{"PATCH", "/v1/status_pages/{page}/components/{component}", `{"status":"MAJOR_OUTAGE","override_status":true}`},
	{"POST", "/v1/status_pages/{page}/groups", `{"name":"G","description":null}`},
	{"PUT", "/v1/status_pages/{page}/groups/sort-order", `{"group_ids":[]}`},
	{"PATCH", "/v1/status_pages/{page}/component_groups/{group}", `{"name":"Renamed"}`},
	{"PUT", "/v1/status_pages/{page}/groups/{group}/sort-order", `{"component_ids":[]}`},
	{"POST", "/v1/status_pages/{page}/subscribers", `{"email_address":"a@example.com","component_subscription_mode":"ALL_COMPONENTS"}`},
	{"POST", "/v1/status_pages/{page}/incidents", `{"title":"Down","description":"d","status":"INVESTIGATING","components":[{"id":"x","status":"MAJOR_OUTAGE"}]}`},
	{"PATCH", "/v1/status_pages/{page}/incidents/{incident}", `{"title":"x"}`},
	{"POST", "/v1/status_pages/{page}/incidents/{incident}/updates", `{"status":"RESOLVED","description":"fixed","notify_subscribers":false}`},
	{"PATCH", "/v1/status_pages/{page}/incidents/{incident}/updates/{update}", `{"description":"edited","date_happened":"2026-01-01T00:00:00Z"}`},
	{"POST", "/v1/status_pages/{page}/scheduled_maintenance", `{"title":"m","description":"d","start_date":"2030-01-01T00:00:00.000Z","duration_minutes":60}`},
	{"PATCH", "/v1/status_pages/{page}/scheduled_maintenance/{maintenance}", `{"description":"new","components_affected":[],"notifications":{"at_end":false}}`},
	{"POST", "/v1/invitations", `{"email":"new@example.com","role":"ADMIN"}`},
	{"POST", "/v1/integrations", `{"name":"chat","type":"TELEGRAM","settings":{"bot_token":"123456:ABC-DEF","chat_id":"-1001234567890"}}`},
	{"POST", "/v1/integrations", `{"name":"s","type":"SLACK","settings":{"webhook_url":"http://[::ffff:127.0.0.1]/"},"status_page_ids":["{page}"]}`},
	{"PATCH", "/v1/integrations/{integration}", `{"settings":{"webhook_url":null},"type":"SLACK"}`},
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzDecode sends fuzzed bodies through the real router and a real database: whatever the body,
// the API must answer with a well-formed envelope and never with a server error (503, storage
// unavailable, excepted). One harness serves the whole run.
func FuzzDecode(f *testing.F) {
	h := newHarness(f)
	ids := map[string]string{}
	create := func(key, path, body string) {
		r := h.do(http.MethodPost, path, h.tokenA, body)
		if r.Status != http.StatusCreated {
			f.Fatalf("fuzz setup: POST %s: %d %s", path, r.Status, r.Raw)
		}
		ids[key] = r.Result()["id"].(string)
	}
	create("uptime", "/v1/checks/uptime", `{"name":"fuzz uptime","url":"https://example.com"}`)
	create("browser", "/v1/checks/browser", `{"name":"fuzz browser","script":`+jsonString(fuzzScript)+`}`)
	create("dns", "/v1/checks/dns", `{"name":"fuzz dns","dns_domain":"example.com","dns_record_type":"A"}`)
	create("tcp", "/v1/checks/tcp", `{"name":"fuzz tcp","tcp_hostname":"example.com","tcp_port":443}`)
	create("env", "/v1/env", `{"name":"FUZZ","type":"config","value":"v"}`)
	create("project", "/v1/projects", `{"name":"fuzz"}`)
	create("heartbeat", "/v1/heartbeats", `{"name":"fuzz","report_period":60,"grace_period":60}`)
	create("window", "/v1/maintenance-windows", `{"name":"fuzz","start_date":"2026-01-05T22:30:00.000Z","duration_minutes":30,"timezone":"UTC","days_of_week":["MONDAY"]}`)
	create("webhook", "/v1/webhooks", `{"url":"https://hooks.example.com/in","events":["uptime.down"],"check_ids":["`+ids["uptime"]+`"]}`)
	create("page", "/v1/status_pages", `{"name":"fuzz","subdomain":"fuzz-page"}`)
	create("component", "/v1/status_pages/"+ids["page"]+"/components", `{"name":"fuzz"}`)
	create("group", "/v1/status_pages/"+ids["page"]+"/groups", `{"name":"fuzz"}`)
	create("incident", "/v1/status_pages/"+ids["page"]+"/incidents", `{"title":"fuzz","description":"d","status":"INVESTIGATING"}`)
	create("update", "/v1/status_pages/"+ids["page"]+"/incidents/"+ids["incident"]+"/updates", `{"status":"UPDATE","description":"d"}`)
	create("integration", "/v1/integrations", `{"name":"fuzz","type":"SLACK","settings":{"webhook_url":"https://hooks.slack.com/services/T0/B0/x"}}`)
	create("maintenance", "/v1/status_pages/"+ids["page"]+"/scheduled_maintenance", `{"title":"fuzz","description":"d","start_date":"2030-01-01T00:00:00.000Z","duration_minutes":60}`)

	for _, s := range fuzzSeeds {
		f.Add(fuzzTargetIndex(s.method, s.path), []byte(s.body))
	}

	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		tg := fuzzTargets[int(target)%len(fuzzTargets)]
		path := tg.path
		if tg.resource != "" {
			path = strings.Replace(path, "%s", ids[tg.resource], 1)
		}
		for name, id := range ids {
			path = strings.ReplaceAll(path, "{"+name+"}", id)
			body = bytes.ReplaceAll(body, []byte("{"+name+"}"), []byte(id))
		}
		req := httptest.NewRequest(tg.method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.tokenA)
		rec := httptest.NewRecorder()
		// A panic fails the fuzz run (recovery would turn it into a 500); the exchange is
		// validated against the OpenAPI document, reporting to this input's t.
		validated(t, h.api).ServeHTTP(rec, req)
		r := response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
		if err := json.Unmarshal(r.Raw, &r.Body); err != nil {
			t.Fatalf("%s %s: response is not a JSON object (%d): %s", tg.method, path, rec.Code, r.Raw)
		}
		checkEnvelope(t, tg.method+" "+path, r) // also fails on any status >= 500 except 503
	})
}
