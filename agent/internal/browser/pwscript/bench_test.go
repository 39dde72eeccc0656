package pwscript

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// benchScript is a scripted check of two page loads, the shape the benchmarks measure.
const benchScript = `import { test, expect } from '@playwright/test';
test('two pages', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();
  await page.getByRole('link', { name: 'Products' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(3);
});
`

// BenchmarkRunScript runs benchScript in a fresh tab (and browser context) per iteration;
// go-cpu-ms/op is the CPU this process (the runtime, not the browser) spends per script.
func BenchmarkRunScript(b *testing.B) {
	srv := site(b)
	prog, err := browserscript.Transform("bench.spec.ts", benchScript)
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Env: map[string]string{"BASE_URL": srv.URL}, Timeout: 30 * time.Second}
	cpu := cpuTime()
	for b.Loop() {
		tab, cancel := benchTab(b)
		rep := Run(tab, prog, opts)
		cancel()
		if !rep.Passed {
			b.Fatalf("the benchmark script failed:\n%s", describeReport(rep))
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "go-cpu-ms/op")
}

// BenchmarkRawChromedp is the ceiling for BenchmarkRunScript: the same two page loads and
// checks written directly with chromedp, with no script runtime.
func BenchmarkRawChromedp(b *testing.B) {
	srv := site(b)
	cpu := cpuTime()
	for b.Loop() {
		tab, cancel := benchTab(b)
		err := chromedp.Do(tab,
			chromedp.Navigate(srv.URL+"/home.html"),
			chromedp.WaitVisible(chromedp.CSS("h1")),
			chromedp.Click(chromedp.CSS(`a[href="/products.html"]`)),
			chromedp.WaitVisible(chromedp.CSS("li.product")),
		)
		if err == nil {
			var n int
			n, err = chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('li').length`))
			if err == nil && n != 3 {
				b.Fatalf("%d list items", n)
			}
		}
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "go-cpu-ms/op")
}

// benchTab opens a tab in a fresh browser context, as the runner does for every check.
func benchTab(b *testing.B) (context.Context, context.CancelFunc) {
	b.Helper()
	tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(tab); err != nil {
		cancel()
		b.Fatal(err)
	}
	return tab, cancel
}

// cpuTime is the user and system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFreshContext measures what a fresh browser context and page per test costs: five
// tests of one page load each (five contexts) against its baseline, the same five loads in
// one test (one context), in the same run. The ratio of the two is the price of isolation.
func BenchmarkFreshContext(b *testing.B) {
	srv := site(b)
	load := "  await page.goto(process.env.BASE_URL + '/home.html');\n  await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();\n"
	fiveTests := "import { test, expect } from '@playwright/test';\n"
	oneTest := "import { test, expect } from '@playwright/test';\ntest('five loads', async ({ page }) => {\n"
	for i := range 5 {
		fiveTests += "test('load " + string(rune('a'+i)) + "', async ({ page }) => {\n" + load + "});\n"
		oneTest += load
	}
	oneTest += "});\n"
	for _, bc := range []struct{ name, src string }{{"one-context", oneTest}, {"context-per-test", fiveTests}} {
		b.Run(bc.name, func(b *testing.B) {
			prog, err := browserscript.Transform("bench.spec.ts", bc.src)
			if err != nil {
				b.Fatal(err)
			}
			opts := Options{Env: map[string]string{"BASE_URL": srv.URL}, Timeout: 30 * time.Second}
			for b.Loop() {
				tab, cancel := benchTab(b)
				rep := Run(tab, prog, opts)
				cancel()
				if !rep.Passed {
					b.Fatalf("the benchmark script failed:\n%s", describeReport(rep))
				}
			}
		})
	}
}

// BenchmarkLoopTimeout runs a test stuck in a loop with a 2 s timeout: ns/op is how
// long the run takes to end, against the 2 s (TestSandbox only holds that it ends).
//
//	go test ./internal/browser/pwscript -run '^$' -bench LoopTimeout -benchtime 3x
func BenchmarkLoopTimeout(b *testing.B) {
	for b.Loop() {
		rep := runScript(b, "loop.spec.ts", "import { test } from '@playwright/test'\ntest('t', async () => { for (;;) {} })",
			Options{Timeout: 2 * time.Second})
		if rep.Passed || rep.Failure == nil || rep.Failure.Cause != CauseTimeout {
			b.Fatalf("the loop did not time out:\n%s", describeReport(rep))
		}
	}
}
