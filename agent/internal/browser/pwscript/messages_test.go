package pwscript

import (
	"strings"
	"testing"
	"time"
)

// TestTimeoutMessages pins the failure messages of timeouts to Playwright's: the call log
// says what was awaited, and a test timeout names the configured timeout, not the run's
// internal deadline.
func TestTimeoutMessages(t *testing.T) {
	t.Parallel()
	srv := site(t)
	cases := []struct {
		name, body string
		opts       Options
		want       []string
		status     Status
	}{
		{
			name:   "action timeout",
			body:   `await page.getByRole('button', { name: 'Add to cart' }).click({ timeout: 500 });`,
			want:   []string{"locator.click: Timeout 500ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Add to cart' })"},
			status: StatusFailed,
		},
		{
			name:   "test timeout names the configured timeout",
			body:   `await page.getByRole('button', { name: 'Add to cart' }).click();`,
			opts:   Options{Timeout: 4 * time.Second, TestTimeout: 5 * time.Second},
			want:   []string{"Test timeout of 5000ms exceeded.", "locator.click: Test timeout of 5000ms exceeded.\nCall log:\n  - waiting for getByRole('button', { name: 'Add to cart' })"},
			status: StatusTimedOut,
		},
		{
			name:   "the check's timeout, not the deadline",
			body:   `await page.getByText('Never there').click();`,
			opts:   Options{Timeout: 3 * time.Second, TestTimeout: 2500 * time.Millisecond},
			want:   []string{"Test timeout of 2500ms exceeded.", "Call log:\n  - waiting for getByText('Never there')"},
			status: StatusTimedOut,
		},
		{
			name:   "test.setTimeout",
			body:   `test.setTimeout(1500); await page.getByText('Never there').click();`,
			opts:   Options{Timeout: 5 * time.Second},
			want:   []string{"Test timeout of 1500ms exceeded.", "Call log:\n  - waiting for getByText('Never there')"},
			status: StatusTimedOut,
		},
		{
			name:   "assertion timeout",
			body:   `await expect(page.getByRole('button', { name: 'Add to cart' })).toBeVisible({ timeout: 300 });`,
			want:   []string{"Timeout: 300ms", "Call log:\n  - Expect \"toBeVisible\" with timeout 300ms\n  - waiting for getByRole('button', { name: 'Add to cart' })"},
			status: StatusFailed,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := runScript(t, "msg.spec.ts", `
import { test, expect } from '@playwright/test';
test('t', async ({ page }) => {
  await page.goto('`+srv.URL+`/home.html');
  `+c.body+`
});`, c.opts)
			if rep.Passed || rep.Failure == nil {
				t.Fatalf("passed:\n%s", describeReport(rep))
			}
			for _, w := range c.want {
				if !strings.Contains(rep.Failure.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, rep.Failure.Message)
				}
			}
			if !strings.HasPrefix(rep.Failure.Location, "msg.spec.ts:5:") {
				t.Errorf("location = %q, want line 5", rep.Failure.Location)
			}
			if got := rep.Tests[0].Status; got != c.status {
				t.Errorf("status = %s, want %s", got, c.status)
			}
		})
	}
}
