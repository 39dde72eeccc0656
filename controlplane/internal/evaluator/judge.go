package evaluator

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// outcome is what one transaction did, published once it commits.
type outcome struct {
	passing, failing, late int
	excluded               int // finals of unhealthy regions left out
	held, released         int // runs that began to wait for a canary round, and that stopped (holdoff.go)
	alerts                 map[string]int
	changes                []stateChange
}

type stateChange struct {
	orgID, checkID uuid.UUID
	from, to       Status
}

// pendingRun is a run being aggregated in this transaction.
type pendingRun struct {
	store.Run
	stored bool // a check_runs row exists
	dirty  bool // changed since it was read
}

// judge merges finals into the checks' pending runs, judges the runs that are complete, due
// or superseded, steps each check's machine and writes everything back through tx.
func (e *Evaluator) judge(ctx context.Context, tx Tx, checks []*store.PipelineCheck, finals []store.ResultRow, out *outcome) error {
	now := e.now()
	pending, err := tx.PendingRuns(ctx, checks)
	if err != nil {
		return err
	}
	// A check inside an active maintenance window is judged like a muted one: its state is
	// tracked, no alert is written, and a held-back uptime.down goes out on the first failing
	// verdict after the window.
	inWindow, err := tx.InMaintenance(ctx, checks, now)
	if err != nil {
		return err
	}
	degradations, err := tx.Degradations(ctx, checks)
	if err != nil {
		return err
	}
	slowness, err := tx.Slowness(ctx, checks)
	if err != nil {
		return err
	}
	// Results of a region whose probes are judged broken (probehealth) are stored but left
	// out, as if the region had not reported.
	unhealthy, err := tx.UnhealthyRegions(ctx)
	if err != nil {
		return err
	}
	// When each region's canaries last reported, for the hold-off of one-region verdicts.
	canaryAt, err := tx.LastCanaries(ctx, now.Add(-e.opts.CanaryFresh))
	if err != nil {
		return err
	}
	runsOf := map[uuid.UUID][]store.Run{}
	for _, r := range pending {
		runsOf[r.CheckID] = append(runsOf[r.CheckID], r)
	}
	finalsOf := map[uuid.UUID][]store.ResultRow{}
	for _, f := range finals {
		finalsOf[f.CheckID] = append(finalsOf[f.CheckID], f)
	}
	var save, drop []store.Run
	var states []store.CheckState
	var events []store.OutboxEvent
	var verdicts []store.Verdict
	for _, c := range checks {
		if c.Paused {
			drop = append(drop, runsOf[c.ID]...)
			continue
		}
		runs, stale := e.merge(c, runsOf[c.ID], finalsOf[c.ID], now, out, unhealthy)
		drop = append(drop, stale...)
		n := e.holdOff(c, runs, decided(runs, now), now, unhealthy, canaryAt, out)
		for _, r := range runs[n:] {
			if r.dirty {
				save = append(save, r.Run)
			}
		}
		if n == 0 {
			continue
		}
		cs := &checkEval{c: c, tx: tx, now: now, state: stateOf(c), incident: c.CurrentIncidentID, out: out, maintenance: inWindow[c.ID],
			regional: regionalOf(degradations[c.ID]), slow: slownessOf(slowness[c.ID])}
		regionalBefore, slowBefore := cs.regional, cs.slow
		for _, r := range runs[:n] {
			if len(r.PassedRegions)+len(r.FailedRegions) == 0 { // its only report was left out (holdOff)
				if r.stored {
					drop = append(drop, r.Run)
				}
				continue
			}
			if err := cs.apply(ctx, r); err != nil {
				return err
			}
			verdicts = append(verdicts, store.Verdict{OrgID: c.OrgID, CheckID: c.ID, Day: verdictDay(r.ScheduledAt),
				Passing: verdictOf(c, &r.Run).Passing})
			if r.stored {
				drop = append(drop, r.Run)
			}
		}
		if !regionalBefore.equal(cs.regional) {
			if err := tx.SaveDegradation(ctx, cs.degradation()); err != nil {
				return err
			}
		}
		if !slowBefore.equal(cs.slow) {
			if err := tx.SaveSlowness(ctx, cs.slowness()); err != nil {
				return err
			}
		}
		events = append(events, cs.events...)
		states = append(states, cs.checkState())
		if from := Status(c.State); from != cs.state.Status {
			out.changes = append(out.changes, stateChange{orgID: c.OrgID, checkID: c.ID, from: from, to: cs.state.Status})
		}
	}
	if err := tx.SaveRuns(ctx, save); err != nil {
		return err
	}
	if err := tx.DeleteRuns(ctx, drop); err != nil {
		return err
	}
	if err := tx.UpdateCheckStates(ctx, states); err != nil {
		return err
	}
	if err := tx.CountVerdicts(ctx, verdicts); err != nil {
		return err
	}
	return tx.InsertOutbox(ctx, events)
}

