package evaluator

import (
	"slices"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// TestSlowRegions: a passing run is slow when its slow regions outweigh its fast ones under the
// check's quorum, as failing regions outweigh passing ones for a failure; failing regions take
// no part.
func TestSlowRegions(t *testing.T) {
	t.Parallel()
	a, b, c := "cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"
	for _, tc := range []struct {
		name         string
		q            check.Quorum
		passed, slow []string
		want         []string
	}{
		{"majority: two slow of three", check.QuorumMajority, []string{a, b, c}, []string{a, b}, []string{a, b}},
		{"majority: one slow of three is not slow", check.QuorumMajority, []string{a, b, c}, []string{a}, nil},
		{"majority: a tie is not slow", check.QuorumMajority, []string{a, b}, []string{a}, nil},
		{"majority: the only passing region slow", check.QuorumMajority, []string{a}, []string{a}, []string{a}},
		{"any: one slow of three", check.QuorumAny, []string{a, b, c}, []string{c}, []string{c}},
		{"all: two slow of three is not slow", check.QuorumAll, []string{a, b, c}, []string{a, b}, nil},
		{"all: every passing region slow", check.QuorumAll, []string{a, b}, []string{a, b}, []string{a, b}},
		{"count 2: two slow", check.QuorumCount(2), []string{a, b, c}, []string{b, c}, []string{b, c}},
		{"count 2: one slow", check.QuorumCount(2), []string{a, b, c}, []string{b}, nil},
		{"none slow", check.QuorumAny, []string{a, b, c}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := slowRegions(tc.q, tc.passed, tc.slow); !slices.Equal(got, tc.want) {
				t.Errorf("slowRegions(%s, passed %v, slow %v) = %v, want %v", tc.q, tc.passed, tc.slow, got, tc.want)
			}
		})
	}
}

// TestSlower: an attempt is slow only above a threshold that is set.
func TestSlower(t *testing.T) {
	t.Parallel()
	ms := int32(500)
	for _, tc := range []struct {
		threshold *int32
		rt        float64
		want      bool
	}{{nil, 60000, false}, {&ms, 500, false}, {&ms, 500.5, true}, {&ms, 12, false}} {
		if got := slower(tc.threshold, tc.rt); got != tc.want {
			t.Errorf("slower(%v, %v) = %v, want %v", tc.threshold, tc.rt, got, tc.want)
		}
	}
}

// TestStepSlow walks streaks of runs through StepSlow, row by row of its table: slowness needs
// the confirmation period of slow runs while UP, is raised once, ends with uptime.restored when
// a run is fast again while UP, and silently when the check goes DOWN (uptime.down takes over).
func TestStepSlow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	slow := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	type run struct {
		status Status
		slow   []string // slowRegions of the run: nil when it is fast
		at     time.Duration
		want   RegionalEffect
	}
	for _, tc := range []struct {
		name    string
		confirm time.Duration
		runs    []run
		final   bool
	}{
		{"UP slow for the confirmation period: degraded once", 20 * time.Second, []run{
			{Up, slow, 0, RegionalNone}, {Up, slow, 10 * time.Second, RegionalNone},
			{Up, slow, 20 * time.Second, RegionalDegraded}, {Up, slow, 30 * time.Second, RegionalNone},
		}, true},
		{"UP fast again: restored once", 0, []run{
			{Up, slow, 0, RegionalDegraded}, {Up, nil, 10 * time.Second, RegionalRestored}, {Up, nil, 20 * time.Second, RegionalNone},
		}, false},
		{"a slow blip shorter than the period raises nothing", 30 * time.Second, []run{
			{Up, slow, 0, RegionalNone}, {Up, nil, 10 * time.Second, RegionalNone}, {Up, slow, 20 * time.Second, RegionalNone},
			{Up, slow, 40 * time.Second, RegionalNone},
		}, false},
		{"VERIFYING keeps the streak", 20 * time.Second, []run{
			{Up, slow, 0, RegionalNone}, {Verifying, nil, 10 * time.Second, RegionalNone},
			{Up, slow, 20 * time.Second, RegionalDegraded},
		}, true},
		{"DOWN ends it silently, and UP after it raises nothing", 0, []run{
			{Up, slow, 0, RegionalDegraded}, {Down, nil, 10 * time.Second, RegionalNone},
			{Recovering, slow, 20 * time.Second, RegionalNone}, {Up, nil, 30 * time.Second, RegionalNone},
		}, false},
		{"slow again after DOWN starts a new streak", 0, []run{
			{Up, slow, 0, RegionalDegraded}, {Down, nil, 10 * time.Second, RegionalNone},
			{Up, slow, 20 * time.Second, RegionalDegraded},
		}, true},
		{"PENDING changes nothing", 0, []run{{Pending, slow, 0, RegionalNone}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var r Regional
			for i, rn := range tc.runs {
				var fx RegionalEffect
				r, fx = StepSlow(r, rn.status, rn.slow, t0.Add(rn.at), tc.confirm)
				if fx != rn.want {
					t.Errorf("run %d (%s, slow %v): effect %d, want %d", i, rn.status, rn.slow, fx, rn.want)
				}
			}
			if r.Degraded != tc.final {
				t.Errorf("degraded after the runs = %v, want %v", r.Degraded, tc.final)
			}
		})
	}
}

// TestSlownessNeverFails: a run whose every region is slow still passes; the status machine
// sees only pass or fail, so slowness can never make a check DOWN.
func TestSlownessNeverFails(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	threshold := int32(100)
	c := &store.PipelineCheck{RegionQuorum: string(check.QuorumAny), DegradedResponseTimeMs: &threshold}
	s := State{Status: Up}
	for i := range 10 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		v := verdictOf(c, &store.Run{ScheduledAt: at, PassedRegions: regions, FailedRegions: []string{}, SlowRegions: regions})
		var fx []Effect
		s, fx = Step(s, v, at, Policy{})
		if s.Status != Up || len(fx) != 0 {
			t.Fatalf("run %d, all regions slow: state %s, effects %v; want UP and none", i, s.Status, fx)
		}
	}
}
