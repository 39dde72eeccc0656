package evaluator

import (
	"context"
	"slices"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// slowRegions is the pure slowness verdict of one run: the regions whose passing final attempt
// was slower than the check's degraded_response_time_ms (slow, a subset of passed), when they
// outweigh the fast ones under the check's quorum, as failing regions outweigh passing ones for
// a failure; nil when the run is not slow. Failing regions take no part: they are the regional
// machine's, and a failed attempt's response time says nothing of the target's speed.
func slowRegions(q check.Quorum, passed, slow []string) []string {
	if len(slow) == 0 || !q.Fails(len(passed)-len(slow), len(slow)) {
		return nil
	}
	return slow
}

// slower tells whether a passing final attempt of response time ms counts as slow under the
// check's threshold (none: never).
func slower(threshold *int32, ms float64) bool {
	return threshold != nil && ms > float64(*threshold)
}

// StepSlow applies one run to a check's slowness: StepRegional's machine, over runs slower than
// the check's threshold in the quorum's regions (slowRegions) where StepRegional has runs with
// failing regions. So, with status the check's state after the run's verdict (Step):
//
//   - UP, the run slow: the streak starts or goes on; once it has lasted the confirmation
//     period (between run times) the check is degraded, raising uptime.degraded (slow) once.
//   - UP, the run fast (or the threshold turned off): the streak ends; a degraded check is
//     restored (uptime.restored, slow).
//   - VERIFYING: nothing changes (the run failed; its speed says nothing).
//   - DOWN, RECOVERING: the streak ends without an event: uptime.down takes over.
//   - PENDING or a paused check: nothing changes.
//
// Slowness never fails a run: the check's status is Step's alone.
func StepSlow(r Regional, status Status, slow []string, at time.Time, confirmation time.Duration) (Regional, RegionalEffect) {
	return StepRegional(r, status, slow, at, confirmation)
}

// slownessOf reads the machine's slowness state from its row (none: no streak).
func slownessOf(s store.Slowness) Regional {
	return Regional{Since: s.Since, Degraded: s.Degraded, FailingRegions: s.SlowRegions}
}

// slowness is the row to write back; a zero Since deletes it.
func (ce *checkEval) slowness() store.Slowness {
	r := ce.slow
	return store.Slowness{OrgID: ce.c.OrgID, CheckID: ce.c.ID, Since: r.Since, Degraded: r.Degraded, SlowRegions: r.FailingRegions}
}

// stepSlow applies a judged run to the check's slowness and queues uptime.degraded or
// uptime.restored with reason slow, unless the check is muted or in maintenance (the state is
// tracked all the same) or paused.
func (ce *checkEval) stepSlow(ctx context.Context, r *pendingRun, p Policy) error {
	if p.Paused {
		return nil
	}
	var slow []string
	if ce.c.DegradedResponseTimeMs != nil {
		slow = slowRegions(check.Quorum(ce.c.RegionQuorum), r.PassedRegions, r.SlowRegions)
	}
	next, fx := StepSlow(ce.slow, ce.state.Status, slow, r.ScheduledAt, p.ConfirmationPeriod)
	ce.slow = next
	if fx == RegionalNone || p.Muted {
		return nil
	}
	a, incidentID, err := ce.uptimeAlert(ctx, ce.now)
	if err != nil {
		return err
	}
	ra := event.RegionalAlert{UptimeAlert: a, Reason: event.DegradedSlow, SlowRegions: slices.Clone(next.FailingRegions)}
	var ev event.Event = event.UptimeDegraded{RegionalAlert: ra}
	if fx == RegionalRestored {
		ev = event.UptimeRestored{RegionalAlert: ra}
	}
	ce.queue(ev, incidentID, ce.now)
	return nil
}
