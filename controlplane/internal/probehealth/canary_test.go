package probehealth

import (
	"slices"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestCanaryBroken: a region is broken when all its agents' canary rounds fail (or they call
// themselves unhealthy) while another region's pass; never when every region fails.
func TestCanaryBroken(t *testing.T) {
	t.Parallel()
	pass := func(agent string, regions ...string) store.CanaryReport {
		return store.CanaryReport{AgentID: agent, Regions: regions, Targets: 3, AgentHealthy: true}
	}
	fail := func(agent string, regions ...string) store.CanaryReport {
		r := pass(agent, regions...)
		r.Failing = 3
		r.AgentHealthy, r.AgentReason = false, "route"
		return r
	}
	skewed := func(agent string, regions ...string) store.CanaryReport {
		r := pass(agent, regions...)
		r.AgentHealthy, r.AgentReason = false, "clock"
		return r
	}
	oneDown := func(agent string, regions ...string) store.CanaryReport {
		r := pass(agent, regions...)
		r.Failing = 1
		return r
	}
	for _, tc := range []struct {
		name    string
		reports []store.CanaryReport
		want    []string
	}{
		{"nothing reported", nil, nil},
		{"every region passes", []store.CanaryReport{pass("a", "cloud:a"), pass("b", "cloud:b")}, nil},
		{"one region fails, another passes", []store.CanaryReport{fail("a", "cloud:a"), pass("b", "cloud:b")}, []string{"cloud:a"}},
		{"every region fails: the canaries' problem", []store.CanaryReport{fail("a", "cloud:a"), fail("b", "cloud:b")}, nil},
		{"a lone region has nobody to compare with", []store.CanaryReport{fail("a", "cloud:a")}, nil},
		{"one of its agents still passes", []store.CanaryReport{fail("a1", "cloud:a"), pass("a2", "cloud:a"), pass("b", "cloud:b")}, nil},
		{"a skewed clock counts as failing", []store.CanaryReport{skewed("a", "cloud:a"), pass("b", "cloud:b")}, []string{"cloud:a"}},
		{"one canary target of three down: not the location", []store.CanaryReport{oneDown("a", "cloud:a"), pass("b", "cloud:b")}, nil},
		{"an agent serving two regions breaks both", []store.CanaryReport{fail("a", "cloud:a", "cloud:c"), pass("b", "cloud:b")},
			[]string{"cloud:a", "cloud:c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CanaryBroken(tc.reports)
			var regions []string
			for r, b := range got {
				if b.Cause != CauseCanary || b.Reason == "" {
					t.Errorf("%s: cause %q reason %q", r, b.Cause, b.Reason)
				}
				regions = append(regions, r)
			}
			slices.Sort(regions)
			if !slices.Equal(regions, tc.want) {
				t.Errorf("broken = %v, want %v", regions, tc.want)
			}
		})
	}
}
