package console_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
)

// everyEdit is every permission an organization can hold, at EDIT.
func everyEdit() []string { return auth.AllGrants() }

// TestViewsIncidentsOpenFirst: a DOWN check's open incident and a DOWN heartbeat are listed under
// Open, newest first, before the resolved incident of another check, which is listed under Recent
// — and not the other way round; the page costs one API call (GET /v1/incidents), not one per
// check.
func TestViewsIncidentsOpenFirst(t *testing.T) {
	e := newSite(t, siteOptions{})
	tok, _ := e.token(e.orgA, everyEdit()...)
	down := e.call("POST", "/v1/checks/uptime", tok, map[string]any{"name": "Checkout API", "url": "https://checkout.example.com/health"})["id"]
	up := e.call("POST", "/v1/checks/uptime", tok, map[string]any{"name": "Marketing site", "url": "https://www.example.com/"})["id"]
	hb := e.call("POST", "/v1/heartbeats", tok, map[string]any{"name": "Nightly backup", "report_period": 86400, "grace_period": 600})["id"]
	now := time.Now().UTC()
	e.exec(`UPDATE checks SET state = 'DOWN' WHERE id = $1`, down)
	e.exec(`UPDATE heartbeats SET state = 'DOWN', state_changed_at = $2 WHERE id = $1`, hb, now.Add(-time.Hour))
	e.exec(`INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES (gen_random_uuid(), $1, $2, $3, NULL)`,
		e.orgA, down, now.Add(-2*time.Hour))
	e.exec(`INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES (gen_random_uuid(), $1, $2, $3, $4)`,
		e.orgA, up, now.Add(-26*time.Hour), now.Add(-25*time.Hour))

	b := e.tab(t, 1280, 900)
	b.signIn(tok, "/console/login")
	b.open("/console/incidents")
	open := b.text("#open-incidents")
	recent := b.text("#recent-incidents")
	contains(t, "open incidents", open, "Checkout API", "Nightly backup", "Heartbeat")
	contains(t, "recent incidents", recent, "Marketing site")
	if strings.Contains(open, "Marketing site") || strings.Contains(recent, "Checkout API") || strings.Contains(recent, "Nightly backup") {
		t.Errorf("open %q / recent %q mix the incidents up", open, recent)
	}
	if strings.Index(open, "Nightly backup") > strings.Index(open, "Checkout API") {
		t.Errorf("open incidents are not newest first: %q", open)
	}
	order := do(b, chromedp.Evaluate[bool](`(() => {
		const s = [...document.querySelectorAll('main section.panel')].map((x) => x.id);
		return s.indexOf('open-incidents') === 0 && s.indexOf('recent-incidents') > 0; })()`))
	if !order {
		t.Error("the open incidents are not the first section of the view")
	}
	links := do(b, chromedp.Evaluate[string](`[...document.querySelectorAll('#open-incidents a')].map((a) => a.getAttribute('href')).join(' ')`))
	if want := fmt.Sprintf("/console/heartbeats/%s /console/checks/%s", hb, down); links != want {
		t.Errorf("open incidents link to %q, want %q", links, want)
	}
	calls := do(b, chromedp.Evaluate[string](`performance.getEntriesByType('resource')
		.map((r) => new URL(r.name).pathname).filter((p) => p.startsWith('/v1/')).join(' ')`))
	if calls != "/v1/incidents" {
		t.Errorf("the view made the API calls %q, want one GET /v1/incidents", calls)
	}
	b.screenshot("views-incidents.png")
}

