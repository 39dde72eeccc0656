package main

import (
	"math"
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
