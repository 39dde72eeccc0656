package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestConsoleWalkThrough walks the console in a real Chromium against the real binaries, one
// control plane and one agent with a browser: a person signs in with the one-time link of
// `admin console-link` and with the "API token" form, creates an uptime check with the form and
// watches it go UP and then DOWN in the overview without reloading, with its incident and
// failing regions on its page; creates a scripted browser check whose syntax error is marked at
// its line, fixes it, and opens the screenshot of its failing run; posts a status-page incident
// and reads it on the public page; and, once the session's token is revoked, is refused and
// sent back to sign-in.
func TestConsoleWalkThrough(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	shop := newShop(t)
	shop.broken.Store(true) // the browser check's page fails its assertion from the start
	s := newStack(t)
	// The agent serves the form's default regions only: its two browser slots are shared by the
	// regions it serves, and with all eight a region's browser jobs wait their turn past their
	// deadline at a 2 s interval.
	s.startBrowserAgent(t, "agent-walk", nil, "cloud:us-east-1", "cloud:eu-central-1")

	// The session's token: every area of the organization, made with the bootstrap token, which
	// later revokes it.
	var grants []map[string]string
	for _, g := range auth.AllGrants() {
		area, level, _ := strings.Cut(g, ":")
		grants = append(grants, map[string]string{"scope": area, "permission": level})
	}
	var tok struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	s.mustCall(t, http.MethodPost, "/v1/tokens", map[string]any{"name": "console walk-through", "grants": grants}, &tok)

	b := newConsoleTab(t, "http://"+s.cp.httpAddr)

	// 1. Sign in: the link `make run` prints (admin console-link) signs in at once, and works
	// only once; after signing out, the form labelled "API token" signs in too.
	link := s.consoleLink(t, tok.Token)
	b.run(chromedp.Navigate(link))
	b.waitFor(`location.pathname.startsWith('/console/') && document.querySelector('#topbar:not([hidden])')`)
	if res, err := s.client.Get(link); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("the used sign-in link, opened again: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)))
	b.waitFor(`location.pathname === '/console/login' && document.querySelector('.signin-card')`)
	b.signIn(tok.Token)

	// 2. An uptime check made with the form goes UP in the overview, which is not reloaded.
	b.run(chromedp.Navigate(b.base + "/console/checks/new"))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), "Walk API"),
		chromedp.SendKeys(chromedp.Search(`//label[text()="URL"]/following-sibling::input`), target.URL),
		chromedp.SetValue(chromedp.CSS(`[name=confirmation_period_seconds]`), "0"),
		chromedp.SetValue(chromedp.CSS(`[name=recovery_period_seconds]`), "0"),
		chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`/^\/console\/checks\/[0-9a-f-]{36}$/.test(location.pathname) && document.querySelector('.view[data-ready] h1')?.textContent === 'Walk API'`)
	uptime := b.checkID()
	// The API's minimum interval is 30 s; the harness runs checks every fastInterval seconds.
	s.setInterval(t, uptime, fastInterval)

	b.run(chromedp.Click(chromedp.Search(`//a[text()="Checks"][not(@class="nav-link")]`)))
	b.waitFor(`location.pathname === '/console/checks' && document.querySelector('.view[data-ready] tbody a.check-name')`)
	b.run(chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))
	row := `[...document.querySelectorAll('tbody tr')].find(r => r.querySelector('.check-name')?.textContent === 'Walk API')`
	b.waitWithin(30*time.Second+slack, row+`?.querySelector('.badge')?.textContent === 'Up'`)

	// 3. The target answers 500: the overview shows the check DOWN with failing region dots, and
	// its page an open incident and the failing regions.
	target.healthy.Store(false)
	b.waitWithin(fastInterval*time.Second+10*time.Second+2*slack, row+`?.querySelector('.badge')?.textContent === 'Down'`)
	if n := eval[float64](b, row+`.querySelectorAll('.rdot.DOWN').length`); n < 1 {
		t.Errorf("the DOWN check shows %v failing region dots", n)
	}
	if !eval[bool](b, `window.sameDocument === true`) {
		t.Fatal("the overview reloaded to show the check's status")
	}
	b.run(chromedp.Click(chromedp.Search(`//a[text()="Walk API"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Walk API'`)
	b.waitWithin(2*slack, `document.querySelector('section[aria-label="Regions now"]')?.textContent.includes('failing')`)
	regions := b.text(`section[aria-label="Regions now"]`)
	failing := b.text(`section[aria-label="Regions now"] tr.result-fail`)
	incidents := b.text(`section[aria-label="Incidents"]`)
	if !strings.Contains(incidents, "1 open") {
		t.Errorf("incidents panel %q, want 1 open", incidents)
	}
	if !strings.Contains(failing, "us-east-1") && !strings.Contains(failing, "eu-central-1") {
		t.Errorf("regions panel %q names no failing region of the check", regions)
	}

	// 4. A scripted browser check with a syntax error: the editor marks its line and the API's
	// message names line and column; the fixed script is saved.
	b.run(chromedp.Navigate(b.base + "/console/checks/new?kind=BROWSER"))
	b.waitFor(`document.querySelector('.view[data-ready] form.check-form')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="Name"]/following-sibling::input`), "Walk shop"),
		chromedp.Click(chromedp.Search(`//label[contains(., "Run a script")]`)),
		chromedp.SetValue(chromedp.CSS(`[name=confirmation_period_seconds]`), "0"),
		chromedp.SetValue(chromedp.CSS(`[name=timeout]`), "15000"),
		// One region: one Chromium run per interval is enough on a shared machine.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=test_regions][value="cloud:eu-central-1"]').checked = false`))
	// The closing parenthesis of page.goto is missing: the parser stops at line 5, column 3.
	broken := "import { test, expect } from '@playwright/test';\n\ntest('buy a thing', async ({ page }) => {\n  await page.goto('" + shop.URL + "/'\n  await expect(page).toHaveTitle('Shop');\n});\n"
	b.setScript(broken)
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('.gutter .err')`)
	line := b.text(`.gutter .err`)
	msg := b.text(`[data-field="script"] .field-error`)
	if !strings.Contains(msg, "line "+line+",") {
		t.Errorf("marked line %q, but the API's message is %q", line, msg)
	}
	if line != "5" {
		t.Errorf("marked line %q, want 5 (the line after the unclosed call)", line)
	}
	b.setScript(shopScript(shop.URL))
	if eval[bool](b, `!!document.querySelector('.gutter .err')`) {
		t.Error("the mark stayed after the script changed")
	}
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Create check"]`)))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Walk shop'`)
	browser := b.checkID()
	s.setInterval(t, browser, fastInterval)

	// 5. The page fails its assertion: the failing run's screenshot opens from the recent results.
	start := time.Now().Add(-time.Minute)
	testwait.Eventually(t, 90*time.Second, func() error {
		for _, r := range s.results(t, "browser", browser, start) {
			if !r.Passing && r.IsFinalAttempt {
				return nil
			}
		}
		return fmt.Errorf("no failing run of the browser check yet")
	})
	b.run(chromedp.Navigate(b.base + "/console/checks/" + browser.String()))
	b.waitFor(`document.querySelector('.view[data-ready] details.result summary')`)
	b.run(chromedp.Click(chromedp.CSS(`details.result summary`)))
	b.waitWithin(20*time.Second, `document.querySelector('img.screenshot')?.complete && document.querySelector('img.screenshot').naturalWidth > 0`)
	if step := b.text(`details.result`); !strings.Contains(step, "add to cart") {
		t.Errorf("the failed run does not name its failing step: %q", step)
	}

	// 6. A status-page incident posted with the console's form is on the public page.
	var page, comp struct {
		ID string `json:"id"`
	}
	s.mustCall(t, http.MethodPost, "/v1/status_pages", map[string]any{"name": "Walk Status", "subdomain": "walk-e2e"}, &page)
	s.mustCall(t, http.MethodPost, "/v1/status_pages/"+page.ID+"/components", map[string]any{"name": "Public API"}, &comp)
	b.run(chromedp.Navigate(b.base + "/console/status-pages/" + page.ID))
	b.waitFor(`document.querySelector('#sp-incidents details > summary') && !document.querySelector('main[aria-busy], main [aria-busy="true"], main .loading')`)
	b.run(chromedp.Click(chromedp.CSS(`#sp-incidents details > summary`)),
		chromedp.SendKeys(chromedp.ID("incident-create-title"), "Elevated API errors"),
		chromedp.SendKeys(chromedp.ID("incident-create-description"), "We are looking into failing requests."),
		chromedp.SetValue(chromedp.ID("incident-create-component-"+comp.ID), "MAJOR_OUTAGE"),
		chromedp.Click(chromedp.CSS(`#incident-create button[type=submit]`)))
	b.waitFor(`location.pathname.includes('/console/status-pages/` + page.ID + `/incidents/') && document.querySelector('#incident-update-create')`)
	if href := eval[string](b, `document.getElementById('public-page-link')?.getAttribute('href') || ''`); href != "" && href != "/status/walk-e2e" {
		t.Errorf("public page link %q", href)
	}
	b.run(chromedp.Navigate(b.base + "/status/walk-e2e"))
	b.waitFor(`document.querySelector('#overall')`)
	public := b.text("body")
	for _, want := range []string{"Elevated API errors", "We are looking into failing requests.", "Major outage"} {
		if !strings.Contains(public, want) {
			t.Errorf("the public page does not show %q: %.400s", want, public)
		}
	}

	// 7. The session's token is revoked with another token: the next action is refused, the
	// console goes back to sign-in, and the check stays as it was.
	b.run(chromedp.Navigate(b.base + "/console/checks/" + uptime.String()))
	b.waitFor(`document.querySelector('.view[data-ready] h1')?.textContent === 'Walk API'`)
	s.mustCall(t, http.MethodDelete, "/v1/tokens/"+tok.ID, nil, nil)
	b.run(chromedp.Click(chromedp.Search(`//button[text()="Pause"]`)))
	b.waitFor(`location.pathname === '/console/login' && document.querySelector('.signin-card')`)
	if st, err := s.status(uptime); err != nil || st == "PAUSED" {
		t.Fatalf("after the token was revoked the check is %s (%v)", st, err)
	}
	status := evalAsync[float64](b, `fetch('/v1/checks', {credentials: 'include'}).then(r => r.status)`)
	if status != http.StatusUnauthorized {
		t.Errorf("a /v1 read after the revocation: %v, want 401", status)
	}
	b.noErrors()
}