// TestViewsStatusPageIncidentReachesPublicPage publishes an incident and posts an update through
// the console's forms, changing a component's status each time, and reads both on the public page.
func TestViewsStatusPageIncidentReachesPublicPage(t *testing.T) {
	e := newSite(t, siteOptions{})
	tok, _ := e.token(e.orgA, everyEdit()...)
	page := e.call("POST", "/v1/status_pages", tok, map[string]any{"name": "Acme Status", "subdomain": "acme-views"})["id"].(string)
	comp := e.call("POST", "/v1/status_pages/"+page+"/components", tok, map[string]any{"name": "Public API"})["id"].(string)

	b := e.tab(t, 1280, 900)
	b.signIn(tok, "/console/login")
	b.open("/console/status-pages/" + page)
	if got := do(b, chromedp.Evaluate[string](`document.getElementById('public-page-link').getAttribute('href')`)); got != "/status/acme-views" {
		t.Errorf("public page link %q", got)
	}
	b.run(
		chromedp.Click(chromedp.CSS(`#sp-incidents details > summary`)),
		chromedp.SendKeys(chromedp.ID("incident-create-title"), "Elevated API errors"),
		chromedp.SendKeys(chromedp.ID("incident-create-description"), "We are looking into failing requests."),
		chromedp.SetValue(chromedp.ID("incident-create-component-"+comp), "MAJOR_OUTAGE"),
		chromedp.Click(chromedp.CSS(`#incident-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("incident-update-create")),
	)
	b.settle()
	if loc := do(b, chromedp.Location()); !strings.Contains(loc, "/console/status-pages/"+page+"/incidents/") {
		t.Fatalf("after publishing, the console is at %s", loc)
	}
	b.run(
		chromedp.SetValue(chromedp.ID("incident-update-create-status"), "IDENTIFIED"),
		chromedp.SendKeys(chromedp.ID("incident-update-create-description"), "A faulty node was removed; errors are falling."),
		chromedp.SetValue(chromedp.ID("incident-update-create-component-"+comp), "PARTIAL_OUTAGE"),
		chromedp.Click(chromedp.CSS(`#incident-update-create button[type=submit]`)),
	)
	b.waitFor(`(document.querySelector('#incident-timeline') || {}).textContent?.includes('A faulty node was removed')`)
	b.settle()
	timeline := b.text("#incident-timeline")
	contains(t, "timeline", timeline, "Identified", "Investigating", "Public API: major outage → partial outage")
	b.screenshot("views-status-page-incident.png")

	// A validation error from the API lands next to its field: an empty update is refused.
	b.run(chromedp.Click(chromedp.CSS(`#incident-update-create button[type=submit]`)))
	b.waitFor(`[...document.querySelectorAll('#incident-update-create [data-field="description"] .field-error')].some((x) => !x.hidden && x.textContent)`)

	b.run(chromedp.Navigate(b.base+"/status/acme-views"), chromedp.WaitVisible(chromedp.ID("overall")))
	public := b.text("body")
	contains(t, "public page", public, "Elevated API errors", "A faulty node was removed; errors are falling.", "Partial outage")
}

// TestViewsTokenShownOnceAndRevoked creates a token in Settings: its secret is shown once and
// works; after a reload it is gone from the page; revoking it in the list makes the API refuse it.
func TestViewsTokenShownOnceAndRevoked(t *testing.T) {
	e := newSite(t, siteOptions{})
	tok, _ := e.token(e.orgA, everyEdit()...)
	b := e.tab(t, 1280, 900)
	b.signIn(tok, "/console/login")
	b.open("/console/settings")
	b.run(
		chromedp.Click(chromedp.CSS(`#tokens details > summary`)),
		chromedp.SendKeys(chromedp.ID("token-create-name"), "ci-deploy"),
		chromedp.SetValue(chromedp.ID("token-create-grant-UPTIME_CHECKS"), "READ"),
		chromedp.Click(chromedp.CSS(`#token-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#token-created input`)),
	)
	secret := do(b, chromedp.Value(chromedp.CSS(`#token-created input`)))
	if len(secret) < 20 {
		t.Fatalf("shown token %q", secret)
	}
	if status, _ := e.request("GET", "/v1/checks", secret, nil); status != 200 {
		t.Fatalf("the new token reads checks: %d", status)
	}
	if status, _ := e.request("GET", "/v1/heartbeats", secret, nil); status != 403 {
		t.Errorf("the new token (UPTIME_CHECKS:READ only) reads heartbeats: %d", status)
	}
	b.settle()
	contains(t, "token list", b.text("#tokens table"), "ci-deploy", "UPTIME_CHECKS:READ")
	b.screenshot("views-settings-token-created.png")

	b.open("/console/settings")
	html := do(b, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if strings.Contains(html, secret) {
		t.Error("the token's secret is still on the page after a reload")
	}
	b.run(
		chromedp.Click(chromedp.CSS(`button[aria-label="Revoke token ci-deploy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog button[value=ok]`)),
		chromedp.Click(chromedp.CSS(`dialog button[value=ok]`)),
	)
	b.waitFor(`!document.querySelector('button[aria-label="Revoke token ci-deploy"]') && !document.querySelector('main .loading')`)
	if status, _ := e.request("GET", "/v1/checks", secret, nil); status != 401 {
		t.Errorf("the revoked token reads checks: %d", status)
	}
}

// TestViewsReadOnlySeesNoEditControls opens every view of this part with a token holding every
// area at READ, then at EDIT: the first sees no form, action button or status select, the
// second sees them (so the check can fail).
func TestViewsReadOnlySeesNoEditControls(t *testing.T) {
	e := newSite(t, siteOptions{})
	edit, _ := e.token(e.orgA, everyEdit()...)
	var read []string
	for _, g := range everyEdit() {
		read = append(read, strings.TrimSuffix(g, ":EDIT")+":READ")
	}
	readTok, _ := e.token(e.orgA, read...)
	page := e.call("POST", "/v1/status_pages", edit, map[string]any{"name": "Acme Status", "subdomain": "acme-ro"})["id"].(string)
	comp := e.call("POST", "/v1/status_pages/"+page+"/components", edit, map[string]any{"name": "Public API"})["id"].(string)
	inc := e.call("POST", "/v1/status_pages/"+page+"/incidents", edit, map[string]any{"title": "Slow API", "description": "Looking.",
		"status": "INVESTIGATING", "components": []map[string]any{{"id": comp, "status": "DEGRADED_PERFORMANCE"}}})["id"].(string)
	hb := e.call("POST", "/v1/heartbeats", edit, map[string]any{"name": "Nightly backup", "grace_period": 300, "report_period": 86400})["id"].(string)
	e.call("POST", "/v1/env", edit, map[string]any{"name": "API_KEY", "type": "secret", "value": "s3cr3t-value-123"})
	e.call("POST", "/v1/maintenance-windows", edit, map[string]any{"name": "Sunday patching", "start_date": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
		"duration_minutes": 60, "timezone": "UTC", "days_of_week": []string{"SUNDAY"}})

	views := []string{"/console/heartbeats", "/console/heartbeats/" + hb, "/console/status-pages", "/console/status-pages/" + page,
		"/console/status-pages/" + page + "/incidents/" + inc, "/console/alerting", "/console/settings", "/console/incidents"}
	const controls = `document.querySelectorAll('main form:not([role=search]), main .vc-action button, main details.vc-disclosure, main select[aria-label^="Status of"]').length`
	for _, tc := range []struct {
		name  string
		token string
		edit  bool
	}{{"read", readTok, false}, {"edit", edit, true}} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.tab(t, 1280, 900)
			b.signIn(tc.token, "/console/login")
			for _, v := range views {
				b.open(v)
				n := do(b, chromedp.Evaluate[int](controls))
				if errs := b.text("main"); strings.Contains(errs, "permission") {
					t.Errorf("%s refused: %q", v, errs)
				}
				switch {
				case !tc.edit && n != 0:
					t.Errorf("%s shows %d edit controls to a READ-only token", v, n)
				case tc.edit && n == 0 && v != "/console/incidents":
					t.Errorf("%s shows no edit control to an EDIT token", v)
				}
				if tc.name == "read" && v == "/console/status-pages/"+page {
					b.screenshot("views-status-page-read-only.png")
				}
			}
			// What the view does not offer, the API refuses: the same session forcing a change
			// (with its CSRF token) is answered 403, and nothing is created.
			status := do(b, chromedp.Evaluate[int](`fetch('/v1/heartbeats', {method: 'POST', credentials: 'include',
				headers: {'Content-Type': 'application/json', 'X-CSRF-Token': decodeURIComponent((document.cookie.match(/vantage_csrf=([^;]+)/) || [])[1] || '')},
				body: JSON.stringify({name: 'Forced ' + Date.now(), grace_period: 60, report_period: 3600})}).then((r) => r.status)`, chromedp.EvalAwaitPromise))
			if want := map[bool]int{false: 403, true: 201}[tc.edit]; status != want {
				t.Errorf("a forced heartbeat create answered %d, want %d", status, want)
			}
		})
	}
}

