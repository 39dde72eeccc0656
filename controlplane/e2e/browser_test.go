package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// shop is the site the browser checks test: a shop page whose "Add to cart" button puts one
// item in the cart (or, broken, none), and a cart page.
type shop struct {
	URL    string
	broken atomic.Bool
}

func newShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		items := 1
		if s.broken.Load() {
			items = 0
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Shop</title></head><body>
			<h1>Shop</h1>
			<button onclick="document.getElementById('count').textContent = '%d item'">Add to cart</button>
			<p id="count"></p>
			<a href="/cart">Cart</a>
			</body></html>`, items)
	})
	mux.HandleFunc("/cart", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Cart</title></head><body><h1>Your cart</h1></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// shopScript buys one item: two page loads, three steps. Line 9 is the step that fails when the
// shop is broken.
func shopScript(url string) string {
	return `import { test, expect } from '@playwright/test';

test('buy a thing', async ({ page }) => {
  await test.step('open the shop', async () => {
    await page.goto('` + url + `/');
    await expect(page).toHaveTitle('Shop');
  });
  await test.step('add to cart', async () => {
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await expect(page.getByText('1 item')).toBeVisible({ timeout: 2000 });
  });
  await test.step('open the cart', async () => {
    await page.getByRole('link', { name: 'Cart' }).click();
    await expect(page.getByRole('heading', { name: 'Your cart' })).toBeVisible();
  });
});
`
}

// screenshot fetches a result's screenshot through the API.
func (s *stack) screenshot(t *testing.T, checkID uuid.UUID, resultID string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/v1/checks/%s/results/%s/screenshot", s.cp.httpAddr, checkID, resultID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// TestBrowserScriptEndToEnd: a scripted browser check goes UP on a real Chromium; the page
// breaks and the check goes DOWN with the failing step, its place in the script and
// Playwright's message in the result, and a screenshot of the page retrievable through the
// API; the page is fixed and the check recovers.
func TestBrowserScriptEndToEnd(t *testing.T) {
	parallel(t)
	target := newShop(t)
	s := newStack(t)
	s.startBrowserAgent(t, "agent-browser", nil, "cloud:eu-west-2")

	const confirm, recovery = 4, 4
	begin := time.Now()
	id := s.createCheck(t, "/v1/checks/browser", map[string]any{
		"name":                            "e2e shop",
		"script":                          shopScript(target.URL),
		"test_regions":                    []string{"cloud:eu-west-2"},
		"confirmation_period_seconds":     confirm,
		"recovery_period_seconds":         recovery,
		"reminder_alert_interval_minutes": -1,
		"timeout":                         15000,
	})
	s.setInterval(t, id, fastInterval)
	seen := s.waitStatus(t, id, "UP", 60*time.Second)
	mustOnlySee(t, seen, "PENDING", "UP")

	broke := time.Now()
	target.broken.Store(true)
	seen = s.waitStatus(t, id, "DOWN", fastInterval*time.Second+confirm*time.Second+2*slack)
	t.Logf("DOWN %s after the page broke; statuses seen %v", time.Since(broke).Round(time.Millisecond), seen)
	mustOnlySee(t, seen, "UP", "VERIFYING", "DOWN")

	var failing *resultJSON
	for _, r := range s.results(t, "browser", id, broke) {
		if !r.Passing && r.IsFinalAttempt {
			failing = &r
		}
	}
	if failing == nil || failing.ResultSummary == nil {
		t.Fatal("no failing result with a summary after the page broke")
	}
	sum := *failing.ResultSummary
	for _, want := range []string{"add to cart", "check.spec.ts:10:", "toBeVisible", "1 item"} {
		if !strings.Contains(sum, want) {
			t.Errorf("result summary %q does not contain %q", sum, want)
		}
	}
	status, ctype, img := s.screenshot(t, id, failing.ID)
	if status != http.StatusOK || wire.ScreenshotType(img) == "" || ctype != wire.ScreenshotType(img) {
		t.Fatalf("screenshot of the failing result: %d %s, %d bytes", status, ctype, len(img))
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND jsonb_array_length(details->'steps') >= 3`, id); n == 0 {
		t.Error("no result carries the script's steps")
	}

	healed := time.Now()
	target.broken.Store(false)
	seen = s.waitStatus(t, id, "UP", fastInterval*time.Second+recovery*time.Second+2*slack)
	t.Logf("UP %s after the page was fixed; statuses seen %v", time.Since(healed).Round(time.Millisecond), seen)
	mustOnlySee(t, seen, "DOWN", "RECOVERING", "UP")
	for _, r := range s.results(t, "browser", id, begin) {
		if r.Passing {
			if status, _, _ := s.screenshot(t, id, r.ID); status != http.StatusNotFound {
				t.Errorf("passing result %s has a screenshot (%d)", r.ID, status)
			}
			break
		}
	}
}

