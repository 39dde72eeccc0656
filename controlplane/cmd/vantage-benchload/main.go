// Command vantage-benchload is `make bench-load`: the whole pipeline under load on this
// machine. It starts the real binaries with their default settings (one control plane, one
// agent, the machine's PostgreSQL and NATS), local HTTP, TCP and DNS targets, creates checks
// through the API and measures, for each kind and each level of demand (probes/s): runs
// stored per second, on time (started within 1s of their due time) or not, lateness p50/p99,
// stored and skipped runs against the runs due, CPU-seconds per probe of each process (from
// /proc), their RSS, and the same probes made by a bare Go loop in the same run (the ceiling),
// as ratios. After the levels it runs each kind at twice its saturation point (overload): the
// highest rate of stored runs its levels reached.
//
// Settings (environment): VANTAGE_LOAD_LEVELS (probes/s, default "1000,5000,10000"),
// VANTAGE_LOAD_KINDS (default "http,tcp,dns"), VANTAGE_LOAD_SECONDS (measured window per
// level, default 20), VANTAGE_LOAD_INTERVAL (the checks' test_interval in seconds, set below
// the API's minimum as the tests do, default 10), VANTAGE_LOAD_OVERLOAD (default true),
// VANTAGE_LOAD_PG (default postgres://postgres@127.0.0.1:5432), VANTAGE_LOAD_NATS (default
// nats://127.0.0.1:4222), VANTAGE_LOAD_BIN (directory of the binaries, default bin),
// VANTAGE_LOAD_PROFILE (a directory: when set, each level's window also takes CPU profiles of
// the control plane and the agent, through VANTAGE_PPROF, and PostgreSQL's busiest statements
// when pg_stat_statements is loaded).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/miekg/dns"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/benchproc"
	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == serveTargetsArg {
		if err := serveTargets(); err != nil {
			fmt.Fprintln(os.Stderr, "bench-load targets:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-load:", err)
		os.Exit(1)
	}
}