// consoleLink runs `vantage-controlplane admin console-link` against the stack's database, as
// make run does, and returns the one-time link it prints for the token secret.
func (s *stack) consoleLink(t *testing.T, secret string) string {
	t.Helper()
	env := s.cp.env()
	env["VANTAGE_CONSOLE_TOKEN"] = secret
	vars := make([]string, 0, len(env))
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, controlPlaneBin, "admin", "console-link", "--base", "http://"+s.cp.httpAddr, "--expires", "5m")
	cmd.Env = append(os.Environ(), vars...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin console-link: %v\n%s", err, stderr.String())
	}
	link := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(link, "http://"+s.cp.httpAddr+"/console/signin?code=") {
		t.Fatalf("admin console-link printed %q", link)
	}
	return link
}

// consoleTab is a headless Chromium tab on the console of one control plane. It records every
// console error, uncaught exception and CSP violation of the pages it shows.
type consoleTab struct {
	t      *testing.T
	ctx    context.Context
	base   string
	mu     sync.Mutex
	errors []string
}

func newConsoleTab(t *testing.T, base string) *consoleTab {
	t.Helper()
	path := ""
	for _, p := range []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("Chromium is required: neither /usr/bin/chromium-headless-shell nor /usr/bin/chromium exists (apt-get install chromium-headless-shell)")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &consoleTab{t: t, ctx: ctx, base: base}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// The walk-through provokes a 400 (the script's syntax error) and 401s (after the
			// revocation): those network errors are expected.
			expected := m.Source == "network" && (strings.Contains(m.Text, "status of 400") ||
				strings.Contains(m.Text, "status of 401"))
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !expected {
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// noErrors fails the test if a page logged an error, threw or violated its CSP.
func (b *consoleTab) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		b.t.Errorf("the pages logged errors:\n%s", strings.Join(b.errors, "\n"))
	}
}

