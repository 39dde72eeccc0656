// Command vantage-benchscale is `make bench-scale`: the control plane's memory with many active
// checks. It creates VANTAGE_SCALE_CHECKS active checks in a database of its own in one COPY
// (a mix of kinds, 60 s and 300 s intervals, one to three regions, spread over a few
// organizations), starts the real control plane binary against that database and a NATS server
// of its own (in this process, so that the job stream is the run's alone and its memory is not
// the control plane's), lets it load and schedule, and prints the control plane's RSS (VmRSS
// and VmHWM), its Go heap (go_memstats_* from /metrics), its CPU, the checks its scheduler
// loaded, and the scheduler's publish rate and lateness over the measured window. No agent
// runs: the stream is purged every second, which is all an agent's acks would do to it.
//
// With VANTAGE_SCALE_REPLICAS=R (default 1) it starts R control planes on the same database and
// NATS, each on ports of its own, waits until they own the 256 shards between them with none
// above its target, and prints per replica its shards, jobs published, CPU seconds and RSS,
// its share of the publishing against an even split (1/R each; the aim is within 25%), and in
// total the publish rate against the demand, the lateness and the CPU per published job. Replica
// i is pinned to core i with taskset where there are at least R cores. With
// VANTAGE_SCALE_KILL=1 (R ≥ 2) the last replica is killed with SIGKILL half-way through the
// window and the others' /metrics are polled every 100 ms until they own every shard.
// VANTAGE_SCALE_REPLICAS may list several counts ("1,2,3"), measured one after another.
//
// Each count is then measured again idle: the same number of replicas on a second database
// with no checks, for the same warm-up and window. What they burn there is a replica's fixed
// cost (its lease, resyncs, sweeps, metrics, the runtime), and the closing table puts beside
// the CPU per published job the net figure, (CPU − idle CPU) / jobs, and the idle CPU per
// replica.
//
// Settings (environment): VANTAGE_SCALE_CHECKS (default 100000), VANTAGE_SCALE_SECONDS (the
// measured window, default 120), VANTAGE_SCALE_WARMUP (seconds between the load and the window,
// default 30), VANTAGE_SCALE_PROFILE (a file: a heap profile of replica 0 at the end of the
// window, and CPU profiles of replica 0 over the window at <file>.cpu and, idle,
// <file>.idle-cpu, through VANTAGE_PPROF; with several replica counts each count's files end
// in .r<R>), VANTAGE_SCALE_PG (default postgres://postgres@127.0.0.1:5432), VANTAGE_SCALE_BIN
// (default bin). GOGC and GOMEMLIMIT in the environment reach the control plane, so their
// effect is measured by setting them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/benchproc"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/pkg/wire"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

type settings struct {
	checks         int
	replicas       []int // each count is run in turn, with checks and idle
	kill           bool  // kill -9 the last replica mid-window
	window, warmup time.Duration
	profile, pg    string
	bin            string
	gogc, memlimit string // as the control plane gets them, for the report
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func positive(name, def string) (int, error) {
	n, err := strconv.Atoi(env(name, def))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be a positive number", name)
	}
	return n, nil
}

