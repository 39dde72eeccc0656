package console_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleNavigation signs in with a token and walks the overview and a check's page by
// links, back, forward and a deep link; a check created meanwhile appears without a reload. The
// shell carries its CSP, and no page logs an error under it.
func TestConsoleNavigation(t *testing.T) {
	s := newSite(t, siteOptions{})
	api := s.createUptime(s.tokenA, "Public API", "https://api.example.com/health")
	s.createUptime(s.tokenA, "Marketing site", "https://www.example.com/")

	res, err := http.Get(s.srv.URL + "/console/checks/" + api)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("deep link: %d, CSP %q", res.StatusCode, csp)
	}
	res, err = http.Get(s.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/console/login" && res.Request.URL.Path != "/console/" {
		t.Fatalf("/ led to %s, not the console", res.Request.URL)
	}

	b := s.tab(t, 1280, 800)
	b.signIn(s.tokenA, "/console/checks/"+api) // a deep link survives sign-in
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Public API'`)
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Checks"][not(@class="nav-link")]`)))
	b.waitFor(`location.pathname === '/console/checks' && document.querySelectorAll('.view[data-ready] tbody tr').length === 2`)
	b.run(chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))

	b.run(chromedp.Click(chromedp.Search(`//a[text()="Marketing site"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Marketing site'`)
	b.run(chromedp.NavigateBack())
	b.waitFor(`location.pathname === '/console/checks' && document.querySelector('.view[data-ready] tbody tr')`)
	b.run(chromedp.NavigateForward())
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Marketing site'`)
	b.run(chromedp.NavigateBack())
	b.waitFor(`location.pathname === '/console/checks' && document.querySelector('.view[data-ready] tbody tr')`)
	if !eval[bool](b, `window.sameDocument === true`) {
		t.Fatal("the links reloaded the page instead of routing in it")
	}

	s.createUptime(s.tokenA, "Billing", "https://billing.example.com/")
	b.waitWithin(15*time.Second, `[...document.querySelectorAll('tbody a.check-name')].some(a => a.textContent === 'Billing')`)
	if !eval[bool](b, `window.sameDocument === true`) {
		t.Fatal("the overview reloaded to show the new check")
	}
	b.noErrors()
}

// TestConsoleCheckForm creates checks through the form: the API's error about a bad URL shows
// next to the URL field, a browser script's syntax error marks its line, and fixed values
// create the checks.
func TestConsoleCheckForm(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.tab(t, 1280, 900)
	b.signIn(s.tokenA, "/console/checks")
	b.run(chromedp.Click(chromedp.Search(`//a[text()="New check"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), "Checkout"),
		chromedp.SendKeys(chromedp.Search(`//label[text()="URL"]/following-sibling::input`), "not a url"),
		chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`!document.querySelector('[data-field="url"] .field-error').hidden`)
	if msg := b.text(`[data-field="url"] .field-error`); !strings.Contains(msg, "URL") {
		t.Fatalf("error next to the URL field: %q", msg)
	}
	if !eval[bool](b, `document.activeElement.name === 'url' && document.activeElement.getAttribute('aria-invalid') === 'true'`) {
		t.Error("the invalid field is neither focused nor marked aria-invalid")
	}
	b.run(chromedp.SetValue(chromedp.Search(`//label[text()="URL"]/following-sibling::input`), "https://shop.example.com/checkout"),
		chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`/^\/console\/checks\/[0-9a-f-]{36}$/.test(location.pathname) && document.querySelector('.view[data-ready] h1')?.textContent === 'Checkout'`)

	b.run(chromedp.Navigate(b.base + "/console/checks/new?kind=BROWSER"))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), "Sign-up journey"),
		chromedp.Click(chromedp.Search(`//label[contains(., "Run a script")]`)))
	setScript := func(src string) {
		b.run(chromedp.SetValue(chromedp.CSS(`textarea.script`), src),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('textarea.script').dispatchEvent(new Event('input'))`))
	}
	broken := "import { test } from '@playwright/test'\n\ntest('sign up', async ({ page }) => {\n  await page.goto('https://example.com'\n})\n"
	setScript(broken)
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('.gutter .err')`)
	if line := b.text(`.gutter .err`); line != "5" {
		t.Fatalf("marked line %q, want 5", line)
	}
	if msg := b.text(`[data-field="script"] .field-error`); !strings.Contains(msg, "line 5, column 1") {
		t.Fatalf("script error %q", msg)
	}
	setScript(strings.Replace(broken, "example.com'\n", "example.com')\n", 1))
	if eval[bool](b, `!!document.querySelector('.gutter .err')`) {
		t.Error("the mark stayed after the script changed")
	}
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Sign-up journey'`)

	// A multistep check: a script of HTTP calls, shown as its kind.
	b.run(chromedp.Navigate(b.base + "/console/checks/new?kind=MULTISTEP"))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form .editor')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), "Login API"))
	setScript("import { test } from '@playwright/test'\n\ntest('t', async ({ page }) => {})\n")
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('[data-field="script"] .field-error:not([hidden])')`)
	if msg := b.text(`[data-field="script"] .field-error`); !strings.Contains(msg, "line 3: uses the page fixture") {
		t.Fatalf("multistep script error %q", msg)
	}
	setScript("import { test, expect } from '@playwright/test'\n\ntest('t', async ({ request }) => {\n  await expect(await request.get('https://example.com')).toBeOK()\n})\n")
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Login API'`)
	if eval[string](b, `document.querySelector('.view').textContent`) == "" || !strings.Contains(eval[string](b, `document.querySelector('.view').textContent`), "Multistep") {
		t.Error("the multistep check's page does not name its kind")
	}

	// DNS, ping, gRPC, WebSocket and TCP, by their own fields.
	for _, tc := range []struct{ kind, name, field, value, field2, value2 string }{
		{"DNS", "DNS apex", "Domain", "example.com", "Resolver", "1.1.1.1:53"},
		{"PING", "Gateway", "Host", "gateway.example.com", "Max loss (%)", "20"},
		{"GRPC", "Cart health", "Host", "cart.example.com", "Port", "8443"},
		{"WEBSOCKET", "Price feed", "URL", "wss://stream.example.com/feed", "Expected reply", "pong"},
		{"TCP", "Postgres", "Host", "db.example.com", "Port", "5432"},
	} {
		b.run(chromedp.Navigate(b.base + "/console/checks/new?kind=" + tc.kind))
		b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
		b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), tc.name),
			chromedp.SendKeys(chromedp.Search(`//label[text()="`+tc.field+`"]/following-sibling::input`), tc.value),
			chromedp.SendKeys(chromedp.Search(`//label[text()="`+tc.field2+`"]/following-sibling::input`), tc.value2),
			chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
		b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === '` + tc.name + `'`)
		if meta := b.text(`.detail-head .meta`); !strings.Contains(meta, tc.value) {
			t.Errorf("%s check shows %q, want its %s", tc.kind, meta, tc.field)
		}
	}

	// Edit: the form holds the check's values, and a change is saved.
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Edit"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	if port := eval[string](b, `document.querySelector('[name=tcp_port]').value`); port != "5432" {
		t.Fatalf("edit form's port %q", port)
	}
	b.run(chromedp.SetValue(chromedp.CSS(`[name=tcp_port]`), "6432"),
		chromedp.Click(chromedp.Search(`//button[text()="Save changes"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] .detail-head .meta')?.textContent.includes('db.example.com:6432')`)

	// TLS and certificate expiry alerts: the defaults are shown, a bad threshold's error lands
	// beside the field, and the values are saved.
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Edit"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	if days := eval[string](b, `document.querySelector('[name=certificate_expiry_alert_days]').value`); days != "14, 7, 1" {
		t.Fatalf("edit form's certificate days %q, want the default", days)
	}
	b.run(chromedp.Click(chromedp.CSS(`[name=tcp_tls]`)),
		chromedp.SetValue(chromedp.CSS(`[name=certificate_expiry_alert_days]`), "30, 0"),
		chromedp.Click(chromedp.Search(`//button[text()="Save changes"]`)))
	b.waitFor(`!document.querySelector('[data-field="certificate_expiry_alert_days"] .field-error').hidden`)
	if msg := b.text(`[data-field="certificate_expiry_alert_days"] .field-error`); !strings.Contains(msg, "between 1 and 365") {
		t.Fatalf("error next to the certificate days: %q", msg)
	}
	b.run(chromedp.SetValue(chromedp.CSS(`[name=certificate_expiry_alert_days]`), "30, 7"),
		chromedp.Click(chromedp.Search(`//button[text()="Save changes"]`)))
	b.waitFor(`/^\/console\/checks\/[0-9a-f-]{36}$/.test(location.pathname) && document.querySelector('.view[data-ready] .detail-head')`)
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Edit"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	if !eval[bool](b, `document.querySelector('[name=tcp_tls]').checked && document.querySelector('[name=certificate_expiry_alert_days]').value === '30, 7'`) {
		t.Error("tcp_tls and the certificate days were not saved")
	}
	b.noErrors()
}

