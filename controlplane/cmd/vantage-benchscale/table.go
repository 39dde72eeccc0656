package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// figures is what one phase measured over its window, summed over its replicas.
type figures struct {
	replicas  int
	checks    int     // 0: the idle phase
	secs      float64 // the window
	alive     float64 // the replicas' seconds in the window, summed: a killed one stops counting
	cpu       float64 // the replicas' CPU seconds in the window, summed
	published float64 // jobs
	demand    float64 // jobs/s
	shards    []float64
	shares    []float64
	rss       []float64 // MiB, at the end of each one's window
	p50, p99  float64
	killed    bool
	takeover  time.Duration
}

// coresPerReplica is the CPU a replica burnt on average, in cores (CPU seconds per second).
func (f figures) coresPerReplica() float64 {
	if f.alive == 0 {
		return math.NaN()
	}
	return f.cpu / f.alive
}

// row is one replica count measured twice: against the checks, and idle.
type row struct{ busy, idle figures }

// gross is the replicas' CPU per published job, in seconds: what bench-scale always printed.
func (r row) gross() float64 {
	if r.busy.published == 0 {
		return math.NaN()
	}
	return r.busy.cpu / r.busy.published
}

// net is the CPU per published job once what the same replicas burn with no checks is taken
// out: the idle cost per replica-second times the busy replicas' seconds in the window (a
// killed replica pays it only until it is killed). What is left is the part that scales with
// jobs; what was taken out is a fixed cost each replica pays whatever it schedules.
func (r row) net() float64 {
	if r.busy.published == 0 {
		return math.NaN()
	}
	return (r.busy.cpu - r.idle.coresPerReplica()*r.busy.alive) / r.busy.published
}

// printTable prints the rows as the table docs/scaling.md keeps, one line per replica count.
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "\n| replicas | shards | each one's share of the jobs (1 = even) | CPU, all replicas | CPU per job | idle CPU per replica | net CPU per job | VmRSS each / idle | published / demand | lateness p50 / p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		b, i := r.busy, r.idle
		name := strconv.Itoa(b.replicas)
		if b.killed {
			name += fmt.Sprintf(", one killed at %.0f s (others own all shards %.1f s later)", b.secs/2, b.takeover.Seconds())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f s (%.0f %% of a core) | %.0f µs | %.1f %% of a core (%.1f s) | %.0f µs | %s / %s MiB | %.0f / %.0f jobs/s | ≤ %s / ≤ %s |\n",
			name, join(b.shards, "%.0f", " + "), join(b.shares, "%.2f", ", "), b.cpu, 100*b.cpu/b.secs,
			1e6*r.gross(), 100*i.coresPerReplica(), i.coresPerReplica()*b.secs, 1e6*r.net(),
			join(b.rss, "%.0f", ", "), join(i.rss, "%.0f", ", "), b.published/b.secs, b.demand,
			seconds(b.p50), seconds(b.p99))
	}
	fmt.Fprintln(w, "(idle: the same replica count on a database with no checks, measured for the same window right after; its CPU per replica is over the window; net = (CPU − idle CPU per replica-second × replica-seconds) / jobs.)")
}

func join(vs []float64, format, sep string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf(format, v)
	}
	return strings.Join(parts, sep)
}

// seconds writes a lateness bucket's bound as the docs do: ms below a second.
func seconds(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s*1000, 'g', -1, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'g', -1, 64) + " s"
}

// profilePaths are where a replica count's profiles go, from VANTAGE_SCALE_PROFILE: the heap
// profile at the end of the window and the CPU profiles over it of replica 0 with checks and
// idle. With several replica counts each count's files carry it (".r2").
func profilePaths(base string, replicas int, several bool) (heap, cpu, idleCPU string) {
	if base == "" {
		return "", "", ""
	}
	if several {
		base += ".r" + strconv.Itoa(replicas)
	}
	return base, base + ".cpu", base + ".idle-cpu"
}