// replicaCounts parses VANTAGE_SCALE_REPLICAS: one count or several separated by commas
// ("1,2,3"), each positive and none twice.
func replicaCounts(v string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || slices.Contains(ns, n) {
			return nil, fmt.Errorf("VANTAGE_SCALE_REPLICAS must be positive counts separated by commas, each once (got %q)", v)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func load() (settings, error) {
	s := settings{profile: os.Getenv("VANTAGE_SCALE_PROFILE"), pg: env("VANTAGE_SCALE_PG", "postgres://postgres@127.0.0.1:5432"),
		bin: env("VANTAGE_SCALE_BIN", "bin"), gogc: env("GOGC", "100"), memlimit: env("GOMEMLIMIT", "none")}
	var errs []error
	var err error
	if s.checks, err = positive("VANTAGE_SCALE_CHECKS", "100000"); err != nil {
		errs = append(errs, err)
	}
	if s.replicas, err = replicaCounts(env("VANTAGE_SCALE_REPLICAS", "1")); err != nil {
		errs = append(errs, err)
	}
	switch k := env("VANTAGE_SCALE_KILL", "0"); {
	case k == "1" && len(s.replicas) > 0 && slices.Min(s.replicas) < 2:
		errs = append(errs, errors.New("VANTAGE_SCALE_KILL=1 needs every VANTAGE_SCALE_REPLICAS count to be at least 2"))
	case k == "1":
		s.kill = true
	case k != "0":
		errs = append(errs, errors.New("VANTAGE_SCALE_KILL must be 0 or 1"))
	}
	secs, err := positive("VANTAGE_SCALE_SECONDS", "120")
	errs = append(errs, err)
	s.window = time.Duration(secs) * time.Second
	warm, err := positive("VANTAGE_SCALE_WARMUP", "30")
	errs = append(errs, err)
	s.warmup = time.Duration(warm) * time.Second
	return s, errors.Join(errs...)
}

func run() error {
	cfg, err := load()
	if err != nil {
		return err
	}
	ctx := context.Background()
	db := "vantage_benchscale_" + strconv.Itoa(os.Getpid())
	// The idle database is migrated and holds no check: replicas on it pay only what a replica
	// costs whatever it schedules.
	for _, name := range []string{db, db + "_idle"} {
		if err := psql(cfg.pg+"/postgres", "CREATE DATABASE "+name, nil); err != nil {
			return err
		}
		defer psql(cfg.pg+"/postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)", nil) //nolint:errcheck // best effort
	}
	dbURL := cfg.pg + "/" + db + "?sslmode=disable"
	idleURL := cfg.pg + "/" + db + "_idle?sslmode=disable"

	dir, err := os.MkdirTemp("", "vantage-benchscale-nats-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ns, err := jobqueue.StartEmbedded(jobqueue.EmbeddedOptions{Port: -1, StoreDir: dir})
	if err != nil {
		return err
	}
	defer ns.Shutdown()

	bin := filepath.Join(cfg.bin, "vantage-controlplane")
	base := map[string]string{"VANTAGE_SECRET_KEY": benchproc.RandKey(), "VANTAGE_NATS_URL": ns.ClientURL()}
	if cfg.profile != "" {
		// A CPU profile spans the window, and the profiler refuses one longer than the
		// metrics listener's write timeout.
		base["VANTAGE_HTTP_WRITE_TIMEOUT"] = (cfg.window + time.Minute).String()
	}
	for _, u := range []string{dbURL, idleURL} {
		if err := runProc(bin, []string{"migrate"}, map[string]string{"VANTAGE_DATABASE_URL": u, "VANTAGE_SECRET_KEY": base["VANTAGE_SECRET_KEY"]}); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := createChecks(dbURL, cfg.checks); err != nil {
		return err
	}
	fmt.Printf("bench-scale: %d active checks created in %.1fs (one COPY); GOGC=%s GOMEMLIMIT=%s; replicas %s, each count also run idle (no checks)\n",
		cfg.checks, time.Since(start).Seconds(), cfg.gogc, cfg.memlimit, joinInts(cfg.replicas))

	d := &drain{ctx: ctx, url: ns.ClientURL()}
	defer d.end()

	var rows []row
	multi := len(cfg.replicas) > 1
	for _, n := range cfg.replicas {
		heap, cpu, idleCPU := profilePaths(cfg.profile, n, multi)
		busy, err := runPhase(bin, cfg, base, d, phase{replicas: n, dbURL: dbURL, checks: cfg.checks, kill: cfg.kill, heapProfile: heap, cpuProfile: cpu})
		if err != nil {
			return err
		}
		idle, err := runPhase(bin, cfg, base, d, phase{replicas: n, dbURL: idleURL, cpuProfile: idleCPU})
		if err != nil {
			return err
		}
		rows = append(rows, row{busy: busy, idle: idle})
	}
	printTable(os.Stdout, rows)
	return nil
}

// phase is one set of replicas measured over a window: against the checks, or idle.
type phase struct {
	replicas                int
	dbURL                   string
	checks                  int // 0: the idle database
	kill                    bool
	heapProfile, cpuProfile string // of replica 0; "" for none
}

func (p phase) name() string {
	if p.checks == 0 {
		return fmt.Sprintf("%d idle", p.replicas)
	}
	return strconv.Itoa(p.replicas)
}

// runPhase starts the phase's replicas, waits until they own the shards between them and have
// loaded their checks, lets them warm up, measures them over the window and stops them.
func runPhase(bin string, cfg settings, base map[string]string, d *drain, p phase) (figures, error) {
	envs := map[string]string{"VANTAGE_DATABASE_URL": p.dbURL}
	for k, v := range base {
		envs[k] = v
	}
	logs := "/tmp/vantage-benchscale-cp"
	if p.checks == 0 {
		logs = "/tmp/vantage-benchscale-idle-cp"
	}
	rs, pinned, err := startReplicas(bin, p.replicas, envs, cfg.profile != "", logs)
	if err != nil {
		return figures{}, err
	}
	defer stopAll(rs)
	if err := d.start(); err != nil {
		return figures{}, err
	}
	start := time.Now()
	if err := awaitSpread(rs, p.checks, 5*time.Minute); err != nil {
		return figures{}, fmt.Errorf("replicas %s: %w (logs %s*.log)", p.name(), err, logs)
	}
	owned, _, _ := shardsAndChecks(rs)
	fmt.Printf("\nbench-scale: replicas %s (%s) own %s = %d shards (target ≤ %d each) and loaded %d checks %.1fs after start; warm-up %s, window %s\n",
		p.name(), pinned, joinInts(owned), shard.Count, shard.Target(p.replicas), p.checks,
		time.Since(start).Seconds(), cfg.warmup, cfg.window)
	time.Sleep(cfg.warmup)
	return measure(rs, cfg, p)
}

// drain empties the job stream every second while the run lasts: without agents the
// scheduler's jobs would stay there until JobMaxAge. The first replicas create the stream, so
// it starts once they run.
type drain struct {
	ctx  context.Context
	url  string
	stop func() // nil until started
}

func (d *drain) start() error {
	if d.stop != nil {
		return nil
	}
	stop, err := startDrain(d.ctx, d.url)
	if err != nil {
		return err
	}
	d.stop = stop
	return nil
}

func (d *drain) end() {
	if d.stop != nil {
		d.stop()
	}
}

// startDrain empties the job stream every second. It returns once the control plane has
// created the stream.
func startDrain(ctx context.Context, url string) (func(), error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	var stream jetstream.Stream
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if stream, err = js.Stream(ctx, wire.JobStream); err == nil {
			break
		}
		if time.Now().After(deadline) {
			nc.Close()
			return nil, fmt.Errorf("stream %s not created within a minute: %w", wire.JobStream, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = stream.Purge(ctx) // a missed purge is caught up by the next
			}
		}
	}()
	return func() { cancel(); <-done; nc.Close() }, nil
}