// TestBrowserScriptSandboxEndToEnd: scripts that loop forever, allocate without bound or never
// resolve each end within their timeout with a clear message, while the same agent keeps
// serving another check; one that requires a Node module is refused when it is saved.
func TestBrowserScriptSandboxEndToEnd(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	a := s.startBrowserAgent(t, "agent-sandbox", map[string]string{
		"VANTAGE_BROWSER_WORKER_MEMORY_MB": "256", "VANTAGE_BROWSER_CONCURRENCY": "4",
	}, "cloud:eu-west-2")
	region := []string{"cloud:eu-west-2"}
	const timeoutMs = 6000

	heartbeat := s.createCheck(t, "/v1/checks", map[string]any{"name": "still served", "url": target.URL, "test_regions": region})
	s.setInterval(t, heartbeat, fastInterval)
	s.waitStatus(t, heartbeat, "UP", 30*time.Second)

	cases := []struct {
		name, body string
		want       []string // the summary contains one of these
	}{
		{"infinite loop", "test('spin', async () => { while (true) {} });", []string{"imeout"}},
		// A fresh megabyte an iteration. Each iteration is short, so the heap watch's interrupt is
		// seen at once: one native call that fills a huge array runs to its end before goja looks
		// at interrupts, and on a busy machine the check's timeout came first.
		{"huge allocation", "test('hog', async () => { const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length); });",
			[]string{"MiB of memory"}},
		{"never resolves", "test('wait', async () => { await new Promise(() => {}); });", []string{"imeout"}},
	}
	// A Node module is refused when the check is saved, naming it and its line, before any run.
	status, body, err := s.do("POST", "/v1/checks/browser", map[string]any{
		"name": "sandbox: require fs", "test_regions": region, "timeout": timeoutMs,
		"script": "import { test } from '@playwright/test';\nconst fs = require('fs');\ntest('read', async () => { fs.readFileSync('/etc/passwd'); });\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadRequest || !strings.Contains(string(body), "require('fs') at line 2") {
		t.Errorf("a script requiring fs: %d %s, want a 400 naming require('fs') at line 2", status, body)
	}

	start := time.Now()
	ids := map[string]uuid.UUID{}
	for _, c := range cases {
		ids[c.name] = s.createCheck(t, "/v1/checks/browser", map[string]any{
			"name": "sandbox: " + c.name, "test_regions": region, "timeout": timeoutMs,
			"script": "import { test } from '@playwright/test';\n" + c.body + "\n",
		})
		s.setInterval(t, ids[c.name], 5)
	}
	for _, c := range cases {
		id := ids[c.name]
		var r resultJSON
		// Two runs each: the agent keeps running them, one after the other.
		testwait.Eventually(t, 90*time.Second, func() error {
			var finals []resultJSON
			for _, x := range s.results(t, "browser", id, start) {
				if x.IsFinalAttempt {
					finals = append(finals, x)
				}
			}
			if len(finals) < 2 {
				return fmt.Errorf("%s: %d results yet, want 2", c.name, len(finals))
			}
			r = finals[len(finals)-1]
			return nil
		})
		sum := ""
		if r.ResultSummary != nil {
			sum = *r.ResultSummary
		}
		t.Logf("%s: %s (response time %.0f ms)", c.name, sum, r.ResponseTimeMs)
		if r.Passing {
			t.Errorf("%s passed", c.name)
		}
		matched := false
		for _, w := range c.want {
			matched = matched || strings.Contains(sum, w)
		}
		if !matched {
			t.Errorf("%s: summary %q, want one of %q", c.name, sum, c.want)
		}
		if r.ResponseTimeMs > timeoutMs+1000 {
			t.Errorf("%s ran %.0f ms, past its timeout of %d ms", c.name, r.ResponseTimeMs, timeoutMs)
		}
	}
	if a.p.exited() {
		t.Fatalf("the agent exited: %v", a.p.err)
	}
	// The other check was served all along: it has a result for (nearly) every interval of the
	// time the scripts ran.
	ran := time.Since(start)
	want := int(ran/(fastInterval*time.Second)) - 2
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND checked_at > $2`, heartbeat, start); n < want {
		t.Errorf("the uptime check got %d results in the %s the runaway scripts ran, want at least %d", n, ran.Round(time.Second), want)
	}
}

// TestBrowserPrivateTargetsRefused: with VANTAGE_ALLOW_PRIVATE_TARGETS=false, neither a
// script's page.goto nor a URL browser check reaches a private (here loopback) address, and
// the result says why.
func TestBrowserPrivateTargetsRefused(t *testing.T) {
	parallel(t)
	var hits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<title>internal</title>")
	}))
	t.Cleanup(internal.Close)
	s := newStack(t)
	s.startBrowserAgent(t, "agent-hosted", map[string]string{"VANTAGE_ALLOW_PRIVATE_TARGETS": "false"}, "cloud:eu-west-2")
	region := []string{"cloud:eu-west-2"}
	start := time.Now()
	scripted := s.createCheck(t, "/v1/checks/browser", map[string]any{
		"name": "goes inside", "test_regions": region, "timeout": 10000, "confirmation_period_seconds": 0,
		"script": "import { test } from '@playwright/test';\ntest('inside', async ({ page }) => {\n  await page.goto('" + internal.URL + "/admin');\n});\n",
	})
	byURL := s.createCheck(t, "/v1/checks/browser", map[string]any{"name": "url inside", "test_regions": region, "url": internal.URL,
		"confirmation_period_seconds": 0})
	for _, id := range []uuid.UUID{scripted, byURL} {
		s.setInterval(t, id, fastInterval)
		s.waitStatus(t, id, "DOWN", 60*time.Second)
		res := s.results(t, "browser", id, start)
		if len(res) == 0 || res[len(res)-1].ResultSummary == nil {
			t.Fatalf("check %s: no result with a summary", id)
		}
		sum := *res[len(res)-1].ResultSummary
		if !strings.Contains(sum, "target not allowed") || !strings.Contains(sum, "loopback address") {
			t.Errorf("check %s: summary %q does not say the private target was refused", id, sum)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
}

// TestAgentWithoutBrowserTakesNoBrowserJobs: an agent without a browser registers without the
// capability and never takes a browser job, so the browser check stays PENDING (never DOWN)
// while the agent serves its other checks; once an agent with a browser joins the region, the
// check runs and goes UP.
func TestAgentWithoutBrowserTakesNoBrowserJobs(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	s.startAgent(t, "agent-plain", "cloud:us-west-1")
	region := []string{"cloud:us-west-1"}
	browserCheck := s.createCheck(t, "/v1/checks/browser", map[string]any{"name": "page", "test_regions": region, "url": target.URL})
	uptime := s.createCheck(t, "/v1/checks", map[string]any{"name": "api", "test_regions": region, "url": target.URL})
	s.setInterval(t, browserCheck, fastInterval)
	s.setInterval(t, uptime, fastInterval)
	s.waitStatus(t, uptime, "UP", 30*time.Second)
	time.Sleep(3 * fastInterval * time.Second)

	if st, err := s.status(browserCheck); err != nil || st != "PENDING" {
		t.Fatalf("the browser check is %s (%v) with only a browser-less agent, want PENDING", st, err)
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1`, browserCheck); n != 0 {
		t.Fatalf("the browser check has %d results from an agent without a browser", n)
	}
	info, err := s.consumerInfoNamed(wire.BrowserConsumerName("cloud:us-west-1"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Consumer != 0 || info.NumPending == 0 {
		t.Errorf("browser jobs: %d delivered, %d waiting; want none delivered and some waiting", info.Delivered.Consumer, info.NumPending)
	}

	s.startBrowserAgent(t, "agent-browser", nil, "cloud:us-west-1")
	s.waitStatus(t, browserCheck, "UP", 60*time.Second)
}
