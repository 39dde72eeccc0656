package evaluator

import (
	"testing"
	"time"
)

// TestStepHold walks the hold-off rule row by row (docs/detection.md "Hold-off").
func TestStepHold(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	const hold = 8 * time.Second
	for _, tc := range []struct {
		name string
		in   HoldInput
		want HoldDecision
	}{
		{"a passing run is never held", HoldInput{Fails: false, FailedRegions: 1, Canaries: true}, Judge},
		{"two regions confirm the failure: never held", HoldInput{Fails: true, FailedRegions: 2, Canaries: true}, Judge},
		{"three regions confirm it", HoldInput{Fails: true, FailedRegions: 3, Canaries: true}, Judge},
		{"no region sends canaries: nothing to wait for", HoldInput{Fails: true, FailedRegions: 1}, Judge},
		{"one region with canaries: the hold begins", HoldInput{Fails: true, FailedRegions: 1, Canaries: true, Now: t0}, Hold},
		{"one region, counted from its first result: no round since yet", HoldInput{Fails: true, FailedRegions: 1, Canaries: true,
			HeldSince: t0, CanaryAt: t0.Add(-time.Second), Now: t0.Add(time.Second)}, Hold},
		{"one region, a round came since its first result: judged at first look", HoldInput{Fails: true, FailedRegions: 1,
			Canaries: true, HeldSince: t0, CanaryAt: t0.Add(time.Second), Now: t0.Add(time.Second)}, JudgeAfterCanary},
		{"no canaries anywhere, counted from its first result: judged", HoldInput{Fails: true, FailedRegions: 1, HeldSince: t0,
			Now: t0.Add(time.Second)}, Judge},
		{"held, no canary round since: still held", HoldInput{Fails: true, FailedRegions: 1, Canaries: true, Waiting: true, HeldSince: t0,
			CanaryAt: t0.Add(-time.Second), Now: t0.Add(3 * time.Second)}, Hold},
		{"held, the region's canaries reported since: judged", HoldInput{Fails: true, FailedRegions: 1, Canaries: true, Waiting: true, HeldSince: t0,
			CanaryAt: t0.Add(2 * time.Second), Now: t0.Add(2 * time.Second)}, JudgeAfterCanary},
		{"held, a canary round at the very instant the hold began does not count", HoldInput{Fails: true, FailedRegions: 1,
			Canaries: true, Waiting: true, HeldSince: t0, CanaryAt: t0, Now: t0.Add(time.Second)}, Hold},
		{"held the longest wait without a canary round: judged as it is", HoldInput{Fails: true, FailedRegions: 1, Canaries: true,
			Waiting: true, HeldSince: t0, CanaryAt: t0.Add(-time.Second), Now: t0.Add(hold)}, JudgeAfterTimeout},
		{"held, the region's canaries went silent meanwhile: waits out the bound", HoldInput{Fails: true, FailedRegions: 1,
			Canaries: false, Waiting: true, HeldSince: t0, Now: t0.Add(time.Second)}, Hold},
		{"held, a second region failed since: judged at once", HoldInput{Fails: true, FailedRegions: 2, Canaries: true,
			Waiting: true, HeldSince: t0, Now: t0.Add(time.Second)}, Judge},
		{"held, now passing: judged at once", HoldInput{Fails: false, FailedRegions: 1, Canaries: true, Waiting: true, HeldSince: t0,
			Now: t0.Add(time.Second)}, Judge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			in.HoldOff = hold
			if got := StepHold(in); got != tc.want {
				t.Errorf("StepHold(%+v) = %d, want %d", in, got, tc.want)
			}
		})
	}
}