// TestViewsTour opens the heartbeat, alerting, webhook, integration and operators views on real
// data, checks what each must show, and keeps a screenshot of each (light, then dark).
func TestViewsTour(t *testing.T) {
	e := newSite(t, siteOptions{})
	tok, _ := e.token(e.orgA, append(everyEdit(), "AGENTS:READ")...)
	hb := e.call("POST", "/v1/heartbeats", tok, map[string]any{"name": "Nightly backup", "grace_period": 300, "report_period": 86400})["id"].(string)
	check := e.call("POST", "/v1/checks/uptime", tok, map[string]any{"name": "Checkout API", "url": "https://checkout.example.com/health",
		"test_regions": []string{"cloud:eu-central-1", "cloud:us-east-1"}})["id"].(string)
	hook := e.call("POST", "/v1/webhooks", tok, map[string]any{"url": "https://hooks.example.com/vantage", "events": []string{"uptime.down", "uptime.up"},
		"check_ids": []string{check}, "description": "On-call relay"})["id"].(string)
	integ := e.call("POST", "/v1/integrations", tok, map[string]any{"name": "Ops channel", "type": "SLACK",
		"settings": map[string]any{"webhook_url": "https://hooks.slack.com/services/T000/B000/XXXXXXXX"}})["id"].(string)
	e.call("POST", "/v1/maintenance-windows", tok, map[string]any{"name": "Sunday patching", "start_date": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
		"duration_minutes": 60, "timezone": "UTC", "days_of_week": []string{"SUNDAY"}, "checks": []string{check}})
	e.exec(`UPDATE checks SET state = 'UP' WHERE id = $1`, check)

	b := e.tab(t, 1280, 900)
	b.signIn(tok, "/console/login")

	b.open("/console/heartbeats/" + hb)
	ping := do(b, chromedp.Value(chromedp.CSS(`#heartbeat-ping input`)))
	if !strings.HasSuffix(ping, "/"+hb) {
		t.Errorf("ping URL %q does not end with the heartbeat id", ping)
	}
	contains(t, "heartbeat", b.text("main"), "Nightly backup", "Pending", "every 24 h 0 min", "300 s")
	b.screenshot("views-heartbeat.png")

	b.open("/console/heartbeats")
	contains(t, "heartbeat list", b.text("#heartbeat-list"), "Nightly backup")

	b.open("/console/alerting")
	contains(t, "integrations", b.text("#integrations"), "Ops channel", "SLACK")
	contains(t, "webhooks", b.text("#webhooks"), "https://hooks.example.com/vantage", "1 checks")
	contains(t, "maintenance windows", b.text("#maintenance-windows"), "Sunday patching", "Enabled", "sun")
	b.screenshot("views-alerting.png")

	b.open("/console/alerting/webhooks/" + hook)
	contains(t, "webhook", b.text("main"), "On-call relay", "Checkout API", "No deliveries yet.")

	// A delivery given up after two HTTP 500s, as the notifier writes it: the view lists both
	// attempts, and Resend makes it due again.
	delivery := uuid.New()
	now := time.Now()
	e.exec(`INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, webhook_id, status, attempts, tries,
		next_attempt_at, last_status_code, last_error, created_at)
		VALUES ($1, $2, $3, 'uptime.down', 'webhook', $4, $4, 'FAILED', 2, 2, $5, 500, 'hooks.example.com: the receiver answered HTTP 500', $5)`,
		delivery, e.orgA, uuid.New(), hook, now)
	for i := 1; i <= 2; i++ {
		e.exec(`INSERT INTO delivery_attempts (delivery_id, number, attempted_at, latency_ms, status_code, error)
			VALUES ($1, $2, $3, 41, 500, 'hooks.example.com: the receiver answered HTTP 500')`, delivery, i, now.Add(time.Duration(i)*time.Second))
	}
	b.open("/console/alerting/webhooks/" + hook)
	b.run(chromedp.Click(chromedp.CSS(`#webhook-deliveries details > summary`)))
	contains(t, "deliveries", b.text("#webhook-deliveries"), "uptime.down", "Failed", "2 attempts, last HTTP 500",
		"HTTP 500, 41 ms", "hooks.example.com: the receiver answered HTTP 500")
	b.screenshot("views-webhook.png")
	b.run(chromedp.Click(chromedp.CSS(`button[aria-label="Resend uptime.down delivery"]`)))
	b.waitFor(`document.querySelector('#webhook-deliveries')?.textContent.includes('Pending') && !document.querySelector('main .loading')`)

	b.open("/console/alerting/integrations/" + integ)
	settings := b.text("main dl")
	contains(t, "integration", settings, "webhook_url", "[redacted]")
	if strings.Contains(settings, "XXXXXXXX") {
		t.Errorf("the integration's secret URL is on the page: %q", settings)
	}

	b.open("/console/operators")
	contains(t, "operators", b.text("main"), "cloud:eu-central-1", "cloud:us-east-1", "No agent is connected.")
	b.screenshot("views-operators.png")

	// Dark mode, through the header's theme toggle (system → light → dark).
	do(b, chromedp.Evaluate[bool](`localStorage.setItem('vantage.theme', 'dark') === undefined`))
	b.open("/console/alerting")
	if bg := do(b, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('.panel')).backgroundColor`)); bg != "rgb(22, 26, 33)" {
		t.Errorf("dark panel background %q", bg)
	}
	b.screenshot("views-alerting-dark.png")
}

// TestViewsFormsCreate creates through the console's forms what the other tests create through
// the API — a heartbeat, scheduled maintenance, a subscriber, an integration — and sends the
// integration's test message to a local receiver.
func TestViewsFormsCreate(t *testing.T) {
	e := newSite(t, siteOptions{})
	tok, _ := e.token(e.orgA, everyEdit()...)
	page := e.call("POST", "/v1/status_pages", tok, map[string]any{"name": "Acme Status", "subdomain": "acme-forms"})["id"].(string)
	comp := e.call("POST", "/v1/status_pages/"+page+"/components", tok, map[string]any{"name": "Dashboard"})["id"].(string)
	got := make(chan string, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		_, _ = w.Write([]byte("ok"))
	}))
	defer receiver.Close()

	b := e.tab(t, 1280, 900)
	b.signIn(tok, "/console/login")

	b.open("/console/heartbeats")
	b.run(
		chromedp.Click(chromedp.CSS(`main details > summary`)),
		chromedp.SendKeys(chromedp.ID("heartbeat-create-name"), "Invoice run"),
		chromedp.SetValue(chromedp.ID("heartbeat-create-report_period"), "900"),
		chromedp.Click(chromedp.CSS(`#heartbeat-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("heartbeat-ping")),
	)
	b.settle()
	contains(t, "new heartbeat", b.text("main"), "Invoice run", "every 15 min")

	b.open("/console/status-pages/" + page)
	// A component's status changes in place, from the keyboard.
	b.run(chromedp.Focus(chromedp.ID("component-status-"+comp)), chromedp.KeyEvent(kb.ArrowDown))
	b.waitFor(`document.getElementById('toasts').textContent.includes('Dashboard is now degraded performance')`)
	if got := e.call("GET", "/v1/status_pages/"+page+"/components/"+comp, tok, nil)["status"]; got != "DEGRADED_PERFORMANCE" {
		t.Errorf("component status %v after the change", got)
	}
	start := time.Now().Add(48 * time.Hour).Local().Format("2006-01-02T15:04")
	b.run(
		chromedp.Click(chromedp.CSS(`#sp-incidents details:nth-of-type(2) > summary`)),
		chromedp.SendKeys(chromedp.ID("maintenance-create-title"), "Database upgrade"),
		chromedp.SendKeys(chromedp.ID("maintenance-create-description"), "The dashboard is read-only for an hour."),
		chromedp.SetValue(chromedp.ID("maintenance-create-start_date"), start),
		chromedp.Click(chromedp.CSS(`#maintenance-create-components_affected input[value="`+comp+`"]`)),
		chromedp.Click(chromedp.CSS(`#maintenance-create button[type=submit]`)),
	)
	b.waitFor(`(document.querySelector('#sp-incidents') || {}).textContent?.includes('Database upgrade') && !document.querySelector('main .loading')`)
	b.settle()
	contains(t, "maintenance", b.text("#sp-incidents"), "Database upgrade", "60 min", "Scheduled")

	b.run(
		chromedp.Click(chromedp.CSS(`#sp-subscribers details > summary`)),
		chromedp.SendKeys(chromedp.ID("subscriber-create-email_address"), "ops@example.com"),
		chromedp.Click(chromedp.CSS(`#subscriber-create button[type=submit]`)),
	)
	b.waitFor(`(document.querySelector('#sp-subscribers table') || {}).textContent?.includes('ops@example.com')`)
	contains(t, "subscribers", b.text("#sp-subscribers table"), "ops@example.com", "not yet")
	b.screenshot("views-status-page.png")

	b.open("/console/alerting")
	b.run(
		chromedp.Click(chromedp.CSS(`#integrations details > summary`)),
		chromedp.SendKeys(chromedp.ID("integration-create-name"), "Ops channel"),
		chromedp.SendKeys(chromedp.ID("integration-create-settings-webhook_url"), receiver.URL+"/services/T000/B000/XXXXXXXX"),
		chromedp.Click(chromedp.CSS(`#integration-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("integration-deliveries")),
	)
	b.settle()
	b.run(chromedp.Click(chromedp.CSS(`main .actions button`)))
	b.waitFor(`(document.getElementById('integration-test-result') || {}).textContent?.includes('Delivered')`)
	select {
	case body := <-got:
		contains(t, "test message", body, "[TEST]")
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver got no test message")
	}
	contains(t, "test result", b.text("#integration-test-result"), "Delivered (HTTP 200")
	b.screenshot("views-integration.png")

	b.open("/console/alerting")
	b.run(
		chromedp.Click(chromedp.CSS(`#maintenance-windows details > summary`)),
		chromedp.WaitVisible(chromedp.ID("maintenance-window-create-name")),
		chromedp.SendKeys(chromedp.ID("maintenance-window-create-name"), "Quarterly failover"),
		chromedp.SetValue(chromedp.ID("maintenance-window-create-start_date"), start),
		chromedp.SetValue(chromedp.ID("maintenance-window-create-timezone"), "UTC"),
		chromedp.Click(chromedp.CSS(`#maintenance-window-create button[type=submit]`)),
	)
	// The API's refusal lands beside the field it names; choosing a day fixes it.
	b.waitFor(`document.querySelector('#maintenance-window-create [data-field="days_of_week"] .field-error')?.textContent.includes('at least one day')`)
	b.run(
		chromedp.Click(chromedp.CSS(`#maintenance-window-create-days_of_week input[value=SATURDAY]`)),
		chromedp.Click(chromedp.CSS(`#maintenance-window-create button[type=submit]`)),
	)
	b.waitFor(`document.querySelector('#maintenance-windows table')?.textContent.includes('Quarterly failover')`)
	contains(t, "maintenance windows", b.text("#maintenance-windows table"), "Quarterly failover", "sat", "UTC")

	// A secret variable is written once and never shown again.
	const value = "sk_live_do_not_show_42"
	b.open("/console/settings")
	b.run(
		chromedp.Click(chromedp.CSS(`#environment > .panel-body > details > summary`)),
		chromedp.SendKeys(chromedp.ID("env-create-name"), "PAYMENTS_KEY"),
		chromedp.SetValue(chromedp.ID("env-create-type"), "secret"),
		chromedp.SendKeys(chromedp.ID("env-create-value"), value),
		chromedp.Click(chromedp.CSS(`#env-create button[type=submit]`)),
	)
	b.waitFor(`document.querySelector('#environment table')?.textContent.includes('PAYMENTS_KEY')`)
	contains(t, "variables", b.text("#environment table"), "PAYMENTS_KEY", "secret", "hidden (write-only)")
	b.open("/console/settings")
	if html := do(b, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, value) {
		t.Error("the secret variable's value is on the page")
	}
}
