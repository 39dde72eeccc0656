package store

import (
	"math"
	"testing"
)

// TestLatencyHistogram: every response time from 1 ms to 65 s is read back from its counter
// within LatencyErrorBound, and quantiles take the value of their nearest rank.
func TestLatencyHistogram(t *testing.T) {
	t.Parallel()
	for v := 1.0; v < 65536; v *= 1.01 {
		got := latencyMiddle(latencyBucket(v))
		if math.Abs(got-v) > LatencyErrorBound*v {
			t.Fatalf("%v ms reads %v ms: off by more than %v", v, got, LatencyErrorBound)
		}
	}
	for _, tc := range []struct {
		name string
		ms   []float64
		q    float64
		want float64 // the exact value of the nearest rank
	}{
		{"median of 1..100", seq(1, 100), 0.5, 50},
		{"p95 of 1..100", seq(1, 100), 0.95, 95},
		{"one value", []float64{420}, 0.95, 420},
		{"under 1 ms", []float64{0.2, 0.3}, 0.5, 0.5},
		{"past the last counter", []float64{100000}, 0.5, 65536},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rollup
			for _, v := range tc.ms {
				r.addResult(&ResultRow{Passing: true, ResponseTimeMs: v})
			}
			got := LatencyQuantile(r.hist[:], tc.q)
			if got == nil || math.Abs(*got-tc.want) > LatencyErrorBound*tc.want {
				t.Errorf("quantile %v: %v, want within %v of %v", tc.q, got, LatencyErrorBound, tc.want)
			}
		})
	}
	if LatencyQuantile(make([]int32, LatencyBuckets), 0.5) != nil {
		t.Error("an empty histogram has a quantile")
	}
	if lit := (&rollup{}).histLiteral(); len(lit) != 2*LatencyBuckets+1 || lit[0] != '{' {
		t.Errorf("literal %q", lit)
	}
}

func seq(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}