type settings struct {
	levels   []int
	kinds    []string
	window   time.Duration
	interval int
	overload bool
	pg, nats string
	bin      string
	profile  string // directory of profiles; "" takes none
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func load() (settings, error) {
	s := settings{kinds: strings.Split(env("VANTAGE_LOAD_KINDS", "http,tcp,dns"), ","),
		pg: env("VANTAGE_LOAD_PG", "postgres://postgres@127.0.0.1:5432"), nats: env("VANTAGE_LOAD_NATS", "nats://127.0.0.1:4222"),
		bin: env("VANTAGE_LOAD_BIN", "bin"), overload: env("VANTAGE_LOAD_OVERLOAD", "true") == "true",
		profile: os.Getenv("VANTAGE_LOAD_PROFILE")}
	for _, l := range strings.Split(env("VANTAGE_LOAD_LEVELS", "1000,5000,10000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil || n <= 0 {
			return s, fmt.Errorf("VANTAGE_LOAD_LEVELS: %q is not a positive number", l)
		}
		s.levels = append(s.levels, n)
	}
	secs, err := strconv.Atoi(env("VANTAGE_LOAD_SECONDS", "20"))
	if err != nil || secs <= 0 {
		return s, errors.New("VANTAGE_LOAD_SECONDS must be a positive number")
	}
	s.window = time.Duration(secs) * time.Second
	if s.interval, err = strconv.Atoi(env("VANTAGE_LOAD_INTERVAL", "10")); err != nil || s.interval <= 0 {
		return s, errors.New("VANTAGE_LOAD_INTERVAL must be a positive number")
	}
	return s, nil
}

// regions: each measured level serves its own region, so that jobs left over from a level
// (in the stream until they expire) never load the next.
var regions = check.Regions

func run() error {
	cfg, err := load()
	if err != nil {
		return err
	}
	tg, err := startTargets()
	if err != nil {
		return err
	}
	defer tg.close()
	db := "vantage_benchload_" + strconv.Itoa(os.Getpid())
	if err := psql(cfg.pg+"/postgres", "CREATE DATABASE "+db); err != nil {
		return err
	}
	defer psql(cfg.pg+"/postgres", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") //nolint:errcheck // best effort
	dbURL := cfg.pg + "/" + db + "?sslmode=disable"
	nc, err := nats.Connect(cfg.nats)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer nc.Close()

	if cfg.profile != "" {
		if err := os.MkdirAll(cfg.profile, 0o750); err != nil {
			return err
		}
	}
	profiling := strconv.FormatBool(cfg.profile != "")
	token, agentToken := "vtg_load_"+randHex(16), randHex(16)
	httpAddr, grpcAddr, cpMetrics, agMetrics := benchproc.FreeAddr(), benchproc.FreeAddr(), benchproc.FreeAddr(), benchproc.FreeAddr()
	cp, err := benchproc.Start(filepath.Join(cfg.bin, "vantage-controlplane"), []string{"serve"}, map[string]string{
		"VANTAGE_DATABASE_URL": dbURL, "VANTAGE_SECRET_KEY": benchproc.RandKey(), "VANTAGE_BOOTSTRAP_TOKEN": token,
		"VANTAGE_HTTP_ADDR": httpAddr, "VANTAGE_GRPC_ADDR": grpcAddr, "VANTAGE_PING_ADDR": "127.0.0.1:0",
		"VANTAGE_METRICS_ADDR": cpMetrics, "VANTAGE_AGENT_TOKEN": agentToken, "VANTAGE_NATS_URL": cfg.nats,
		"VANTAGE_LOG_LEVEL": "warn", "VANTAGE_PPROF": profiling}, "/tmp/vantage-benchload-cp.log")
	if err != nil {
		return err
	}
	defer cp.Stop()
	api := &apiClient{base: "http://" + httpAddr, token: token, c: &http.Client{Timeout: 30 * time.Second}}
	if err := waitOK(api.base+"/readyz", time.Minute); err != nil {
		return fmt.Errorf("control plane: %w (log /tmp/vantage-benchload-cp.log)", err)
	}
	// One agent serving every region, with its default settings.
	ag, err := benchproc.Start(filepath.Join(cfg.bin, "vantage-agent"), nil, map[string]string{
		"VANTAGE_NATS_URL": cfg.nats, "VANTAGE_CONTROLPLANE_ADDR": grpcAddr, "VANTAGE_AGENT_TOKEN": agentToken,
		"VANTAGE_REGIONS": strings.Join(regions, ","), "VANTAGE_HTTP_ADDR": "127.0.0.1:0", "VANTAGE_METRICS_ADDR": agMetrics,
		"VANTAGE_BROWSER_PATH": "none", "VANTAGE_LOG_LEVEL": "warn", "VANTAGE_PPROF": profiling}, "/tmp/vantage-benchload-agent.log")
	if err != nil {
		return err
	}
	defer ag.Stop()
	time.Sleep(3 * time.Second) // the agent registers and sets its consumers up

	fmt.Printf("bench-load: %d cores, interval %ds, window %s; control plane, agent, PostgreSQL, NATS, targets and the ceiling loop share the machine\n",
		numCPU(), cfg.interval, cfg.window)
	fmt.Printf("%-5s %8s %9s %9s %8s %8s %8s %8s %9s %9s %9s %9s %8s %8s %9s %9s\n", "kind", "demand/s", "stored/s", "ontime/s",
		"p50 ms", "p99 ms", "stored%", "skipped%", "cp µs/pr", "ag µs/pr", "pg µs/pr", "nats µs/pr", "cp MiB", "ag MiB", "ceil/s", "ontime/ceil")
	b := &bench{cfg: cfg, api: api, nc: nc, db: dbURL, tg: tg, cp: cp, ag: ag, cpMetrics: cpMetrics, agMetrics: agMetrics}
	if cfg.profile != "" {
		b.pgStatements = psql(dbURL, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT count(*) FROM pg_stat_statements") == nil
		if !b.pgStatements {
			fmt.Println("bench-load: pg_stat_statements is not loaded (shared_preload_libraries): no PostgreSQL statement profile")
		}
	}
	for _, kind := range cfg.kinds {
		ceiling, ceilCPU := b.ceiling(kind)
		// The saturation point is the highest rate of stored runs a level reached: past it,
		// more demand is shed, not stored.
		peak, peakOnTime := 0.0, 0.0
		for _, level := range cfg.levels {
			r, err := b.level(kind, level)
			if err != nil {
				return err
			}
			r.print(ceiling, ceilCPU)
			peak, peakOnTime = max(peak, r.stored), max(peakOnTime, r.onTime)
		}
		if cfg.overload && peak > 0 {
			r, err := b.level(kind, int(2*peak))
			if err != nil {
				return err
			}
			r.print(ceiling, ceilCPU)
			fmt.Printf("      %s at 2× its saturation point (%.0f/s stored): %.0f/s stored = %.0f%% of it; %.0f/s on time = %.0f%% of the best on-time rate (%.0f/s)\n",
				kind, peak, r.stored, 100*r.stored/peak, r.onTime, 100*r.onTime/max(peakOnTime, 1), peakOnTime)
		}
		fmt.Printf("      ceiling (bare Go loop, 64 goroutines): %s %.0f probes/s, %.0f µs CPU per probe\n", kind, ceiling, ceilCPU*1e6)
	}
	return nil
}

type bench struct {
	cfg    settings
	api    *apiClient
	nc     *nats.Conn
	db     string
	tg     *targets
	cp, ag *benchproc.Proc
	region int
	// cpMetrics and agMetrics are the processes' metrics listeners (/metrics, and with
	// VANTAGE_PPROF /debug/pprof/); pgStatements: pg_stat_statements can be read.
	cpMetrics, agMetrics string
	pgStatements         bool
}

type result struct {
	kind                      string
	demand                    int
	stored, onTime            float64 // per second
	p50, p99                  float64 // ms
	storedPct, skippedPct     float64
	cpCPU, agCPU, pgCPU, nCPU float64 // seconds per probe
	cpRSS, agRSS              float64 // MiB
}

func (r result) print(ceiling, ceilCPU float64) {
	fmt.Printf("%-5s %8d %9.0f %9.0f %8.1f %8.1f %7.1f%% %7.1f%% %9.0f %9.0f %9.0f %9.0f %8.0f %8.0f %9.0f %9.2f\n", r.kind, r.demand,
		r.stored, r.onTime, r.p50, r.p99, r.storedPct, r.skippedPct, r.cpCPU*1e6, r.agCPU*1e6, r.pgCPU*1e6, r.nCPU*1e6,
		r.cpRSS, r.agRSS, ceiling, r.onTime/ceiling)
	if ceilCPU > 0 && r.cpCPU+r.agCPU > 0 {
		fmt.Printf("      CPU per probe: control plane + agent %.0f µs = %.1f× the bare loop's %.0f µs\n",
			(r.cpCPU+r.agCPU)*1e6, (r.cpCPU+r.agCPU)/ceilCPU, ceilCPU*1e6)
	}
}

// level creates demand×interval checks of kind in a fresh region and measures a window.
func (b *bench) level(kind string, demand int) (result, error) {
	region := regions[b.region%len(regions)]
	b.region++
	n := demand * b.cfg.interval
	ids, err := b.createChecks(kind, region, n)
	if err != nil {
		return result{}, err
	}
	// The API's minimum interval is 30s; the tests and this benchmark set a shorter one in SQL
	// and tell the scheduler, as the API does after a change.
	if err := updateChecks(b.db, fmt.Sprintf("test_interval = %d", b.cfg.interval), region); err != nil {
		return result{}, err
	}
	for _, id := range ids {
		if err := scheduler.Notify(b.nc, id); err != nil {
			return result{}, err
		}
	}
	_ = b.nc.Flush()
	// The scheduler takes the changes in over seconds (tens of seconds for 100,000 checks):
	// the window starts once it publishes the level's demand, and one whole interval later.
	b.awaitRhythm(region, demand, 3*time.Minute)
	time.Sleep(time.Duration(b.cfg.interval)*time.Second + 2*time.Second)
	prof := b.startProfiles(kind, demand)
	cpu0 := b.cpuNow()
	t0 := time.Now()
	time.Sleep(b.cfg.window)
	t1 := time.Now()
	cpu1 := b.cpuNow()
	prof.wait()
	cpRSS, agRSS := rssMiB(b.cp.Pid()), rssMiB(b.ag.Pid())
	// Pause the level's checks, then let the runs of the window finish and be stored.
	if err := updateChecks(b.db, "paused = true", region); err != nil {
		return result{}, err
	}
	for _, id := range ids {
		_ = scheduler.Notify(b.nc, id)
	}
	// Then every job of the region's queue is run, shed or expired, and reported: wait until
	// the queue is empty (at most two minutes), and for the last results to be stored.
	b.drain(region, 2*time.Minute)
	time.Sleep(5 * time.Second)

	due := 0
	for _, id := range ids {
		due += dueIn(id, time.Duration(b.cfg.interval)*time.Second, t0, t1)
	}
	// A run's due time is its job id's UUIDv7 timestamp.
	dueMs := `(('x' || substr(replace(job_id::text, '-', ''), 1, 12))::bit(48)::bigint)`
	q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE dispatched_at - to_timestamp(%[1]s / 1000.0) <= interval '1 second'),
		coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM dispatched_at - to_timestamp(%[1]s / 1000.0))), 0) * 1000,
		coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM dispatched_at - to_timestamp(%[1]s / 1000.0))), 0) * 1000
		FROM check_results WHERE region = '%[2]s' AND attempt_number = 1 AND %[1]s >= %[3]d AND %[1]s < %[4]d`,
		dueMs, region, t0.UnixMilli(), t1.UnixMilli())
	out, err := psqlOut(b.db, q)
	if err != nil {
		return result{}, err
	}
	f := strings.Split(strings.TrimSpace(out), "|")
	if len(f) != 4 {
		return result{}, fmt.Errorf("unexpected %q", out)
	}
	stored, _ := strconv.ParseFloat(f[0], 64)
	onTime, _ := strconv.ParseFloat(f[1], 64)
	p50, _ := strconv.ParseFloat(f[2], 64)
	p99, _ := strconv.ParseFloat(f[3], 64)
	sk, err := psqlOut(b.db, fmt.Sprintf(`SELECT count(*) FROM skipped_runs WHERE region = '%s' AND scheduled_at >= to_timestamp(%d / 1000.0) AND scheduled_at < to_timestamp(%d / 1000.0)`,
		region, t0.UnixMilli(), t1.UnixMilli()))
	if err != nil {
		return result{}, err
	}
	skipped, _ := strconv.ParseFloat(strings.TrimSpace(sk), 64)
	secs := t1.Sub(t0).Seconds()
	per := func(d float64) float64 {
		if stored == 0 {
			return 0
		}
		return d / stored
	}
	return result{kind: kind, demand: demand, stored: stored / secs, onTime: onTime / secs, p50: p50, p99: p99,
		storedPct: 100 * stored / float64(max(due, 1)), skippedPct: 100 * skipped / float64(max(due, 1)),
		cpCPU: per(cpu1.cp - cpu0.cp), agCPU: per(cpu1.ag - cpu0.ag), pgCPU: per(cpu1.pg - cpu0.pg), nCPU: per(cpu1.nats - cpu0.nats),
		cpRSS: cpRSS, agRSS: agRSS}, nil
}

// awaitRhythm waits until the scheduler publishes region's jobs at 95% of demand per second
// (vantage_scheduler_jobs_published_total over 2 s), at most within.
func (b *bench) awaitRhythm(region string, demand int, within time.Duration) {
	published := func() float64 {
		resp, err := http.Get("http://" + b.cpMetrics + "/metrics") //nolint:noctx,gosec // the local control plane's metrics
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		prefix := `vantage_scheduler_jobs_published_total{region="` + region + `"} `
		for _, l := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(l, prefix); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return f
			}
		}
		return 0
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		a := published()
		time.Sleep(2 * time.Second)
		if z := published(); a >= 0 && (z-a)/2 >= 0.95*float64(demand) {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "bench-load: the scheduler did not reach %d jobs/s for %s within %s\n", demand, region, within)
}

// drain waits until the job stream holds no job of region (acked jobs leave the work queue),
// at most within.
func (b *bench) drain(region string, within time.Duration) {
	subject := wire.JobSubject(region)
	js, err := jetstream.New(b.nc)
	if err != nil {
		return
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := js.Stream(ctx, wire.JobStream)
		var left uint64
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = st.Info(ctx, jetstream.WithSubjectFilter(subject)); err == nil {
				left = info.State.Subjects[subject]
			}
		}
		cancel()
		if err == nil && left == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	fmt.Fprintf(os.Stderr, "bench-load: the queue of %s still held jobs after %s\n", region, within)
}

// updateChecks sets columns of the checks of a region, locking them in id order as the
// evaluator does (a bulk UPDATE in physical order deadlocks with ingest), and not their keys:
// ingest's rows that reference the checks take key-share locks on them.
func updateChecks(db, set, region string) error {
	return psql(db, fmt.Sprintf(`UPDATE checks SET %s WHERE id IN (SELECT id FROM checks WHERE test_regions = ARRAY['%s'] ORDER BY id FOR NO KEY UPDATE)`, set, region))
}

// dueIn counts the due times of a check's regular schedule in [t0, t1).
func dueIn(id uuid.UUID, interval time.Duration, t0, t1 time.Time) int {
	last, ok := rungrid.LastDue(id, interval, time.Time{}, t1.Add(-time.Millisecond))
	n := 0
	for ok && !last.Before(t0) {
		n++
		last = last.Add(-interval)
	}
	return n
}

func (b *bench) createChecks(kind, region string, n int) ([]uuid.UUID, error) {
	body := func(i int) (string, map[string]any) {
		common := map[string]any{"name": fmt.Sprintf("load %s %d", kind, i), "test_regions": []string{region}, "timeout": 5000,
			"confirmation_period_seconds": 0, "recovery_period_seconds": 0, "reminder_alert_interval_minutes": -1}
		switch kind {
		case "tcp":
			common["tcp_hostname"], common["tcp_port"] = "127.0.0.1", b.tg.TCPPort
			return "/v1/checks/tcp", common
		case "dns":
			common["dns_domain"], common["dns_record_type"], common["dns_resolver"], common["dns_protocol"] = "load.example.", "A", b.tg.DNSAddr, "UDP"
			return "/v1/checks/dns", common
		}
		common["url"] = b.tg.HTTPURL
		return "/v1/checks", common
	}
	ids := make([]uuid.UUID, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				path, bd := body(i)
				id, err := b.api.create(path, bd)
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	return ids, firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// cpuSample is the CPU seconds used so far by the processes of the pipeline.
type cpuSample struct{ cp, ag, pg, nats float64 }

func (b *bench) cpuNow() cpuSample {
	s := cpuSample{cp: benchproc.CPUSeconds(b.cp.Pid()), ag: benchproc.CPUSeconds(b.ag.Pid())}
	// PostgreSQL and NATS are the machine's: every process of theirs counts (other users of
	// them on the machine count too, so these are upper bounds).
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		switch strings.TrimSpace(string(comm)) {
		case "postgres":
			s.pg += benchproc.CPUSeconds(pid)
		case "nats-server":
			s.nats += benchproc.CPUSeconds(pid)
		}
	}
	return s
}

func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// ceiling makes the kind's probe against the same target in a bare loop for 5s (64
// goroutines, a new connection per probe as the agent makes) and returns probes/s and CPU
// seconds per probe of this process, which serves no target (they run in their own process).
func (b *bench) ceiling(kind string) (float64, float64) {
	probe := func() error {
		switch kind {
		case "tcp":
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.tg.TCPPort), 5*time.Second)
			if err == nil {
				c.Close()
			}
			return err
		case "dns":
			m := new(dns.Msg)
			m.SetQuestion("load.example.", dns.TypeA)
			_, err := dns.Exchange(m, b.tg.DNSAddr)
			return err
		}
		tr := &http.Transport{DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(b.tg.HTTPURL)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		tr.CloseIdleConnections()
		return err
	}
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cpu0 := benchproc.CPUSeconds(os.Getpid())
	start := time.Now()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if probe() == nil {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	cpu := benchproc.CPUSeconds(os.Getpid()) - cpu0
	if n.Load() == 0 {
		return 0, 0
	}
	return float64(n.Load()) / secs, cpu / float64(n.Load())
}

// targets are the local HTTP, TCP and DNS servers the checks probe. They run in a process of
// their own (this binary, re-executed with serveTargetsArg), so that the CPU this process
// measures for the ceiling loop is the loop's alone, as the agent's CPU is the agent's alone.
type targets struct {
	HTTPURL string `json:"http_url"`
	TCPPort int    `json:"tcp_port"`
	DNSAddr string `json:"dns_addr"`
	proc    *exec.Cmd
}

// serveTargetsArg is the argument that makes this binary the targets' process.
const serveTargetsArg = "serve-targets"

func (t *targets) close() {
	_ = t.proc.Process.Signal(syscall.SIGTERM)
	_ = t.proc.Wait()
}

// startTargets starts the targets' process and reads their addresses from its first line.
func startTargets() (*targets, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, serveTargetsArg) //nolint:gosec // this binary, re-executed
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the targets' process: %w", err)
	}
	t := &targets{proc: cmd}
	if err := json.NewDecoder(out).Decode(t); err != nil {
		t.close()
		return nil, fmt.Errorf("the targets' process gave no addresses: %w", err)
	}
	return t, nil
}

// serveTargets is the targets' process: it serves HTTP, TCP and DNS on loopback, prints their
// addresses as one JSON line and serves until SIGTERM or SIGINT.
func serveTargets() error {
	t := &targets{}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(hl) //nolint:errcheck // ends with the process
	t.HTTPURL = "http://" + hl.Addr().String() + "/"
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.TCPPort = tl.Addr().(*net.TCPAddr).Port
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ds := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) == 1 {
			rr, _ := dns.NewRR(r.Question[0].Name + " 60 IN A 192.0.2.1")
			m.Answer = append(m.Answer, rr)
		}
		_ = w.WriteMsg(m)
	})}
	go ds.ActivateAndServe() //nolint:errcheck // ends with the process
	t.DNSAddr = pc.LocalAddr().String()
	if err := json.NewEncoder(os.Stdout).Encode(t); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	return nil
}

type apiClient struct {
	base, token string
	c           *http.Client
}

func (a *apiClient) create(path string, body map[string]any) (uuid.UUID, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.c.Do(req)
	if err != nil {
		return uuid.Nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			ID uuid.UUID `json:"id"`
		} `json:"result"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return uuid.Nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return uuid.Nil, err
	}
	return out.Result.ID, nil
}