// TestConsoleReadOnly: a token with only read grants sees no edit control, and the API refuses
// the change when the page forces it.
func TestConsoleReadOnly(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createUptime(s.tokenA, "Public API", "https://api.example.com/health")
	reader, _ := s.token(s.orgA, "UPTIME_CHECKS:READ")
	b := s.tab(t, 1280, 800)
	b.signIn(reader, "/console/checks")
	b.waitFor(`document.querySelector('.view[data-ready] tbody a.check-name')`)
	if eval[bool](b, `[...document.querySelectorAll('a, button')].some(e => e.textContent === 'New check')`) {
		t.Fatal("a read-only token is offered New check")
	}
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Public API"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Public API'`)
	if eval[bool](b, `[...document.querySelectorAll('a, button')].some(e => ['Pause', 'Mute', 'Edit', 'Delete'].includes(e.textContent))`) {
		t.Fatal("a read-only token is offered edit controls")
	}
	b.noErrors() // the views call nothing the token may not read
	status := evalAsync[float64](b, `(async () => {
		const csrf = document.cookie.split('; ').find(c => c.startsWith('vantage_csrf=')).split('=')[1];
		const r = await fetch('/v1/checks/`+id+`', {method: 'PATCH', credentials: 'include',
			headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf}, body: '{"paused": true}'});
		return r.status;
	})()`)
	if status != http.StatusForbidden {
		t.Fatalf("forced PATCH: %v, want 403", status)
	}
	b.run(chromedp.Navigate(b.base + "/console/checks/" + id + "/edit"))
	b.waitFor(`document.querySelector('.view[data-ready], .view [role=alert]')`)
	if eval[bool](b, `!!document.querySelector('form.check-form')`) {
		t.Fatal("the edit form is offered to a read-only token")
	}
}

