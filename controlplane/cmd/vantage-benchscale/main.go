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
//
// Settings (environment): VANTAGE_SCALE_CHECKS (default 100000), VANTAGE_SCALE_SECONDS (the
// measured window, default 120), VANTAGE_SCALE_WARMUP (seconds between the load and the window,
// default 30), VANTAGE_SCALE_PROFILE (a file: a heap profile of the control plane at the end of
// the window, through VANTAGE_PPROF), VANTAGE_SCALE_PG (default
// postgres://postgres@127.0.0.1:5432), VANTAGE_SCALE_BIN (default bin). GOGC and GOMEMLIMIT in
// the environment reach the control plane, so their effect is measured by setting them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	replicas       int
	kill           bool // kill -9 the last replica mid-window
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

func load() (settings, error) {
	s := settings{profile: os.Getenv("VANTAGE_SCALE_PROFILE"), pg: env("VANTAGE_SCALE_PG", "postgres://postgres@127.0.0.1:5432"),
		bin: env("VANTAGE_SCALE_BIN", "bin"), gogc: env("GOGC", "100"), memlimit: env("GOMEMLIMIT", "none")}
	var errs []error
	var err error
	if s.checks, err = positive("VANTAGE_SCALE_CHECKS", "100000"); err != nil {
		errs = append(errs, err)
	}
	if s.replicas, err = positive("VANTAGE_SCALE_REPLICAS", "1"); err != nil {
		errs = append(errs, err)
	}
	switch k := env("VANTAGE_SCALE_KILL", "0"); {
	case k == "1" && s.replicas < 2:
		errs = append(errs, errors.New("VANTAGE_SCALE_KILL=1 needs VANTAGE_SCALE_REPLICAS of at least 2"))
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
	if err := psql(cfg.pg+"/postgres", "CREATE DATABASE "+db, nil); err != nil {
		return err
	}
	defer psql(cfg.pg+"/postgres", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)", nil) //nolint:errcheck // best effort
	dbURL := cfg.pg + "/" + db + "?sslmode=disable"

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
	base := map[string]string{"VANTAGE_DATABASE_URL": dbURL, "VANTAGE_SECRET_KEY": benchproc.RandKey(), "VANTAGE_NATS_URL": ns.ClientURL()}
	if err := runProc(bin, []string{"migrate"}, base); err != nil {
		return err
	}
	start := time.Now()
	if err := createChecks(dbURL, cfg.checks); err != nil {
		return err
	}
	fmt.Printf("bench-scale: %d active checks created in %.1fs (one COPY); GOGC=%s GOMEMLIMIT=%s\n",
		cfg.checks, time.Since(start).Seconds(), cfg.gogc, cfg.memlimit)

	rs, pinned, err := startReplicas(bin, cfg.replicas, base, cfg.profile != "")
	if err != nil {
		return err
	}
	defer stopAll(rs)

	drain, err := startDrain(ctx, ns.ClientURL())
	if err != nil {
		return err
	}
	defer drain()

	start = time.Now()
	if cfg.replicas == 1 {
		if err := awaitLoaded(rs[0].url(), cfg.checks, 5*time.Minute); err != nil {
			return fmt.Errorf("%w (log %s)", err, rs[0].logPath)
		}
		fmt.Printf("bench-scale: scheduler loaded %d checks %.1fs after start; warm-up %s, window %s\n",
			cfg.checks, time.Since(start).Seconds(), cfg.warmup, cfg.window)
	} else {
		if err := awaitSpread(rs, cfg.checks, 5*time.Minute); err != nil {
			return fmt.Errorf("%w (logs /tmp/vantage-benchscale-cp*.log)", err)
		}
		owned, _, _ := shardsAndChecks(rs)
		fmt.Printf("bench-scale: %d replicas (%s) own %s = %d shards (target ≤ %d each) and loaded %d checks %.1fs after start; warm-up %s, window %s\n",
			cfg.replicas, pinned, joinInts(owned), shard.Count, shard.Target(cfg.replicas), cfg.checks,
			time.Since(start).Seconds(), cfg.warmup, cfg.window)
	}
	time.Sleep(cfg.warmup)
	return measure(rs, cfg)
}

// startDrain empties the job stream every second: without agents the scheduler's jobs would
// stay there until JobMaxAge. It returns once the control plane has created the stream.
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
