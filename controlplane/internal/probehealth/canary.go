package probehealth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// BrokenRegion is why a region is judged broken: the cause (CauseCanary, CauseChecks) and
// a sentence for people.
type BrokenRegion struct{ Cause, Reason string }

// canaryFails reports whether an agent's canary round says its location is broken: the
// agent judged itself unhealthy (no resolver, no route, a skewed clock), or more than half of
// its canary targets failed (one target down is the target's problem; most of them down is
// the location's).
func canaryFails(r store.CanaryReport) bool {
	return !r.AgentHealthy || (r.Targets > 0 && 2*r.Failing > r.Targets)
}

// CanaryBroken is the canary rule over the agents' recent rounds (one per agent): a region
// is broken when every agent that reported for it failed its round while some agent of
// another region passed its own. When every region fails, the canaries (or the network they
// share) are the problem, and nothing is marked.
func CanaryBroken(reports []store.CanaryReport) map[string]BrokenRegion {
	type tally struct {
		pass, fail int
		why        []string
	}
	regions := map[string]*tally{}
	for _, r := range reports {
		for _, region := range r.Regions {
			t := regions[region]
			if t == nil {
				t = &tally{}
				regions[region] = t
			}
			if !canaryFails(r) {
				t.pass++
				continue
			}
			t.fail++
			why := fmt.Sprintf("agent %s: %d of %d canaries failed", r.AgentID, r.Failing, r.Targets)
			if !r.AgentHealthy {
				why = fmt.Sprintf("agent %s reports itself unhealthy (%s)", r.AgentID, r.AgentReason)
			}
			t.why = append(t.why, why)
		}
	}
	names := make([]string, 0, len(regions))
	for region := range regions {
		names = append(names, region)
	}
	slices.Sort(names)
	out := map[string]BrokenRegion{}
	for region, t := range regions {
		if t.pass > 0 || t.fail == 0 {
			continue
		}
		for _, other := range names {
			if other != region && regions[other].pass > 0 {
				slices.Sort(t.why)
				out[region] = BrokenRegion{Cause: CauseCanary, Reason: fmt.Sprintf(
					"its canaries fail while %s's pass: %s", other, strings.Join(t.why, "; "))}
				break
			}
		}
	}
	return out
}