// merge adds a check's new final attempts to its pending runs and returns the runs in
// scheduled order, and stored runs that can no longer be judged (at or before last_run_at).
func (e *Evaluator) merge(c *store.PipelineCheck, stored []store.Run, finals []store.ResultRow, now time.Time, out *outcome, unhealthy map[string]bool) ([]*pendingRun, []store.Run) {
	isLate := func(at time.Time) bool { return c.LastRunAt != nil && !at.After(*c.LastRunAt) }
	byJob := map[uuid.UUID]*pendingRun{}
	var runs []*pendingRun
	var stale []store.Run
	for _, r := range stored {
		if isLate(r.ScheduledAt) {
			stale = append(stale, r)
			continue
		}
		p := &pendingRun{Run: r, stored: true}
		byJob[r.JobID] = p
		runs = append(runs, p)
	}
	for _, f := range finals {
		if f.FailureSource != nil && *f.FailureSource == wire.FailureSourceAgent {
			continue // the agent failed (its browser crashed), not the target: as if the region had not reported
		}
		if unhealthy[f.Region] {
			out.excluded++
			continue // the region's probes are broken (probehealth): as if it had not reported
		}
		if isLate(f.ScheduledAt) {
			out.late++
			continue
		}
		p := byJob[f.JobID]
		if p == nil {
			p = &pendingRun{Run: store.Run{OrgID: c.OrgID, CheckID: c.ID, JobID: f.JobID, ScheduledAt: f.ScheduledAt,
				Deadline: e.deadline(c, f.ScheduledAt, now), ExpectedRegions: slices.Clone(c.TestRegions),
				PassedRegions: []string{}, FailedRegions: []string{}, SlowRegions: []string{}, FirstResultAt: now}}
			byJob[f.JobID] = p
			runs = append(runs, p)
		}
		if slices.Contains(p.PassedRegions, f.Region) || slices.Contains(p.FailedRegions, f.Region) {
			continue // the region already reported its final attempt for this run
		}
		if f.Passing {
			p.PassedRegions = append(p.PassedRegions, f.Region)
			if slower(c.DegradedResponseTimeMs, f.ResponseTimeMs) {
				p.SlowRegions = append(p.SlowRegions, f.Region)
			}
		} else {
			p.FailedRegions = append(p.FailedRegions, f.Region)
		}
		p.dirty = true
	}
	slices.SortFunc(runs, func(a, b *pendingRun) int {
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.JobID[:], b.JobID[:])
	})
	return runs, stale
}

// deadline is when a run is judged with whatever regions have reported.
func (e *Evaluator) deadline(c *store.PipelineCheck, scheduled, now time.Time) time.Time {
	timeout := e.opts.DefaultTimeout
	if c.TimeoutMs != nil && *c.TimeoutMs > 0 {
		timeout = time.Duration(*c.TimeoutMs) * time.Millisecond
	}
	d := scheduled.Add(timeout * time.Duration(e.opts.RunAttempts))
	if now.After(d) {
		d = now
	}
	return d.Add(e.opts.RunGrace)
}

// decided returns how many of the runs (in scheduled order) get their verdict now: all up to
// the last one that is complete or past its deadline.
func decided(runs []*pendingRun, now time.Time) int {
	n := 0
	for i, r := range runs {
		if complete(&r.Run) || !now.Before(r.Deadline) {
			n = i + 1
		}
	}
	return n
}

func complete(r *store.Run) bool {
	for _, region := range r.ExpectedRegions {
		if !slices.Contains(r.PassedRegions, region) && !slices.Contains(r.FailedRegions, region) {
			return false
		}
	}
	return len(r.PassedRegions)+len(r.FailedRegions) > 0
}

// verdictOf is a run's verdict under its check's region_quorum (runFails).
func verdictOf(c *store.PipelineCheck, r *store.Run) Verdict {
	return Verdict{Passing: !runFails(check.Quorum(c.RegionQuorum), r.PassedRegions, r.FailedRegions), At: r.ScheduledAt}
}

// verdictDay is the day whose counters (status page uptime) a verdict counts in: the UTC date
// of its run's scheduled time, however late the verdict comes.
func verdictDay(scheduled time.Time) time.Time {
	y, m, d := scheduled.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// stateOf reads the machine's state from a check row.
func stateOf(c *store.PipelineCheck) State {
	return State{Status: Status(c.State), ChangedAt: deref(c.StateChangedAt), FailingSince: deref(c.FailingSince),
		PassingSince: deref(c.PassingSince), LastAlertAt: deref(c.LastAlertAt), DownAlerted: c.DownAlerted}
}

// policyOf reads the machine's policy from a check row. A reminder interval of -1, 0 or NULL
// means no reminders.
func policyOf(c *store.PipelineCheck) Policy {
	p := Policy{
		ConfirmationPeriod: time.Duration(max(c.ConfirmationPeriodSeconds, 0)) * time.Second,
		RecoveryPeriod:     time.Duration(max(c.RecoveryPeriodSeconds, 0)) * time.Second,
		Muted:              c.Muted,
		Paused:             c.Paused,
	}
	if c.ReminderAlertIntervalMinutes != nil && *c.ReminderAlertIntervalMinutes > 0 {
		p.ReminderInterval = time.Duration(*c.ReminderAlertIntervalMinutes) * time.Minute
	}
	return p
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func ptr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
