package evaluator

import (
	"context"
	"slices"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Regional is what the evaluator remembers of a check's regional degradation between runs
// (store.Degradation): a check that stays UP while some of its regions fail.
type Regional struct {
	// Since is the run time of the first run of the current streak of passing runs with at
	// least one failing region; zero when there is no such streak.
	Since time.Time
	// Degraded: the streak lasted the confirmation period and uptime.degraded was raised
	// (or held back while muted).
	Degraded bool
	// FailingRegions are the failing regions of the streak's last run.
	FailingRegions []string
}

// RegionalEffect is the event a regional step raises: none, uptime.degraded or
// uptime.restored.
type RegionalEffect int

// Regional effects.
const (
	RegionalNone RegionalEffect = iota
	RegionalDegraded
	RegionalRestored
)

// StepRegional applies one run to a check's regional degradation. status is the check's state
// after the run's verdict (Step), failed the regions that failed the run. It is pure.
//
//   - UP, some region failed (a minority, or the run would not pass): the streak starts or
//     goes on; once it has lasted the confirmation period (between run times, as for DOWN)
//     the check is degraded, raising uptime.degraded once.
//   - UP, no region failed: the streak ends; a degraded check is restored (uptime.restored).
//   - VERIFYING: nothing changes (the run failed, but the check is not DOWN yet).
//   - DOWN, RECOVERING: the streak ends without an event: uptime.down speaks for the check now,
//     and uptime.up will.
//   - PENDING or a paused check: nothing changes.
func StepRegional(r Regional, status Status, failed []string, at time.Time, confirmation time.Duration) (Regional, RegionalEffect) {
	switch status {
	case Up:
		if len(failed) == 0 {
			was := r.Degraded
			r = Regional{}
			if was {
				return r, RegionalRestored
			}
			return r, RegionalNone
		}
		if r.Since.IsZero() {
			r.Since = at
		}
		r.FailingRegions = slices.Clone(failed)
		if !r.Degraded && at.Sub(r.Since) >= confirmation {
			r.Degraded = true
			return r, RegionalDegraded
		}
	case Down, Recovering:
		r = Regional{}
	}
	return r, RegionalNone
}

func (r Regional) equal(o Regional) bool {
	return r.Since.Equal(o.Since) && r.Degraded == o.Degraded && slices.Equal(r.FailingRegions, o.FailingRegions)
}

// regionalOf reads the machine's regional state from its row (none: no streak).
func regionalOf(d store.Degradation) Regional {
	return Regional{Since: d.Since, Degraded: d.Degraded, FailingRegions: d.FailingRegions}
}

// degradation is the row to write back; a zero Since deletes it.
func (ce *checkEval) degradation() store.Degradation {
	r := ce.regional
	return store.Degradation{OrgID: ce.c.OrgID, CheckID: ce.c.ID, Since: r.Since, Degraded: r.Degraded, FailingRegions: r.FailingRegions}
}

// stepRegional applies a judged run to the check's regional degradation and queues
// uptime.degraded or uptime.restored, unless the check is muted or in maintenance (the state is
// tracked all the same) or paused.
func (ce *checkEval) stepRegional(ctx context.Context, r *pendingRun, p Policy) error {
	if p.Paused {
		return nil
	}
	next, fx := StepRegional(ce.regional, ce.state.Status, r.FailedRegions, r.ScheduledAt, p.ConfirmationPeriod)
	failing := next.FailingRegions
	ce.regional = next
	if fx == RegionalNone || p.Muted {
		return nil
	}
	a, incidentID, err := ce.uptimeAlert(ctx, ce.now)
	if err != nil {
		return err
	}
	ra := event.RegionalAlert{UptimeAlert: a, FailingRegions: slices.Clone(failing)}
	var ev event.Event = event.UptimeDegraded{RegionalAlert: ra}
	if fx == RegionalRestored {
		ev = event.UptimeRestored{RegionalAlert: ra}
	}
	ce.queue(ev, incidentID, ce.now)
	return nil
}
