package evaluator

import (
	"slices"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Hold-off (docs/detection.md "Hold-off"): a failing verdict that rests on one region's
// failures alone — quorum "any", or a count of 1, with one failing region — waits until that
// region's canaries have reported after the failure, or HoldOff at most. By then a broken
// location is marked unhealthy (probehealth), and the verdict leaves its results out; a real
// outage seen from that region only is judged DOWN, HoldOff later at worst. A failure that two
// or more regions confirm is never held.

// HoldInput is what the hold-off rule looks at for one run about to be judged.
type HoldInput struct {
	Fails         bool      // the run's verdict fails as it stands
	FailedRegions int       // how many regions failed it
	Canaries      bool      // the fleet reports canaries (some region's agents did, recently)
	Waiting       bool      // the run is held already (check_runs.held_since is set)
	HeldSince     time.Time // what the wait counts from: the run's first result; zero: now
	CanaryAt      time.Time // when the failing region's last canary round was received
	Now           time.Time
	HoldOff       time.Duration // the longest wait
}

// HoldDecision is the rule's answer.
type HoldDecision int

const (
	// Judge means: judge the run now.
	Judge HoldDecision = iota
	// Hold means the run waits (it starts waiting when HeldSince is zero).
	Hold
	// JudgeAfterCanary means the run waited, and the region's canaries have reported since: judge
	// it with the region's health known.
	JudgeAfterCanary
	// JudgeAfterTimeout means the run waited HoldOff and no canary round came: judge it as it is.
	JudgeAfterTimeout
)

// StepHold is the pure hold-off rule.
func StepHold(in HoldInput) HoldDecision {
	switch {
	case !in.Fails, in.FailedRegions != 1, !in.Canaries && !in.Waiting:
		return Judge
	case in.HeldSince.IsZero():
		return Hold
	case in.CanaryAt.After(in.HeldSince):
		return JudgeAfterCanary
	case !in.Now.Before(in.HeldSince.Add(in.HoldOff)):
		return JudgeAfterTimeout
	}
	return Hold
}

// holdOff applies StepHold to the runs about to be judged (runs[:n], in order) and returns
// how many of them are judged now: those before the first held run. A run's wait counts from
// its first result's arrival (first_result_at), so one canary round of the region received
// after it settles every run that failed before it, and the bound runs from the failure, not
// from the first look. A held run keeps that time as held_since and gets a deadline HoldOff
// after it, so the sweep judges it then at the latest (or as soon as its region's canaries
// report, store.LockChecksWithDueRuns). A run released once its region is unhealthy loses
// that region's failure, as if the region had not reported.
func (e *Evaluator) holdOff(c *store.PipelineCheck, runs []*pendingRun, n int, now time.Time, unhealthy map[string]bool,
	canaryAt map[string]time.Time, out *outcome) int {
	for i, r := range runs[:n] {
		since := deref(r.HeldSince)
		if since.IsZero() {
			since = r.FirstResultAt
		}
		in := HoldInput{Fails: !verdictOf(c, &r.Run).Passing, FailedRegions: len(r.FailedRegions), Now: now,
			Waiting: r.HeldSince != nil, HeldSince: since, HoldOff: e.opts.HoldOff}
		// A region whose agents have not sent a round yet (an agent just started, or one
		// just broke before its first round) is waited for too, while the fleet sends
		// canaries: its first round settles it, or the bound.
		in.Canaries = len(canaryAt) > 0
		if len(r.FailedRegions) == 1 {
			in.CanaryAt = canaryAt[r.FailedRegions[0]]
		}
		switch StepHold(in) {
		case Hold:
			if r.HeldSince == nil {
				r.HeldSince = &since
				r.Deadline = since.Add(e.opts.HoldOff)
				r.dirty = true
				out.held++
			}
			return i
		case JudgeAfterCanary, JudgeAfterTimeout:
			if r.HeldSince != nil {
				out.released++
			}
			if region := r.FailedRegions[0]; unhealthy[region] {
				r.FailedRegions = slices.DeleteFunc(r.FailedRegions, func(s string) bool { return s == region })
				out.excluded++
			}
		}
	}
	return n
}
