package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/benchproc"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
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

// sample is one replica's figures over the window: its scrapes and CPU seconds at the start
// and at the end (a killed replica's end is just before it was killed), and its RSS.
type sample struct {
	a, b           series
	cpu0, cpu1     float64
	peak, rss, hwm float64
	killed         bool
}

// measure samples the replicas over the window and prints the figures. With cfg.kill it kills
// the last replica half-way and reports how long the others take to own every shard.
func measure(rs []*replica, cfg settings) error {
	ss := make([]sample, len(rs))
	for i, r := range rs {
		s, err := scrape(r.url())
		if err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
		ss[i].a, ss[i].cpu0 = s, benchproc.CPUSeconds(r.Pid())
	}
	t0 := time.Now()
	var takeover time.Duration
	killed := false
	for end := t0.Add(cfg.window); time.Now().Before(end); time.Sleep(5 * time.Second) {
		for i, r := range rs {
			if !ss[i].killed {
				rss, _ := status(r.Pid())
				ss[i].peak = max(ss[i].peak, rss)
			}
		}
		if cfg.kill && !killed && time.Since(t0) >= cfg.window/2 {
			killed = true
			v := len(rs) - 1
			if err := finish(rs[v], &ss[v]); err != nil {
				return err
			}
			var err error
			if takeover, err = kill(rs[v], rs[:v]); err != nil {
				return err
			}
			ss[v].killed = true
		}
	}
	for i, r := range rs {
		if !ss[i].killed {
			if err := finish(r, &ss[i]); err != nil {
				return err
			}
		}
	}
	secs := time.Since(t0).Seconds()
	report(rs, ss, secs, cfg, takeover)
	if cfg.profile != "" {
		if err := benchproc.FetchTo(strings.TrimSuffix(rs[0].url(), "/metrics")+"/debug/pprof/heap", cfg.profile); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		fmt.Printf("heap profile: %s (go tool pprof -top -sample_index=inuse_space %s)\n", cfg.profile, cfg.profile)
	}
	return nil
}

// finish takes a replica's figures at the end of its window.
func finish(r *replica, s *sample) error {
	var err error
	if s.b, err = scrape(r.url()); err != nil {
		return fmt.Errorf("replica %d: %w", r.index, err)
	}
	s.cpu1 = benchproc.CPUSeconds(r.Pid())
	s.rss, s.hwm = status(r.Pid())
	s.peak = max(s.peak, s.rss)
	return nil
}

// kill sends SIGKILL to victim and polls the others' /metrics every 100 ms until they own
// every shard between them, returning how long that took from the kill.
func kill(victim *replica, others []*replica) (time.Duration, error) {
	if err := victim.Cmd.Process.Kill(); err != nil {
		return 0, fmt.Errorf("kill replica %d: %w", victim.index, err)
	}
	t := time.Now()
	_ = victim.Cmd.Wait() // reaped, so that its pid is not read again
	for deadline := t.Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		owned, _, err := shardsAndChecks(others)
		total := 0
		for _, n := range owned {
			total += n
		}
		if err == nil && total == shard.Count {
			return time.Since(t), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("after replica %d was killed the others owned %v shards for 2m, not %d (%v)",
				victim.index, owned, shard.Count, err)
		}
	}
}

func report(rs []*replica, ss []sample, secs float64, cfg settings, takeover time.Duration) {
	var as, bs, live []series
	var cpu float64
	pubs := make([]float64, len(ss))
	const pubName = "vantage_scheduler_jobs_published_total"
	for i, s := range ss {
		as, bs = append(as, s.a), append(bs, s.b)
		if !s.killed {
			live = append(live, s.b)
		}
		cpu += s.cpu1 - s.cpu0
		pubs[i] = s.b.sum[pubName] - s.a.sum[pubName]
	}
	a, b, now := merge(as...), merge(bs...), merge(live...)
	if len(rs) == 1 {
		s := ss[0]
		mib := func(name string) float64 { return b.sum[name] / (1 << 20) }
		fmt.Printf("control plane: VmRSS %.0f MiB (highest sampled in the window %.0f MiB), VmHWM %.0f MiB; CPU %.0f%% of a core\n",
			s.rss, s.peak, s.hwm, 100*cpu/secs)
		fmt.Printf("Go heap: alloc %.0f MiB, inuse %.0f MiB, idle %.0f MiB (released %.0f MiB), sys %.0f MiB, next GC at %.0f MiB; stacks %.0f MiB; %0.f goroutines; %.1f GCs/min\n",
			mib("go_memstats_heap_alloc_bytes"), mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_heap_idle_bytes"),
			mib("go_memstats_heap_released_bytes"), mib("go_memstats_sys_bytes"), mib("go_memstats_next_gc_bytes"),
			mib("go_memstats_stack_inuse_bytes"), b.sum["go_goroutines"],
			60*(b.sum["go_gc_duration_seconds_count"]-a.sum["go_gc_duration_seconds_count"])/secs)
	} else {
		sh := shares(pubs)
		for i, s := range ss {
			note := ""
			if s.killed {
				note = " (killed half-way: figures up to the kill)"
			}
			fmt.Printf("replica %d (%s): %.0f shards, published %.0f jobs, %.2f of an even 1/%d split; CPU %.1fs; VmRSS %.0f MiB (highest %.0f MiB)%s\n",
				i, coreName(rs[i].core), s.b.sum["vantage_scheduler_owned_shards"], pubs[i], sh[i], len(rs),
				s.cpu1-s.cpu0, s.rss, s.peak, note)
		}
		verdict := "within 25% of even"
		if !even(sh, 0.25) {
			verdict = "NOT within 25% of even"
		}
		if cfg.kill {
			verdict += " (none expected: one replica was killed half-way)"
		}
		fmt.Printf("publishing split: %s\n", verdict)
	}
	published := b.sum[pubName] - a.sum[pubName]
	fmt.Printf("scheduler: %.0f checks loaded, %.0f unrunnable; published %.0f jobs/s over %.0fs, lateness p50 ≤ %gs, p99 ≤ %gs; %.0f skipped late, %.0f publish errors\n",
		now.sum["vantage_scheduler_scheduled_checks"], now.sum["vantage_scheduler_unrunnable_checks"], published/secs, secs,
		quantile(a, b, 0.5), quantile(a, b, 0.99),
		b.sum["vantage_scheduler_jobs_skipped_total"]-a.sum["vantage_scheduler_jobs_skipped_total"],
		b.sum["vantage_scheduler_publish_errors_total"]-a.sum["vantage_scheduler_publish_errors_total"])
	d := demand(cfg.checks)
	fmt.Printf("ceiling: the mix's demand is %.0f jobs/s; published/demand %.3f\n", d, published/secs/d)
	if published > 0 {
		fmt.Printf("control-plane CPU: %.1fs over %d replica(s), %.0f µs per published job\n", cpu, len(rs), 1e6*cpu/published)
	}
	if cfg.kill {
		fmt.Printf("kill -9 of replica %d: the other %d owned all %d shards %.1fs later\n",
			len(rs)-1, len(rs)-1, shard.Count, takeover.Seconds())
	}
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
