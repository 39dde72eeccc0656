package evaluator

import (
	"fmt"
	"testing"

	"github.com/vantagehq/vantage/pkg/check"
)

// TestRunFailsQuorum: every quorum flips exactly at its threshold, over runs of three regions
// (and runs where some regions stayed silent).
func TestRunFailsQuorum(t *testing.T) {
	t.Parallel()
	regions := func(n int) []string {
		r := make([]string, n)
		for i := range r {
			r[i] = fmt.Sprintf("cloud:r%d", i)
		}
		return r
	}
	for _, tc := range []struct {
		quorum         check.Quorum
		passed, failed int
		want           bool
	}{
		{check.QuorumMajority, 3, 0, false},
		{check.QuorumMajority, 2, 1, false},
		{check.QuorumMajority, 1, 2, true},
		{check.QuorumMajority, 0, 3, true},
		{check.QuorumMajority, 1, 1, false}, // a tie passes (one region silent)
		{check.QuorumMajority, 0, 1, true},  // only failing reports, two silent
		{"", 1, 2, true},                    // a Spec without Defaults: the majority
		{check.QuorumAny, 3, 0, false},
		{check.QuorumAny, 2, 1, true},
		{check.QuorumAny, 0, 3, true},
		{check.QuorumAll, 1, 2, false},
		{check.QuorumAll, 0, 3, true},
		{check.QuorumAll, 0, 2, true}, // every reporting region failed, one silent
		{check.QuorumAll, 3, 0, false},
		{check.QuorumCount(2), 2, 1, false},
		{check.QuorumCount(2), 1, 2, true},
		{check.QuorumCount(2), 0, 3, true},
		{check.QuorumCount(2), 0, 1, false}, // only one region reported: two never reached
		{check.QuorumCount(1), 2, 1, true},
		{check.QuorumCount(3), 1, 2, false},
		{check.QuorumCount(3), 0, 3, true},
		{"bogus", 1, 2, true}, // an unknown stored value judges as the majority
		{"bogus", 2, 1, false},
	} {
		t.Run(fmt.Sprintf("%s/%dpass/%dfail", tc.quorum, tc.passed, tc.failed), func(t *testing.T) {
			t.Parallel()
			if got := runFails(tc.quorum, regions(tc.passed), regions(tc.failed)); got != tc.want {
				t.Errorf("runFails(%q, %d passed, %d failed) = %v, want %v", tc.quorum, tc.passed, tc.failed, got, tc.want)
			}
		})
	}
}
