package main

import (
	"fmt"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/benchproc"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
)

// replica is one control-plane process of the run, with its own HTTP, gRPC and metrics ports.
type replica struct {
	*benchproc.Proc
	index   int
	core    int // the core it is pinned to, or -1
	metrics string
	logPath string
}

// pinning says whether the replicas are pinned, one core each (replica i to core i mod ncpu),
// and why not when they are not: pinned replicas sharing cores would only measure the sharing,
// and a lone control plane keeps every core, as it always has in this benchmark.
func pinning(replicas, ncpu int, haveTaskset bool) (bool, string) {
	switch {
	case replicas == 1:
		return false, "one replica, not pinned"
	case !haveTaskset:
		return false, "not pinned: no taskset"
	case ncpu < replicas:
		return false, fmt.Sprintf("not pinned: %d replicas on %d cores share them", replicas, ncpu)
	default:
		return true, fmt.Sprintf("replica i pinned to core i of %d", ncpu)
	}
}

// startReplicas starts n control planes against the same database and NATS (base), each on
// ports of its own, logging to logs.log (replica 0) and logs<i>.log.
func startReplicas(bin string, n int, base map[string]string, pprof bool, logs string) ([]*replica, string, error) {
	_, err := exec.LookPath("taskset")
	pin, how := pinning(n, runtime.NumCPU(), err == nil)
	var rs []*replica
	for i := range n {
		r := &replica{index: i, core: -1, metrics: benchproc.FreeAddr(), logPath: logs + ".log"}
		if i > 0 {
			r.logPath = fmt.Sprintf("%s%d.log", logs, i)
		}
		envs := map[string]string{"VANTAGE_HTTP_ADDR": benchproc.FreeAddr(), "VANTAGE_GRPC_ADDR": benchproc.FreeAddr(), "VANTAGE_PING_ADDR": "127.0.0.1:0",
			"VANTAGE_METRICS_ADDR": r.metrics, "VANTAGE_LOG_LEVEL": "warn", "VANTAGE_PPROF": strconv.FormatBool(pprof)}
		for k, v := range base {
			envs[k] = v
		}
		name, args := bin, []string{"serve"}
		if pin {
			// taskset execs the binary, so the pid read under /proc stays the control plane's.
			r.core = i % runtime.NumCPU()
			name, args = "taskset", []string{"-c", strconv.Itoa(r.core), bin, "serve"}
		}
		r.Proc, err = benchproc.Start(name, args, envs, r.logPath)
		if err != nil {
			stopAll(rs)
			return nil, "", err
		}
		rs = append(rs, r)
	}
	return rs, how, nil
}

func stopAll(rs []*replica) {
	for _, r := range rs {
		r.Stop()
	}
}

func (r *replica) url() string { return r.pprofBase() + "/metrics" }

// pprofBase is the root of the replica's metrics listener, where VANTAGE_PPROF serves
// /debug/pprof/.
func (r *replica) pprofBase() string { return "http://" + r.metrics }

// spread reports whether every shard is owned and no replica owns more than its target, the
// state the replicas' rebalancing converges on.
func spread(owned []int) bool {
	total, target := 0, shard.Target(len(owned))
	for _, n := range owned {
		if n > target {
			return false
		}
		total += n
	}
	return total == shard.Count
}

// awaitSpread waits until the replicas own every shard between them, each within its target,
// and have loaded every check of their shards.
func awaitSpread(rs []*replica, checks int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		owned, loaded, err := shardsAndChecks(rs)
		if err == nil && spread(owned) && loaded >= checks {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replicas did not spread the shards and load %d checks within %s (owned %v, loaded %d, %v)",
				checks, within, owned, loaded, err)
		}
		time.Sleep(time.Second)
	}
}

func shardsAndChecks(rs []*replica) (owned []int, loaded int, err error) {
	for _, r := range rs {
		s, err := scrape(r.url())
		if err != nil {
			return owned, loaded, fmt.Errorf("replica %d: %w", r.index, err)
		}
		owned = append(owned, int(s.sum["vantage_scheduler_owned_shards"]))
		loaded += int(s.sum["vantage_scheduler_scheduled_checks"])
	}
	return owned, loaded, nil
}

// shares is each replica's part of the jobs published, as a multiple of an even split: 1 is
// exactly its 1/n, 1.25 a quarter more.
func shares(published []float64) []float64 {
	var total float64
	for _, p := range published {
		total += p
	}
	out := make([]float64, len(published))
	for i, p := range published {
		if total > 0 {
			out[i] = p * float64(len(published)) / total
		}
	}
	return out
}

// even reports whether every share is within tolerance (0.25: 25%) of an even split.
func even(shares []float64, tolerance float64) bool {
	for _, s := range shares {
		if math.Abs(s-1) > tolerance {
			return false
		}
	}
	return len(shares) > 0
}

// merge adds the scrapes of several replicas into one, as a single control plane would count:
// the sums and the lateness histogram's buckets.
func merge(ss ...series) series {
	m := series{sum: map[string]float64{}, buckets: map[float64]float64{}}
	for _, s := range ss {
		for k, v := range s.sum {
			m.sum[k] += v
		}
		for k, v := range s.buckets {
			m.buckets[k] += v
		}
	}
	return m
}

func coreName(core int) string {
	if core < 0 {
		return "unpinned"
	}
	return "core " + strconv.Itoa(core)
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "+")
}
