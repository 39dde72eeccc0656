package pwscript

import (
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// loopBound is how long a run stuck in a loop may take: far above its 2 s timeout, so that a
// loaded machine does not fail the test, and far below never, which a loop the timeout did not
// stop would take. How promptly the timeout ends it is BenchmarkLoopTimeout's figure.
const loopBound = 10 * time.Second

// The sandbox cases: each run ends within its time with a clear message, and the runtime
// (with its browser) goes on serving other runs.
func TestSandbox(t *testing.T) {
	srv := site(t)
	env := map[string]string{"BASE_URL": srv.URL, "TOKEN": "s3cr3t-token"}
	cases := []struct {
		name, script string
		timeout      time.Duration
		within       time.Duration // Run must return sooner than this
		message      []string
		cause        Cause
	}{
		{
			name:    "endless loop",
			script:  "test('t', async () => { for (;;) {} })",
			timeout: 2 * time.Second, within: loopBound,
			message: []string{"Test timeout of 2000ms exceeded", "without awaiting anything"}, cause: CauseTimeout,
		},
		{
			name:    "endless loop in a page callback chain",
			script:  "test('t', async ({ page }) => { await page.goto(process.env.BASE_URL + '/home.html'); await Promise.resolve().then(() => { while (true) {} }) })",
			timeout: 2 * time.Second, within: loopBound,
			message: []string{"without awaiting anything"}, cause: CauseTimeout,
		},
		{
			name:    "require of a node module",
			script:  "test('t', async () => { require('child_process').execSync('id') })",
			timeout: 5 * time.Second, within: time.Second,
			message: []string{"not supported: require('child_process')", "can import only @playwright/test"}, cause: CauseScript,
		},
		{
			name:    "dynamic import",
			script:  "test('t', async () => { await import('http') })",
			timeout: 5 * time.Second, within: time.Second,
			message: []string{"not supported: require('http')"}, cause: CauseScript,
		},
		{
			name:    "no Node globals",
			script:  "test('t', async () => { expect(typeof Buffer).toBe('undefined'); expect(typeof fetch).toBe('undefined'); expect(typeof globalThis.process.binding).toBe('function') })",
			timeout: 5 * time.Second, within: time.Second,
			message: []string{"not supported: process.binding()"}, cause: CauseScript,
		},
		{
			name:    "a promise nothing can settle",
			script:  "test('t', async ({ page }) => { await page.goto(process.env.BASE_URL + '/home.html'); await new Promise(() => {}) })",
			timeout: 10 * time.Second, within: 3 * time.Second,
			message: []string{"can never settle", "the last call was page.goto("}, cause: CauseScript,
		},
		{
			name:    "a timer beyond the deadline",
			script:  "test('t', async () => {\n  await new Promise((r) => setTimeout(r, 60000))\n})",
			timeout: 2 * time.Second, within: loopBound,
			message: []string{"Test timeout of 2000ms exceeded.", "Pending timers:", "setTimeout(…, 60000) at sandbox.spec.ts:3:"}, cause: CauseTimeout,
		},
		{
			name:    "an action beyond the deadline",
			script:  "test('t', async ({ page }) => {\n  await page.goto(process.env.BASE_URL + '/slow?ms=60000')\n})",
			timeout: 2 * time.Second, within: loopBound,
			message: []string{"page.goto: Test timeout of 2000ms exceeded.", `navigating to "http`}, cause: CauseTimeout,
		},
		{
			name:    "only the check's variables, secrets redacted",
			script:  "test('t', async ({ page }) => { expect(Object.keys(process.env)).toEqual(['BASE_URL', 'TOKEN']); console.log('token', process.env.TOKEN); await page.goto(process.env.BASE_URL + '/home.html?t=' + process.env.TOKEN); throw new Error('bad token ' + process.env.TOKEN) })",
			timeout: 5 * time.Second, within: 3 * time.Second,
			message: []string{"Error: bad token [REDACTED]"}, cause: CauseScript,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := runScript(t, "sandbox.spec.ts", "import { test, expect } from '@playwright/test'\n"+tc.script,
				Options{Env: env, Secrets: []string{"s3cr3t-token"}, Timeout: tc.timeout})
			if rep.Duration > tc.within {
				t.Errorf("the run took %s, want less than %s", rep.Duration, tc.within)
			}
			if rep.Passed || rep.Failure == nil {
				t.Fatalf("passed:\n%s", describeReport(rep))
			}
			for _, m := range tc.message {
				if !strings.Contains(rep.Failure.Message, m) {
					t.Errorf("message lacks %q:\n%s", m, describeReport(rep))
				}
			}
			if rep.Failure.Cause != tc.cause {
				t.Errorf("cause = %s, want %s", rep.Failure.Cause, tc.cause)
			}
			if all := describeReport(rep); strings.Contains(all, "s3cr3t-token") {
				t.Errorf("a secret leaked:\n%s", all)
			}
		})
	}
}

// TestSandboxKeepsServing runs a healthy script after the browser-side and JS-side
// failures above, on the same browser: nothing of a run outlives it.
func TestSandboxKeepsServing(t *testing.T) {
	srv := site(t)
	env := map[string]string{"BASE_URL": srv.URL}
	bad := runScript(t, "loop.spec.ts", "import { test } from '@playwright/test'\ntest('t', async ({ page }) => { await page.goto(process.env.BASE_URL + '/home.html'); while (true) {} })", Options{Env: env, Timeout: 2 * time.Second})
	if bad.Passed {
		t.Fatal("the endless loop passed")
	}
	good := runScript(t, "ok.spec.ts", "import { test, expect } from '@playwright/test'\ntest('t', async ({ page }) => { await page.goto(process.env.BASE_URL + '/home.html'); await expect(page).toHaveTitle('Vantage Shop') })", Options{Env: env, Timeout: 5 * time.Second})
	if !good.Passed {
		t.Fatalf("a healthy run after a runaway one failed:\n%s", describeReport(good))
	}
}

// TestSandboxHeapLimit: with a heap limit (the script worker's setting), a runaway
// allocation is interrupted with a message instead of growing until the rlimit kills it.
func TestSandboxHeapLimit(t *testing.T) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	limit := sample[0].Value.Uint64() + 200<<20
	rep := runScript(t, "alloc.spec.ts", "import { test } from '@playwright/test'\ntest('t', async () => { const keep = []; for (;;) keep.push(new Array(100000).fill('x' + keep.length)) })",
		Options{Timeout: 20 * time.Second, HeapLimit: limit})
	if rep.Duration > 15*time.Second {
		t.Errorf("the allocation was stopped only after %s", rep.Duration)
	}
	if rep.Passed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "MiB of memory and was stopped") {
		t.Fatalf("want the heap limit failure:\n%s", describeReport(rep))
	}
}
