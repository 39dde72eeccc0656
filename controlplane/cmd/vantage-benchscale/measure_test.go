package main

import (
	"math"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/pkg/check"
)

// The mix must be checks the API would accept, or the benchmark measures something no
// installation holds.
func TestMixIsValid(t *testing.T) {
	t.Parallel()
	kinds := map[check.Kind]int{}
	for i := range 40 {
		s := spec(i)
		if errs := s.Validate(); len(errs) > 0 {
			t.Fatalf("check %d (%s): %v", i, s.Kind, errs)
		}
		kinds[s.Kind]++
	}
	want := map[check.Kind]int{check.Uptime: 24, check.TCP: 8, check.DNS: 4, check.Ping: 4}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s checks among 40 = %d, want %d", k, kinds[k], n)
		}
	}
}

func TestDemand(t *testing.T) {
	t.Parallel()
	// 60 checks: blocks of ten alternate 60 s and 300 s, blocks of twenty take 1, 2, 3 regions.
	// Checks 0-19: 1 region, 20-39: 2, 40-59: 3; 0-9, 20-29, 40-49 at 60 s.
	want := 10*(1.0/60+1.0/300) + 10*(2.0/60+2.0/300) + 10*(3.0/60+3.0/300)
	if got := demand(60); math.Abs(got-want) > 1e-9 {
		t.Errorf("demand(60) = %v, want %v", got, want)
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	a := series{buckets: map[float64]float64{0.01: 50, 0.1: 90, 1: 100, inf: 100}}
	// Between a and b: 100 observations, 60 ≤ 10 ms, 98 ≤ 100 ms, 100 ≤ 1 s.
	b := series{buckets: map[float64]float64{0.01: 110, 0.1: 188, 1: 200, inf: 200}}
	for _, c := range []struct {
		q, want float64
	}{{0.5, 0.01}, {0.6, 0.01}, {0.61, 0.1}, {0.98, 0.1}, {0.99, 1}} {
		if got := quantile(a, b, c.q); got != c.want {
			t.Errorf("quantile %v = %v, want %v", c.q, got, c.want)
		}
	}
}

// The net figure takes out what the same replicas burn with no checks, per replica-second, so a
// fixed cost per replica does not show up as a cost per job.
func TestNetCPUPerJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		busy, idle figures
		gross, net float64 // µs per job
	}{
		{
			// 3 replicas × 120 s; idle they burn 6 s over 3 × 60 s, 1/30 of a core each:
			// 12 s of the 30 s is the fixed cost, 18 s over 72,000 jobs is 250 µs each.
			name:  "three replicas",
			busy:  figures{replicas: 3, secs: 120, alive: 360, cpu: 30, published: 72000},
			idle:  figures{replicas: 3, secs: 60, alive: 180, cpu: 6},
			gross: 416.67, net: 250,
		},
		{
			// The killed replica ran 60 of the 120 s: 300 replica-seconds pay 10 s idle.
			name:  "one killed half-way",
			busy:  figures{replicas: 3, secs: 120, alive: 300, cpu: 28, published: 72000, killed: true},
			idle:  figures{replicas: 3, secs: 60, alive: 180, cpu: 6},
			gross: 388.89, net: 250,
		},
		{
			name:  "idle costs nothing",
			busy:  figures{replicas: 1, secs: 120, alive: 120, cpu: 18, published: 72000},
			idle:  figures{replicas: 1, secs: 120, alive: 120, cpu: 0},
			gross: 250, net: 250,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := row{busy: tc.busy, idle: tc.idle}
			if got := 1e6 * r.gross(); math.Abs(got-tc.gross) > 0.01 {
				t.Errorf("gross = %.2f µs, want %.2f", got, tc.gross)
			}
			if got := 1e6 * r.net(); math.Abs(got-tc.net) > 0.01 {
				t.Errorf("net = %.2f µs, want %.2f", got, tc.net)
			}
		})
	}
	if n := (row{}).net(); !math.IsNaN(n) {
		t.Errorf("net with no job published = %v, want NaN", n)
	}
}

// The closing table holds one line per replica count with the gross, idle and net figures side
// by side, in the units docs/scaling.md uses.
func TestPrintTable(t *testing.T) {
	t.Parallel()
	busy := figures{replicas: 2, checks: 30000, secs: 60, alive: 120, cpu: 12, published: 36000, demand: 600,
		shards: []float64{128, 128}, shares: []float64{1.01, 0.99}, rss: []float64{82, 81}, p50: 0.001, p99: 0.025}
	idle := figures{replicas: 2, secs: 60, alive: 120, cpu: 3, rss: []float64{40, 41}}
	var b strings.Builder
	printTable(&b, []row{{busy: busy, idle: idle}})
	lines := strings.Split(b.String(), "\n")
	var line string
	for _, l := range lines {
		if strings.HasPrefix(l, "| 2 |") {
			line = l
		}
	}
	want := "| 2 | 128 + 128 | 1.01, 0.99 | 12.0 s (20 % of a core) | 333 µs | 2.5 % of a core (1.5 s) | 250 µs | 82, 81 / 40, 41 MiB | 600 / 600 jobs/s | ≤ 1 ms / ≤ 25 ms |"
	if line != want {
		t.Errorf("table line\n got %s\nwant %s\n(table:\n%s)", line, want, b.String())
	}
}
