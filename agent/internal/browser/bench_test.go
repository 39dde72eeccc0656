package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// benchDuration is how long each measurement runs (VANTAGE_BENCH_SECONDS, default 15).
func benchDuration() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("VANTAGE_BENCH_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 15 * time.Second
}

// benchSite is the local site the benchmark checks: a small page with a stylesheet, a script
// and an image, and a second page it links to.
func benchSite(b *testing.B) *httptest.Server {
	b.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Bench</title><link rel="stylesheet" href="/style.css"></head>
			<body><h1>Bench shop</h1><img src="/logo.svg" alt="logo"><a href="/next">Next page</a>
			<ul>`+strings.Repeat(`<li class="item">item</li>`, 50)+`</ul>
			<script src="/app.js"></script></body></html>`)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Next</title></head><body><h1>Second page</h1></body></html>`)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `body{font-family:sans-serif} .item{color:#333}`)
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.body.insertAdjacentHTML('beforeend', '<p id="ready">ready</p>')`)
	})
	mux.HandleFunc("/logo.svg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv
}

// benchScript is the scripted check of the benchmark: two page loads.
func benchScript(url string) string {
	return `import { test, expect } from '@playwright/test';
test('two pages', async ({ page }) => {
  await page.goto('` + url + `/');
  await expect(page.getByRole('heading', { name: 'Bench shop' })).toBeVisible();
  await page.getByRole('link', { name: 'Next page' }).click();
  await expect(page).toHaveTitle('Next');
});
`
}

// cpu is CPU time used so far, in seconds: by this process (the agent's side), by the script
// workers it reaped, and by every process of the browser's process group (renderers included).
type cpu struct{ agent, workers, browser float64 }

func (c cpu) total() float64 { return c.agent + c.workers + c.browser }

func (c cpu) minus(d cpu) cpu {
	return cpu{c.agent - d.agent, c.workers - d.workers, c.browser - d.browser}
}

func cpuSeconds(b *Browser) cpu {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	children := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	b.mu.Lock()
	pgid := b.inst.proc.pid()
	b.mu.Unlock()
	// The browser is a child too, but it is reaped only when it exits: RUSAGE_CHILDREN holds
	// the reaped script workers.
	return cpu{agent: self, workers: children, browser: groupCPU(pgid)}
}

// groupCPU sums utime+stime of the live processes of process group pgid, in seconds.
func groupCPU(pgid int) float64 {
	entries, _ := os.ReadDir("/proc")
	tick := 100.0 // USER_HZ on Linux
	var total float64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(f) > 12 {
			u, _ := strconv.ParseFloat(f[11], 64)
			s, _ := strconv.ParseFloat(f[12], 64)
			total += (u + s) / tick
		}
	}
	return total
}

// measure runs check on workers goroutines for d and reports checks per minute, CPU seconds
// per check and the browser's memory per running check.
func measure(b *testing.B, br *Browser, workers int, d time.Duration, check func(ctx context.Context, worker int) error) (perMin float64, perCheck cpu, mibPerTab float64) {
	b.Helper()
	time.Sleep(time.Second) // let closed tabs go
	idle, _ := br.Memory()
	var done, failed atomic.Int64
	var peak atomic.Int64
	stop := time.Now().Add(d)
	cpu0 := cpuSeconds(br)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := check(ctx, w)
				cancel()
				if err != nil {
					if failed.Add(1) <= 3 {
						b.Logf("check failed: %v", err)
					}
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(stop) {
			if m, err := br.Memory(); err == nil && m > peak.Load() {
				peak.Store(m)
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	wg.Wait()
	elapsed := time.Since(start)
	used := cpuSeconds(br).minus(cpu0)
	n := done.Load()
	if n == 0 {
		b.Fatalf("no check succeeded (%d failed)", failed.Load())
	}
	if f := failed.Load(); f > 0 {
		b.Errorf("%d of %d checks failed", f, f+n)
	}
	per := cpu{used.agent / float64(n), used.workers / float64(n), used.browser / float64(n)}
	return float64(n) / elapsed.Minutes(), per, float64(peak.Load()-idle) / float64(workers) / (1 << 20)
}

// BenchmarkBrowser measures the browser checks on this machine against local pages, each
// kind with its ceiling measured in the same run: the same page loads done the cheapest way
// chromedp can, in long-lived tabs of one shared context (no isolation, no new tab, no DOM
// read), which no browser check can beat. Run it with -benchtime=1x (`make bench-browser`).
func BenchmarkBrowser(b *testing.B) {
	d := benchDuration()
	site := benchSite(b)
	br := startBrowser(b, Config{Concurrency: runtime.NumCPU()})
	workers := br.Concurrency()

	ceiling := func(loads int) float64 {
		tabs := make([]context.Context, workers)
		for i := range tabs {
			tab, cancel := chromedp.NewContext(br.inst.root)
			defer cancel() // closed before the checks are measured: their memory is theirs
			if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
				b.Fatal(err)
			}
			tabs[i] = tab
		}
		perMin, _, _ := measure(b, br, workers, d, func(_ context.Context, w int) error {
			tab := tabs[w]
			if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/")); err != nil {
				return err
			}
			if loads == 2 {
				return chromedp.Do(tab, chromedp.Navigate(site.URL+"/next"))
			}
			return nil
		})
		return perMin
	}

	b.Run("url", func(b *testing.B) {
		ceil := ceiling(1)
		perMin, cpu, mib := measure(b, br, workers, d, func(ctx context.Context, _ int) error {
			p, err := br.Visit(ctx, VisitRequest{URL: site.URL + "/"}, nil)
			if err == nil && (p.Status != 200 || !strings.Contains(p.HTML, `id="ready"`)) {
				err = fmt.Errorf("page %d %q", p.Status, p.LoadError)
			}
			return err
		})
		b.ReportMetric(perMin, "checks/min")
		b.ReportMetric(cpu.total(), "cpu-s/check")
		b.ReportMetric(cpu.agent, "agent-cpu-s/check")
		b.ReportMetric(cpu.workers, "worker-cpu-s/check")
		b.ReportMetric(cpu.browser, "browser-cpu-s/check")
		b.ReportMetric(mib, "MiB/tab")
		b.ReportMetric(ceil, "ceiling-loads/min")
		b.ReportMetric(perMin/ceil, "ratio-to-ceiling")
	})
	b.Run("script", func(b *testing.B) {
		ceil := ceiling(2)
		script := benchScript(site.URL)
		perMin, cpu, mib := measure(b, br, workers, d, func(ctx context.Context, _ int) error {
			run, err := br.RunScript(ctx, ScriptRequest{Source: script})
			if err == nil && (run.Report == nil || !run.Report.Passed) {
				err = fmt.Errorf("script failed: %s %s", run.Message, summaryOf(run))
			}
			return err
		})
		b.ReportMetric(perMin, "checks/min")
		b.ReportMetric(cpu.total(), "cpu-s/check")
		b.ReportMetric(cpu.agent, "agent-cpu-s/check")
		b.ReportMetric(cpu.workers, "worker-cpu-s/check")
		b.ReportMetric(cpu.browser, "browser-cpu-s/check")
		b.ReportMetric(mib, "MiB/tab")
		b.ReportMetric(ceil, "ceiling-checks/min")
		b.ReportMetric(perMin/ceil, "ratio-to-ceiling")
	})
}

func summaryOf(run *ScriptRun) string {
	if run.Report == nil {
		return ""
	}
	return run.Report.Summary
}