func (b *consoleTab) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// eval runs a JavaScript expression in the tab and returns its value.
func eval[T any](b *consoleTab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("chromium: %s: %v", expr, err)
	}
	return v
}

// evalAsync runs a JavaScript expression that returns a promise and returns what it resolves to.
func evalAsync[T any](b *consoleTab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("chromium: %s: %v", expr, err)
	}
	return v
}

func (b *consoleTab) text(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("chromium: text of %s: %v", sel, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is true (15 s).
func (b *consoleTab) waitFor(cond string) {
	b.t.Helper()
	b.waitWithin(15*time.Second, cond)
}

// waitWithin polls a JavaScript condition until it is true, for at most d.
func (b *consoleTab) waitWithin(d time.Duration, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(d)
	for !eval[bool](b, "!!("+cond+")") {
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
			b.t.Fatalf("timed out after %s waiting for %s; page at %s: %.800s", d, cond, eval[string](b, "location.href"), body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signIn signs in through the sign-in form's "API token" field.
func (b *consoleTab) signIn(token string) {
	b.t.Helper()
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="API token"]/following-sibling::input`), token),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in with token"]`)))
	b.waitFor(`!document.querySelector('.signin-card') && document.querySelector('#topbar:not([hidden])')`)
}

// setScript replaces the browser-script editor's text as typing would.
func (b *consoleTab) setScript(src string) {
	b.t.Helper()
	b.run(chromedp.SetValue(chromedp.CSS(`textarea.script`), src),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('textarea.script').dispatchEvent(new Event('input'))`))
}

// checkID is the id of the check whose page the tab shows.
func (b *consoleTab) checkID() uuid.UUID {
	b.t.Helper()
	path := eval[string](b, "location.pathname")
	id, err := uuid.Parse(strings.TrimPrefix(path, "/console/checks/"))
	if err != nil {
		b.t.Fatalf("not on a check's page: %s", path)
	}
	return id
}
