package evaluator

import (
	"testing"
	"time"
)

// TestStepRegional walks streaks of runs through StepRegional: degradation needs the
// confirmation period of passing runs with a failing region, is raised once, and ends with
// uptime.restored only while the check is UP.
func TestStepRegional(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	eu := []string{"cloud:eu-west-2"}
	type run struct {
		status Status
		failed []string
		at     time.Duration // after t0
		want   RegionalEffect
	}
	for _, tc := range []struct {
		name    string
		confirm time.Duration
		runs    []run
		final   bool // degraded after the last run
	}{
		{"degraded after the confirmation period, once", 20 * time.Second, []run{
			{Up, eu, 0, RegionalNone}, {Up, eu, 10 * time.Second, RegionalNone},
			{Up, eu, 20 * time.Second, RegionalDegraded}, {Up, eu, 30 * time.Second, RegionalNone},
		}, true},
		{"restored when no region fails", 0, []run{
			{Up, eu, 0, RegionalDegraded}, {Up, nil, 10 * time.Second, RegionalRestored}, {Up, nil, 20 * time.Second, RegionalNone},
		}, false},
		{"a blip shorter than the period raises nothing", 30 * time.Second, []run{
			{Up, eu, 0, RegionalNone}, {Up, nil, 10 * time.Second, RegionalNone}, {Up, eu, 20 * time.Second, RegionalNone},
			{Up, eu, 40 * time.Second, RegionalNone},
		}, false},
		{"VERIFYING keeps the streak", 20 * time.Second, []run{
			{Up, eu, 0, RegionalNone}, {Verifying, []string{"a", "b"}, 10 * time.Second, RegionalNone},
			{Up, eu, 20 * time.Second, RegionalDegraded},
		}, true},
		{"DOWN ends it silently", 0, []run{
			{Up, eu, 0, RegionalDegraded}, {Down, []string{"a", "b"}, 10 * time.Second, RegionalNone},
			{Recovering, nil, 20 * time.Second, RegionalNone}, {Up, nil, 30 * time.Second, RegionalNone},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var r Regional
			for i, rn := range tc.runs {
				var fx RegionalEffect
				r, fx = StepRegional(r, rn.status, rn.failed, t0.Add(rn.at), tc.confirm)
				if fx != rn.want {
					t.Errorf("run %d (%s, failed %v): effect %d, want %d", i, rn.status, rn.failed, fx, rn.want)
				}
			}
			if r.Degraded != tc.final {
				t.Errorf("degraded after the runs = %v, want %v", r.Degraded, tc.final)
			}
		})
	}
}
