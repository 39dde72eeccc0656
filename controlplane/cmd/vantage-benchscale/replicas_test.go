package main

import (
	"math"
	"slices"
	"testing"
)

func TestSpread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		owned []int
		want  bool
	}{
		{"one replica owns all", []int{256}, true},
		{"one replica short of all", []int{255}, false},
		{"three at their target and under", []int{86, 86, 84}, true},
		{"a shard unowned", []int{86, 86, 83}, false},
		{"one above its target", []int{87, 85, 84}, false},
		{"two even", []int{128, 128}, true},
		{"two uneven but complete", []int{129, 127}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := spread(tc.owned); got != tc.want {
				t.Errorf("spread(%v) = %v, want %v", tc.owned, got, tc.want)
			}
		})
	}
}

func TestShares(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		published []float64
		want      []float64
		even      bool
	}{
		{"even", []float64{100, 100, 100}, []float64{1, 1, 1}, true},
		{"a quarter over is still even", []float64{125, 75}, []float64{1.25, 0.75}, true},
		{"beyond a quarter", []float64{130, 70}, []float64{1.3, 0.7}, false},
		{"one idle", []float64{150, 150, 0}, []float64{1.5, 1.5, 0}, false},
		{"none published", []float64{0, 0}, []float64{0, 0}, false},
		{"one replica", []float64{42}, []float64{1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := shares(tc.published)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("shares(%v) = %v, want %v", tc.published, got, tc.want)
				}
			}
			if e := even(got, 0.25); e != tc.even {
				t.Errorf("even(%v, 0.25) = %v, want %v", got, e, tc.even)
			}
		})
	}
}

// Merged scrapes must give the lateness of all replicas' jobs together, not of one replica's.
func TestMergeQuantile(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	zero := series{sum: map[string]float64{}, buckets: map[float64]float64{0.1: 0, 1: 0, inf: 0}}
	fast := series{sum: map[string]float64{"x": 2}, buckets: map[float64]float64{0.1: 90, 1: 90, inf: 90}}
	slow := series{sum: map[string]float64{"x": 3}, buckets: map[float64]float64{0.1: 0, 1: 10, inf: 10}}
	m := merge(fast, slow)
	if m.sum["x"] != 5 {
		t.Errorf("merged sum = %v, want 5", m.sum["x"])
	}
	if q := quantile(merge(zero, zero), m, 0.5); q != 0.1 {
		t.Errorf("p50 = %v, want 0.1", q)
	}
	if q := quantile(merge(zero, zero), m, 0.99); q != 1 {
		t.Errorf("p99 = %v, want 1 (the slow replica's bucket)", q)
	}
}

func TestPinning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		replicas, ncpu int
		taskset, want  bool
	}{
		{3, 2, true, false},
		{2, 2, true, true},
		{2, 8, false, false},
		{1, 2, true, false},
	} {
		if got, why := pinning(tc.replicas, tc.ncpu, tc.taskset); got != tc.want {
			t.Errorf("pinning(%d, %d, %v) = %v (%s), want %v", tc.replicas, tc.ncpu, tc.taskset, got, why, tc.want)
		}
	}
}

func TestReplicaCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"1", []int{1}, true},
		{"1,2,3", []int{1, 2, 3}, true},
		{"3, 1", []int{3, 1}, true},
		{"0", nil, false},
		{"1,,2", nil, false},
		{"2,2", nil, false},
		{"two", nil, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := replicaCounts(tc.in)
			if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
				t.Errorf("replicaCounts(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

// One replica count keeps the heap profile where it always was; several name each count's
// files apart, so that a run of 1,2,3 does not overwrite its own profiles.
func TestProfilePaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base              string
		replicas          int
		several           bool
		heap, cpu, idleCP string
	}{
		{"", 2, true, "", "", ""},
		{"/tmp/p", 1, false, "/tmp/p", "/tmp/p.cpu", "/tmp/p.idle-cpu"},
		{"/tmp/p", 2, true, "/tmp/p.r2", "/tmp/p.r2.cpu", "/tmp/p.r2.idle-cpu"},
	} {
		h, c, i := profilePaths(tc.base, tc.replicas, tc.several)
		if h != tc.heap || c != tc.cpu || i != tc.idleCP {
			t.Errorf("profilePaths(%q, %d, %v) = %q, %q, %q; want %q, %q, %q", tc.base, tc.replicas, tc.several, h, c, i, tc.heap, tc.cpu, tc.idleCP)
		}
	}
}
