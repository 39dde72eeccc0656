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

// sample is one replica's figures over the window: its scrapes and CPU seconds at the start
// and at the end (a killed replica's end is just before it was killed), how long it ran in the
// window, and its RSS.
type sample struct {
	a, b           series
	cpu0, cpu1     float64
	alive          float64
	peak, rss, hwm float64
	killed         bool
}

// measure samples the replicas over the window, prints the figures and returns them. With
// p.kill it kills the last replica half-way and reports how long the others take to own every
// shard.
func measure(rs []*replica, cfg settings, p phase) (figures, error) {
	ss := make([]sample, len(rs))
	for i, r := range rs {
		s, err := scrape(r.url())
		if err != nil {
			return figures{}, fmt.Errorf("replica %d: %w", i, err)
		}
		ss[i].a, ss[i].cpu0 = s, benchproc.CPUSeconds(r.Pid())
	}
	t0 := time.Now()
	var prof chan error
	if p.cpuProfile != "" {
		// Replica 0 is never the one killed, so its profile spans the window.
		prof = make(chan error, 1)
		secs := max(1, int(cfg.window.Seconds())-1)
		go func() {
			prof <- benchproc.FetchTo(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", rs[0].pprofBase(), secs), p.cpuProfile)
		}()
	}
	var takeover time.Duration
	killed := false
	for end := t0.Add(cfg.window); time.Now().Before(end); time.Sleep(5 * time.Second) {
		for i, r := range rs {
			if !ss[i].killed {
				rss, _ := status(r.Pid())
				ss[i].peak = max(ss[i].peak, rss)
			}
		}
		if p.kill && !killed && time.Since(t0) >= cfg.window/2 {
			killed = true
			v := len(rs) - 1
			if err := finish(rs[v], &ss[v], t0); err != nil {
				return figures{}, err
			}
			var err error
			if takeover, err = kill(rs[v], rs[:v]); err != nil {
				return figures{}, err
			}
			ss[v].killed = true
		}
	}
	for i, r := range rs {
		if !ss[i].killed {
			if err := finish(r, &ss[i], t0); err != nil {
				return figures{}, err
			}
		}
	}
	f := report(rs, ss, time.Since(t0).Seconds(), cfg, p, takeover)
	if prof != nil {
		if err := <-prof; err != nil {
			return f, fmt.Errorf("CPU profile: %w", err)
		}
		fmt.Printf("CPU profile of replica 0 over the window: %s (go tool pprof -top %s)\n", p.cpuProfile, p.cpuProfile)
	}
	if p.heapProfile != "" {
		if err := benchproc.FetchTo(rs[0].pprofBase()+"/debug/pprof/heap", p.heapProfile); err != nil {
			return f, fmt.Errorf("heap profile: %w", err)
		}
		fmt.Printf("heap profile: %s (go tool pprof -top -sample_index=inuse_space %s)\n", p.heapProfile, p.heapProfile)
	}
	return f, nil
}

// finish takes a replica's figures at the end of its window, which began at t0.
func finish(r *replica, s *sample, t0 time.Time) error {
	var err error
	if s.b, err = scrape(r.url()); err != nil {
		return fmt.Errorf("replica %d: %w", r.index, err)
	}
	s.cpu1 = benchproc.CPUSeconds(r.Pid())
	s.alive = time.Since(t0).Seconds()
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

// report prints a phase's figures as it always has, per replica and in total, and returns them
// for the closing table.
func report(rs []*replica, ss []sample, secs float64, cfg settings, p phase, takeover time.Duration) figures {
	var as, bs, live []series
	f := figures{replicas: len(rs), checks: p.checks, secs: secs, killed: p.kill, takeover: takeover, demand: demand(p.checks)}
	pubs := make([]float64, len(ss))
	const pubName = "vantage_scheduler_jobs_published_total"
	for i, s := range ss {
		as, bs = append(as, s.a), append(bs, s.b)
		if !s.killed {
			live = append(live, s.b)
		}
		f.cpu += s.cpu1 - s.cpu0
		f.alive += s.alive
		pubs[i] = s.b.sum[pubName] - s.a.sum[pubName]
		f.shards = append(f.shards, s.b.sum["vantage_scheduler_owned_shards"])
		f.rss = append(f.rss, s.rss)
	}
	a, b, now := merge(as...), merge(bs...), merge(live...)
	f.shares = shares(pubs)
	f.published = b.sum[pubName] - a.sum[pubName]
	f.p50, f.p99 = quantile(a, b, 0.5), quantile(a, b, 0.99)
	if len(rs) == 1 && p.checks > 0 {
		s := ss[0]
		mib := func(name string) float64 { return b.sum[name] / (1 << 20) }
		fmt.Printf("control plane: VmRSS %.0f MiB (highest sampled in the window %.0f MiB), VmHWM %.0f MiB; CPU %.0f%% of a core\n",
			s.rss, s.peak, s.hwm, 100*f.cpu/secs)
		fmt.Printf("Go heap: alloc %.0f MiB, inuse %.0f MiB, idle %.0f MiB (released %.0f MiB), sys %.0f MiB, next GC at %.0f MiB; stacks %.0f MiB; %0.f goroutines; %.1f GCs/min\n",
			mib("go_memstats_heap_alloc_bytes"), mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_heap_idle_bytes"),
			mib("go_memstats_heap_released_bytes"), mib("go_memstats_sys_bytes"), mib("go_memstats_next_gc_bytes"),
			mib("go_memstats_stack_inuse_bytes"), b.sum["go_goroutines"],
			60*(b.sum["go_gc_duration_seconds_count"]-a.sum["go_gc_duration_seconds_count"])/secs)
	} else {
		for i, s := range ss {
			note := ""
			if s.killed {
				note = " (killed half-way: figures up to the kill)"
			}
			fmt.Printf("replica %d (%s): %.0f shards, published %.0f jobs, %.2f of an even 1/%d split; CPU %.1fs; VmRSS %.0f MiB (highest %.0f MiB); %.1f GCs/min%s\n",
				i, coreName(rs[i].core), f.shards[i], pubs[i], f.shares[i], len(rs), s.cpu1-s.cpu0, s.rss, s.peak,
				60*(s.b.sum["go_gc_duration_seconds_count"]-s.a.sum["go_gc_duration_seconds_count"])/s.alive, note)
		}
	}
	if p.checks == 0 {
		fmt.Printf("idle (no checks): CPU %.1fs over %d replica(s) in %.0fs, %.2f%% of a core per replica\n",
			f.cpu, len(rs), secs, 100*f.coresPerReplica())
		return f
	}
	if len(rs) > 1 {
		verdict := "within 25% of even"
		if !even(f.shares, 0.25) {
			verdict = "NOT within 25% of even"
		}
		if p.kill {
			verdict += " (none expected: one replica was killed half-way)"
		}
		fmt.Printf("publishing split: %s\n", verdict)
	}
	fmt.Printf("scheduler: %.0f checks loaded, %.0f unrunnable; published %.0f jobs/s over %.0fs, lateness p50 ≤ %gs, p99 ≤ %gs; %.0f skipped late, %.0f publish errors\n",
		now.sum["vantage_scheduler_scheduled_checks"], now.sum["vantage_scheduler_unrunnable_checks"], f.published/secs, secs,
		f.p50, f.p99,
		b.sum["vantage_scheduler_jobs_skipped_total"]-a.sum["vantage_scheduler_jobs_skipped_total"],
		b.sum["vantage_scheduler_publish_errors_total"]-a.sum["vantage_scheduler_publish_errors_total"])
	fmt.Printf("ceiling: the mix's demand is %.0f jobs/s; published/demand %.3f\n", f.demand, f.published/secs/f.demand)
	if f.published > 0 {
		fmt.Printf("control-plane CPU: %.1fs over %d replica(s), %.0f µs per published job\n", f.cpu, len(rs), 1e6*f.cpu/f.published)
	}
	if p.kill {
		fmt.Printf("kill -9 of replica %d: the other %d owned all %d shards %.1fs later\n",
			len(rs)-1, len(rs)-1, shard.Count, takeover.Seconds())
	}
	return f
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
