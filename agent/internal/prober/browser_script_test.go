package prober

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func scriptJob(script string, timeout time.Duration, mod func(*vantagev1.CheckJob)) *vantagev1.CheckJob {
	j := &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_BROWSER, TimeoutMs: uint32(timeout.Milliseconds()),
		Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Script: &script}}}
	if mod != nil {
		mod(j)
	}
	return j
}

const scriptHead = "import { test, expect } from '@playwright/test';\n"

// TestBrowserScripts runs scripted checks through the worker process on real Chromium: each
// ends with the right verdict, failure source and type, and a message users can act on,
// within its timeout.
func TestBrowserScripts(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, false))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Login</title><label>Email <input name=email></label>
			<button onclick="document.getElementById('msg').textContent = 'Welcome ' + document.querySelector('input').value">Sign in</button>
			<p id=msg></p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	site := srv.URL
	closed := closedURL(t)

	tests := []struct {
		name          string
		job           *vantagev1.CheckJob
		source, ftype string
		summary       []string
		screenshot    bool
		steps         int // at least
	}{
		{name: "passes", job: scriptJob(scriptHead+`test('sign in', async ({ page }) => {
  await test.step('open', async () => { await page.goto('`+site+`'); });
  await test.step('sign in', async () => {
    await page.getByLabel('Email').fill(process.env.USER_EMAIL);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('#msg')).toHaveText('Welcome ada@example.com');
  });
});
`, 15*time.Second, func(j *vantagev1.CheckJob) { j.Env = map[string]string{"USER_EMAIL": "ada@example.com"} }),
			summary: []string{"1 test passed"}, steps: 3},
		{name: "assertion fails with step, location and message", job: scriptJob(scriptHead+`test('sign in', async ({ page }) => {
  await page.goto('`+site+`');
  await test.step('greeting', async () => {
    await expect(page.locator('#msg')).toHaveText('Welcome back', { timeout: 500 });
  });
});
`, 15*time.Second, nil),
			source: SourceAssertion, ftype: AssertionFailed, screenshot: true, steps: 2,
			summary: []string{"greeting", "check.spec.ts:5:", "toHaveText", "Welcome back"}},
		{name: "secret redacted", job: scriptJob(scriptHead+`test('token', async () => {
  expect(process.env.API_TOKEN).toBe('something else');
});
`, 15*time.Second, func(j *vantagev1.CheckJob) {
			j.Env = map[string]string{"API_TOKEN": "tok-8f2a9c"}
			j.Redact = []string{"tok-8f2a9c"}
		}), source: SourceAssertion, ftype: AssertionFailed, summary: []string{"[REDACTED]"}},
		{name: "syntax error", job: scriptJob(scriptHead+"test('x', async () => {\n  await (\n});\n", 5*time.Second, nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"does not compile", "line 4, column 1"}},
		{name: "require fs", job: scriptJob(scriptHead+"const fs = require('fs');\ntest('x', async () => { fs.readFileSync('/etc/passwd'); });\n", 5*time.Second, nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"fs"}},
		{name: "infinite loop", job: scriptJob(scriptHead+"test('spin', async () => { while (true) {} });\n", 3*time.Second, nil),
			source: SourceTransport, ftype: Timeout, summary: []string{"imeout"}},
		{name: "never resolves", job: scriptJob(scriptHead+"test('wait', async () => { await new Promise(() => {}); });\n", 3*time.Second, nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"imeout", "can never settle"}},
		{name: "timer past the timeout", job: scriptJob(scriptHead+"test('sleep', async () => { await new Promise(r => setTimeout(r, 1e9)); });\n", 3*time.Second, nil),
			source: SourceTransport, ftype: Timeout, summary: []string{"imeout"}},
		{name: "huge allocation", job: scriptJob(scriptHead+"test('hog', async () => { const a = []; while (true) a.push(new Array(1e6).fill('x')); });\n", 20*time.Second, nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"of memory", "was stopped"}},
		{name: "navigation refused", job: scriptJob(scriptHead+"test('down', async ({ page }) => { await page.goto('"+closed+"'); });\n", 10*time.Second, nil),
			source: SourceTransport, ftype: ConnectionRefused, summary: []string{"ERR_CONNECTION_REFUSED", "check.spec.ts:2:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			res := probeJob(t, p, tc.job)
			took := time.Since(start)
			t.Logf("%s in %s: %s", tc.name, took.Round(time.Millisecond), res.ResultSummary)
			if tc.ftype == "" {
				wantPass(t, res)
			} else {
				wantFail(t, res, tc.source, tc.ftype)
			}
			for _, want := range tc.summary {
				if !strings.Contains(res.ResultSummary, want) {
					t.Errorf("summary %q does not contain %q", res.ResultSummary, want)
				}
			}
			if got := len(res.Screenshot) > 0; tc.screenshot && !got {
				t.Error("no screenshot of the failure")
			}
			if len(res.Screenshot) > 0 && (wire.ScreenshotType(res.Screenshot) == "" || len(res.Screenshot) > wire.MaxScreenshotBytes) {
				t.Errorf("screenshot: %q, %d bytes", wire.ScreenshotType(res.Screenshot), len(res.Screenshot))
			}
			if len(res.Steps) < tc.steps {
				t.Errorf("%d steps, want at least %d: %+v", len(res.Steps), tc.steps, res.Steps)
			}
			if limit := time.Duration(tc.job.GetTimeoutMs())*time.Millisecond + 500*time.Millisecond; took > limit {
				t.Errorf("took %s, past the timeout of %d ms", took, tc.job.GetTimeoutMs())
			}
		})
	}
}

// With private targets refused, a script's page.goto to a private address fails as
// FORBIDDEN_TARGET, saying what was refused.
func TestBrowserScriptPrivateTargetRefused(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, true))
	srv := pages(t)
	res := probeJob(t, p, scriptJob(scriptHead+"test('inside', async ({ page }) => { await page.goto('"+srv.URL+"/ok'); });\n", 10*time.Second, nil))
	wantFail(t, res, SourceTransport, ForbiddenTarget)
	if !strings.Contains(res.ResultSummary, "127.0.0.1 is a loopback address") {
		t.Errorf("summary %q does not say why", res.ResultSummary)
	}
}

// closedURL is an http URL of a local port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return "http://" + lis.Addr().String() + "/"
}