// TestConsoleOtherOrganization: another organization's check id in the URL reads as not found.
func TestConsoleOtherOrganization(t *testing.T) {
	s := newSite(t, siteOptions{})
	theirs := s.createUptime(s.tokenB, "Globex API", "https://api.globex.example/")
	b := s.tab(t, 1280, 800)
	b.signIn(s.tokenA, "/console/checks/"+theirs)
	b.waitFor(`document.querySelector('main h1')?.textContent === 'Not found'`)
	if strings.Contains(b.text("main"), "Globex") {
		t.Fatal("the page shows another organization's check")
	}
	b.noErrors()
}

// TestConsoleViewsWithHistory shows checks with a day of results judged by the evaluator: the
// overview's status, sparkline and region dots, and the check's page with its failing regions,
// open incident, chart per region and a failed browser run's screenshot. It keeps screenshots
// of the views (docs/console with make console-screenshots).
func TestConsoleViewsWithHistory(t *testing.T) {
	started := time.Now().Truncate(time.Second)
	s := newSite(t, siteOptions{})
	down := s.createUptime(s.tokenA, "Checkout API", "https://shop.example.com/api/checkout")
	notAfter := time.Now().Add(40 * 24 * time.Hour).UTC().Format(time.RFC3339)
	s.ingestHistory(s.orgA, down, history{hours: 24, interval: 10 * time.Minute, baseMs: threeRegions,
		fails: failingIn(25*time.Minute, "HTTP 503 Service Unavailable", "cloud:eu-central-1", "cloud:ap-south-1"),
		// One edge still serves the old certificate.
		certificates: map[string][2]string{"cloud:us-east-1": {"9f86d081884c7d659a2feaa0c55ad015", notAfter},
			"cloud:eu-central-1": {"9f86d081884c7d659a2feaa0c55ad015", notAfter}, "cloud:ap-south-1": {"2c26b46b68ffc68ff99b453c1d304134", notAfter}}})
	site := s.createUptime(s.tokenA, "Marketing site", "https://www.example.com/")
	s.ingestHistory(s.orgA, site, history{hours: 24, interval: 10 * time.Minute, baseMs: map[string]float64{"cloud:us-east-1": 180, "cloud:eu-central-1": 95, "cloud:ap-south-1": 310},
		fails: outage(7*time.Hour, 6*time.Hour+20*time.Minute, "connection refused")})
	flow := s.createBrowser(s.tokenA, "Sign-up journey")
	s.ingestHistory(s.orgA, flow, history{hours: 6, interval: 15 * time.Minute, baseMs: map[string]float64{"cloud:us-east-1": 1800, "cloud:eu-central-1": 2100},
		fails:      failingIn(16*time.Minute, "step 3 of 5: locator.click: Timeout 5000ms exceeded waiting for getByRole('button', { name: 'Create account' })", "cloud:us-east-1"),
		screenshot: testPNG(t)})
	s.createDNS(s.tokenA, "DNS apex")
	s.createTCP(s.tokenA, "Postgres primary")

	b := s.tab(t, 1360, 860)
	b.run(chromedp.Navigate(b.base + "/console/login"))
	b.waitFor(`document.querySelector('.signin-card form')`)
	b.screenshot("sign-in.png")
	b.signIn(s.tokenA, "/console/checks")
	b.waitFor(`document.querySelectorAll('.view[data-ready] tbody tr').length === 5 && document.querySelector('tbody svg.spark path.line')`)
	row := `[...document.querySelectorAll('tbody tr')].find(r => r.querySelector('.check-name').textContent === 'Checkout API')`
	if got := eval[string](b, row+`.querySelector('.badge').textContent`); got != "Down" {
		t.Errorf("Checkout API shows %q, want Down", got)
	}
	if got := eval[float64](b, row+`.querySelectorAll('.rdot.DOWN').length`); got != 2 {
		t.Errorf("Checkout API shows %v failing regions, want 2", got)
	}
	// Since when: the evaluator changed the state to DOWN while the history was ingested, during
	// this test; the <time> carries the instant.
	if got := eval[string](b, row+`.querySelector('.since').textContent`); !regexp.MustCompile(`^since (just now|\d+ min\. ago)$`).MatchString(got) {
		t.Errorf("Checkout API's status since: %q", got)
	}
	sinceAt, err := time.Parse(time.RFC3339, eval[string](b, row+`.querySelector('.since time').getAttribute('datetime')`))
	if err != nil || sinceAt.Before(started) || sinceAt.After(time.Now()) {
		t.Errorf("Checkout API DOWN since %v (%v), not during the test (from %v)", sinceAt, err, started)
	}
	b.screenshot("overview.png")

	b.run(chromedp.Click(chromedp.Search(`//a[text()="Checkout API"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] svg.chart path.series')`)
	if n := eval[float64](b, `document.querySelectorAll('svg.chart path.series').length`); n != 3 {
		t.Errorf("%v series in the chart, want one per region (3)", n)
	}
	if down := eval[float64](b, `document.querySelectorAll('svg.strip rect.strip-down').length`); down < 2 {
		t.Errorf("the status strip shows %v failed periods, want the last ones", down)
	}
	regions := b.text(`section[aria-label="Regions now"]`)
	incidents := b.text(`section[aria-label="Incidents"]`)
	if !strings.Contains(regions, "2 failing") || !strings.Contains(incidents, "1 open") {
		t.Errorf("regions %q; incidents %q", regions, incidents)
	}
	if !strings.Contains(regions, "9f86d081884c") || !strings.Contains(regions, "2c26b46b68ff") {
		t.Errorf("the regions do not show the certificates they were served: %q", regions)
	}
	b.waitFor(`document.querySelector('details.certificate summary')`)
	b.run(chromedp.Click(chromedp.CSS(`details.certificate summary`)))
	b.waitFor(`document.querySelector('details.certificate').open`)
	if cert := b.text(`details.certificate`); !strings.Contains(cert, "Certificate valid") || !strings.Contains(cert, "days left") ||
		!strings.Contains(cert, "CN=Example CA") {
		t.Errorf("a result's certificate shows %q", cert)
	}
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Enable badges"]`)))
	b.waitFor(`[...document.querySelectorAll('.badges img')].filter(i => i.complete && i.naturalWidth > 0).length === 3`)
	badgeURL := eval[string](b, `document.querySelector('[data-field="badge-status"] input').value`)
	if res, err := http.Get(badgeURL); err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("the status badge %s: %v %v", badgeURL, res, err)
	} else {
		res.Body.Close()
	}
	b.screenshot("check.png")
	b.run(chromedp.Click(chromedp.CSS(`.seg button[title="7 days"]`)))
	b.waitFor(`document.querySelector('.seg button[aria-pressed=true]')?.textContent === '7d' && document.querySelector('svg.chart path.series')`)

	b.run(chromedp.Navigate(b.base + "/console/checks/" + flow))
	// Every browser result opens (a passing run may have kept artifacts too); the failed one
	// shows its screenshot.
	b.waitFor(`document.querySelector('.view[data-ready] tr.result-fail details.result summary')`)
	b.run(chromedp.Click(chromedp.CSS(`tr.result-fail details.result summary`)))
	b.waitFor(`document.querySelector('tr.result-fail img.screenshot')?.complete && document.querySelector('tr.result-fail img.screenshot').naturalWidth > 0`)
	if step := b.text(`tr.result-fail details.result`); !strings.Contains(step, "Failing step") {
		t.Errorf("the failed run shows no failing step: %q", step)
	}
	// The run's artifacts: a link to each, the image shown.
	b.waitFor(`document.querySelector('tr.result-fail ul.artifacts img')?.complete && document.querySelector('tr.result-fail ul.artifacts img').naturalWidth > 0`)
	if files := b.text(`tr.result-fail ul.artifacts`); !strings.Contains(files, "shots-cart.png") || !strings.Contains(files, "notes.txt") {
		t.Errorf("the artifacts list shows %q", files)
	}
	b.screenshot("browser-result.png")

	b.run(chromedp.Navigate(b.base + "/console/checks/new"))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.screenshot("new-check.png")

	b.run(chromedp.Evaluate[chromedp.Void](`localStorage.setItem('vantage.theme', 'dark')`), chromedp.Navigate(b.base+"/console/checks/"+down))
	b.waitFor(`document.querySelector('.view[data-ready] svg.chart path.series')`)
	b.screenshot("check-dark.png")
	b.noErrors()
}

// testPNG is a small page-like image, standing in for a browser run's screenshot.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 640, 400))
	for y := range 400 {
		for x := range 640 {
			c := color.RGBA{250, 250, 252, 255}
			switch {
			case y < 48:
				c = color.RGBA{30, 41, 59, 255}
			case x > 220 && x < 420 && y > 250 && y < 290:
				c = color.RGBA{37, 99, 235, 255}
			case x > 220 && x < 420 && (y > 120 && y < 150 || y > 180 && y < 210):
				c = color.RGBA{226, 232, 240, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestConsoleRevokedToken: once the session's token is revoked, the next action is refused and
// the console goes back to sign-in; the check is left as it was.
func TestConsoleRevokedToken(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createUptime(s.tokenA, "Public API", "https://api.example.com/health")
	tok := s.call(http.MethodPost, "/v1/tokens", s.tokenA, map[string]any{"name": "console session",
		"grants": []map[string]string{{"scope": "UPTIME_CHECKS", "permission": "EDIT"}}})
	b := s.tab(t, 1280, 800)
	b.signIn(tok["token"].(string), "/console/checks/"+id)
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Public API'`)

	s.call(http.MethodDelete, "/v1/tokens/"+tok["id"].(string), s.tokenA, nil)
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Pause"]`)))
	b.waitFor(`location.pathname === '/console/login' && document.querySelector('.signin-card')`)
	if got := s.call(http.MethodGet, "/v1/checks/"+id, s.tokenA, nil)["status"]; got == "PAUSED" {
		t.Fatal("a revoked token's session paused the check")
	}
	if !strings.Contains(eval[string](b, `location.search`), "next=") {
		t.Error("sign-in does not lead back to the check")
	}
}

// TestConsoleCheckDegraded: the edit form sets degraded_response_time_ms (empty turns it off),
// the check page shows the threshold, and an UP check the evaluator holds slow shows a Degraded
// badge beside its status.
func TestConsoleCheckDegraded(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createUptime(s.tokenA, "Public API", "https://api.example.com/health")
	b := s.tab(t, 1280, 900)
	b.signIn(s.tokenA, "/console/checks/"+id+"/edit")
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Degraded above (ms)"]/following-sibling::input`), "750"),
		chromedp.Click(chromedp.Search(`//button[text()="Save changes"]`)))
	b.waitFor(`location.pathname === '/console/checks/` + id + `' && document.querySelector('.view[data-ready] h1')`)
	if _, err := s.st.Pool().Exec(context.Background(), `UPDATE checks SET state = 'UP' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.Pool().Exec(context.Background(), `INSERT INTO check_slowness (org_id, check_id, since, degraded)
		VALUES ($1, $2, now(), true)`, s.orgA, id); err != nil {
		t.Fatal(err)
	}
	b.run(chromedp.Navigate(b.base + "/console/checks/" + id))
	b.waitFor(`document.querySelector('.view[data-ready] .detail-head')?.textContent.includes('Degraded: slow')`)
	b.waitFor(`[...document.querySelectorAll('.view[data-ready] dl.kv')].some((d) => d.textContent.includes('Degraded above750 ms'))`)
	b.noErrors()
}
