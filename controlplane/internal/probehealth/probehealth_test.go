package probehealth

import (
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestBroken: the rule needs enough lone failures, from enough organizations, and at least
// the share of the checks the region probed.
func TestBroken(t *testing.T) {
	t.Parallel()
	th := Thresholds{}
	th.defaults()
	for _, tc := range []struct {
		name string
		s    store.RegionFailureStats
		want bool
	}{
		{"many checks of many orgs fail only there", store.RegionFailureStats{Checks: 8, Lone: 6, Orgs: 3}, true},
		{"exactly at every threshold", store.RegionFailureStats{Checks: 10, Lone: 5, Orgs: 2}, true},
		{"too few checks", store.RegionFailureStats{Checks: 8, Lone: 4, Orgs: 3}, false},
		{"one organization (its own misconfiguration)", store.RegionFailureStats{Checks: 8, Lone: 8, Orgs: 1}, false},
		{"a small share of a busy region", store.RegionFailureStats{Checks: 100, Lone: 20, Orgs: 9}, false},
		{"nothing probed", store.RegionFailureStats{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Broken(tc.s, th); got != tc.want {
				t.Errorf("Broken(%+v) = %v, want %v", tc.s, got, tc.want)
			}
		})
	}
}
