package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// series is one scrape of /metrics: each metric's value, summed over its labels, and the
// lateness histogram's cumulative buckets by upper bound.
type series struct {
	sum     map[string]float64
	buckets map[float64]float64
}

func scrape(url string) (series, error) {
	s := series{sum: map[string]float64{}, buckets: map[float64]float64{}}
	resp, err := http.Get(url) //nolint:noctx,gosec // the local control plane's metrics
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if sp < 0 || err != nil {
			continue
		}
		name, labels, _ := strings.Cut(line[:sp], "{")
		s.sum[name] += v
		if name == "vantage_scheduler_publish_lateness_seconds_bucket" {
			_, le, _ := strings.Cut(labels, `le="`)
			le, _, _ = strings.Cut(le, `"`)
			if b, err := strconv.ParseFloat(le, 64); err == nil {
				s.buckets[b] = v
			}
		}
	}
	return s, sc.Err()
}

// quantile of the lateness observed between two scrapes, as the upper bound of the bucket it
// falls in (the histogram's resolution).
func quantile(a, b series, q float64) float64 {
	bounds := make([]float64, 0, len(b.buckets))
	for le := range b.buckets {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	total := b.buckets[math.Inf(1)] - a.buckets[math.Inf(1)]
	for _, le := range bounds {
		if b.buckets[le]-a.buckets[le] >= q*total {
			return le
		}
	}
	return math.NaN()
}

func awaitLoaded(url string, checks int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		s, err := scrape(url)
		if err == nil && int(s.sum["vantage_scheduler_scheduled_checks"]) >= checks {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the scheduler did not load %d checks within %s (last: %.0f, %v)",
				checks, within, s.sum["vantage_scheduler_scheduled_checks"], err)
		}
		time.Sleep(time.Second)
	}
}

// measure samples the control plane over the window and prints the figures.
func measure(pid int, metricsURL string, cfg settings) error {
	a, err := scrape(metricsURL)
	if err != nil {
		return err
	}
	cpu0, t0 := cpuSeconds(pid), time.Now()
	var peak float64
	for end := t0.Add(cfg.window); time.Now().Before(end); time.Sleep(5 * time.Second) {
		rss, _ := status(pid)
		peak = max(peak, rss)
	}
	b, err := scrape(metricsURL)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	cpu := (cpuSeconds(pid) - cpu0) / secs
	rss, hwm := status(pid)
	mib := func(name string) float64 { return b.sum[name] / (1 << 20) }
	fmt.Printf("control plane: VmRSS %.0f MiB (highest sampled in the window %.0f MiB), VmHWM %.0f MiB; CPU %.0f%% of a core\n",
		rss, max(peak, rss), hwm, 100*cpu)
	fmt.Printf("Go heap: alloc %.0f MiB, inuse %.0f MiB, idle %.0f MiB (released %.0f MiB), sys %.0f MiB, next GC at %.0f MiB; stacks %.0f MiB; %0.f goroutines; %.1f GCs/min\n",
		mib("go_memstats_heap_alloc_bytes"), mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_heap_idle_bytes"),
		mib("go_memstats_heap_released_bytes"), mib("go_memstats_sys_bytes"), mib("go_memstats_next_gc_bytes"),
		mib("go_memstats_stack_inuse_bytes"), b.sum["go_goroutines"],
		60*(b.sum["go_gc_duration_seconds_count"]-a.sum["go_gc_duration_seconds_count"])/secs)
	published := b.sum["vantage_scheduler_jobs_published_total"] - a.sum["vantage_scheduler_jobs_published_total"]
	fmt.Printf("scheduler: %.0f checks loaded, %.0f unrunnable; published %.0f jobs/s over %.0fs, lateness p50 ≤ %gs, p99 ≤ %gs; %.0f skipped late, %.0f publish errors\n",
		b.sum["vantage_scheduler_scheduled_checks"], b.sum["vantage_scheduler_unrunnable_checks"], published/secs, secs,
		quantile(a, b, 0.5), quantile(a, b, 0.99),
		b.sum["vantage_scheduler_jobs_skipped_total"]-a.sum["vantage_scheduler_jobs_skipped_total"],
		b.sum["vantage_scheduler_publish_errors_total"]-a.sum["vantage_scheduler_publish_errors_total"])
	d := demand(cfg.checks)
	fmt.Printf("ceiling: the mix's demand is %.0f jobs/s; published/demand %.3f\n", d, published/secs/d)
	if cfg.profile != "" {
		if err := fetchTo(strings.TrimSuffix(metricsURL, "/metrics")+"/debug/pprof/heap", cfg.profile); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		fmt.Printf("heap profile: %s (go tool pprof -top -sample_index=inuse_space %s)\n", cfg.profile, cfg.profile)
	}
	return nil
}

// demand is the jobs per second the mix of spec asks for: the ceiling of the publish rate.
func demand(n int) float64 {
	var d float64
	for i := range n {
		s := spec(i)
		d += float64(len(s.TestRegions)) / float64(s.TestInterval)
	}
	return d
}

// status reads VmRSS and VmHWM of pid, in MiB.
func status(pid int) (rss, hwm float64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

// cpuSeconds is pid's user and system time (/proc/<pid>/stat, fields 14 and 15).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, field 2, may hold spaces; the fields after it are counted from ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

func fetchTo(url, path string) error {
	resp, err := http.Get(url) //nolint:noctx,gosec // the local control plane's profiler
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path) //nolint:gosec // the path the benchmark was given
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type proc struct{ cmd *exec.Cmd }

// startProc starts bin with this process's environment (GOGC and GOMEMLIMIT among it) and
// envs, its output going to logPath.
func startProc(bin string, args []string, envs map[string]string, logPath string) (*proc, error) {
	cmd := exec.Command(bin, args...) //nolint:gosec // the benchmark runs the binary it was pointed at
	cmd.Env = os.Environ()
	for k, v := range envs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	f, err := os.Create(logPath) //nolint:gosec // a fixed log path of the benchmark
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return &proc{cmd: cmd}, nil
}

func runProc(bin string, args []string, envs map[string]string) error {
	cmd := exec.Command(bin, args...) //nolint:gosec // the benchmark runs the binary it was pointed at
	cmd.Env = os.Environ()
	for k, v := range envs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, out)
	}
	return nil
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// psql runs SQL through the psql client, with stdin as its input when given (COPY … FROM
// STDIN); the benchmark has no database driver of its own.
func psql(url, sql string, stdin io.Reader) error {
	cmd := exec.Command("psql", "-qtAX", "-v", "ON_ERROR_STOP=1", url, "-c", sql) //nolint:gosec // the benchmark's own SQL
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("psql: %w: %s", err, out)
	}
	return nil
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer l.Close()
	return l.Addr().String()
}

func randKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