func waitOK(u string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(u) //nolint:noctx,gosec // the local control plane's readiness
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s", u, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// psql runs SQL through the psql client (the benchmark has no database driver of its own).
func psql(url, sql string) error {
	_, err := psqlOut(url, sql)
	return err
}

func psqlOut(url, sql string) (string, error) {
	out, err := exec.Command("psql", "-qtAX", url, "-c", sql).CombinedOutput() //nolint:gosec // the benchmark's own SQL
	if err != nil {
		return "", fmt.Errorf("psql: %v: %s", err, out)
	}
	return string(out), nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(strings.Count(string(b), "processor\t:"), 1)
}

// profiles are the profiles of one level's window being taken.
type profiles struct {
	wg   sync.WaitGroup
	done func()
}

func (p *profiles) wait() {
	p.wg.Wait()
	if p.done != nil {
		p.done()
	}
}

// startProfiles takes, when VANTAGE_LOAD_PROFILE is set, CPU profiles of the control plane and
// the agent over the level's window, and resets PostgreSQL's statement statistics so that
// wait() writes the window's busiest statements.
func (b *bench) startProfiles(kind string, demand int) *profiles {
	p := &profiles{}
	if b.cfg.profile == "" {
		return p
	}
	base := filepath.Join(b.cfg.profile, fmt.Sprintf("%s-%d", kind, demand))
	secs := max(int(b.cfg.window.Seconds())-1, 1)
	for name, addr := range map[string]string{"controlplane": b.cpMetrics, "agent": b.agMetrics} {
		p.wg.Go(func() {
			if err := benchproc.FetchTo(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), base+"-"+name+".pprof"); err != nil {
				fmt.Fprintln(os.Stderr, "bench-load: profile of the", name+":", err)
			}
		})
	}
	if b.pgStatements {
		_ = psql(b.db, "SELECT pg_stat_statements_reset()")
		p.done = func() {
			out, err := psqlOut(b.db, `SELECT round(total_exec_time::numeric, 1) || ' ms | ' || calls || ' calls | ' || rows || ' rows | ' ||
				regexp_replace(left(query, 160), '\s+', ' ', 'g') FROM pg_stat_statements
				WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				ORDER BY total_exec_time DESC LIMIT 25`)
			if err == nil {
				err = os.WriteFile(base+"-postgres.txt", []byte(out), 0o600)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench-load: PostgreSQL statements:", err)
			}
		}
	}
	return p
}
