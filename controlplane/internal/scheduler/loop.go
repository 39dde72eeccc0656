package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// batchLimit caps the runs published between two looks at the loop's other inputs, so that a
// burst (a take-over catching up) does not delay change notifications.
const batchLimit = 512

// stallWait is how long a publish waits for a free in-flight slot before the loop backs off
// for retryWait (NATS slow or unreachable) and looks at its other inputs.
const (
	stallWait = 100 * time.Millisecond
	retryWait = 50 * time.Millisecond
)

// drainTimeout bounds how long a term waits, when it ends, for acks of jobs it published.
const drainTimeout = 5 * time.Second

// lead is one term of a lease session: subscribe to changes, then publish the due runs of the
// shards the session holds until ctx ends (the session is lost or the process stops). The
// shards come and go through own, from the session's holder (hold). It returns an error only
// when the term cannot start.
func (s *Scheduler) lead(ctx context.Context, l *lease, own <-chan ownership) error {
	js, err := jetstream.New(s.nc,
		jetstream.WithPublishAsyncMaxPending(s.cfg.MaxInFlight),
		jetstream.WithPublishAsyncTimeout(s.cfg.AckTimeout))
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	feed, sub, err := s.subscribe()
	if err != nil {
		return err
	}
	defer sub.Unsubscribe() //nolint:errcheck // the connection may be gone; nothing to do about it

	sched := newSchedule(s.cfg.MinConfirmationCadence)
	s.publishOwned(sched)
	pub := newPublisher(js, s.cfg.MaxInFlight, stallWait, s.m, s.now, s.log)
	loads := make(chan loadResult)
	resyncNow := make(chan struct{}, 1)
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.reload(bg, feed, loads, resyncNow) })
	wg.Go(func() { s.resync(bg, loads, resyncNow) })
	wg.Go(func() { s.recordProgress(bg) })
	sh := &shedding{behind: newBacklogs(), rot: newRotation()}
	if !s.cfg.NoShedding {
		wg.Go(func() { s.sampleBacklogs(bg, js, sh.behind) })
	}
	collected := make(chan struct{})
	go func() { pub.collect(); close(collected) }()

	s.loop(ctx, l, sched, pub, sh, loads, own, func(shards []int, seq uint64) {
		wg.Go(func() { s.loadShards(bg, shards, seq, loads) })
	})

	stopBG()
	wg.Wait()
	pub.drain(drainTimeout)
	<-collected
	// Every publish is acknowledged or abandoned now: a clean step-down records all it did.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	s.writeProgress(fctx, s.mark.Load())
	cancel()
	s.m.scheduled.Set(0)
	return nil
}

// ownership is a change of the shards the loop schedules, from the lease's holder: take
// shards (with their recorded progress), or give them up (answered on released once the
// loop publishes nothing of theirs any more).
type ownership struct {
	take     []int
	progress map[int]int64 // of take; absent: never scheduled
	give     []int
	released chan<- release
}

// release is the loop's answer to giving shards up: covered of them were handled through
// through, and acked is closed once every job published before is acknowledged (or failed).
type release struct {
	covered []int
	through int64
	acked   <-chan struct{}
}

// progressMark is how far the loop has handled the runs of some shards, for the progress
// writer: one value for all the shards schedule.through covers.
type progressMark struct {
	through int64
	shards  []int
}

// publishOwned publishes the shards the schedule holds, for Owned, resync and the metrics.
func (s *Scheduler) publishOwned(sched *schedule) {
	owned := sched.owned
	s.owned.Store(&owned)
	s.m.shards.Set(float64(owned.Len()))
	s.mark.Store(&progressMark{through: sched.through, shards: sched.covered()})
}

// changeOwnership applies a change of the shards owned: shards given up leave the schedule
// before the answer, shards taken enter it and their checks are loaded by startLoad.
func (s *Scheduler) changeOwnership(sched *schedule, pub *publisher, o ownership, startLoad func([]int, uint64)) {
	if len(o.give) > 0 {
		covered := sched.release(o.give)
		o.released <- release{covered: covered, through: sched.through, acked: pub.barrier()}
		s.m.moves.WithLabelValues("given").Add(float64(len(o.give)))
	}
	if len(o.take) > 0 {
		seq := s.seq.Add(1) // before the load's first query: see loadFull
		sched.acquire(o.take, o.progress, seq)
		// Published before the load starts: a change notification the reloader drops as not
		// ours was then received before the load's query, which reads the change.
		s.publishOwned(sched)
		startLoad(o.take, seq)
		s.m.moves.WithLabelValues("taken").Add(float64(len(o.take)))
	}
	s.publishOwned(sched)
	s.m.scheduled.Set(float64(sched.Len()))
}

// fullChunk is how many plans of a full load the loop applies between two looks at due runs.
const fullChunk = 500

// loop publishes due runs and applies loads and changes of ownership until ctx ends.
func (s *Scheduler) loop(ctx context.Context, l *lease, sched *schedule, pub *publisher, sh *shedding, loads <-chan loadResult,
	own <-chan ownership, startLoad func([]int, uint64)) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var full []loadResult // parts of full loads waiting to be applied, in order
	bad := 0              // unrunnable checks in the full load being applied
	for {
		now := unixMs(s.now())
		wait := time.Hour
		if !l.fresh() {
			// The lease is not proven recently: publish nothing, and let the holder either
			// renew it or end this term.
			wait = 100 * time.Millisecond
		} else if more, blocked := s.publishDue(sched, pub, sh, now); blocked {
			wait = retryWait
			s.markHandled(sched, sched.peek().next-1)
		} else if more {
			wait = 0 // more are due: look at the other inputs, then carry on
			s.markHandled(sched, sched.peek().next-1)
		} else {
			s.markHandled(sched, now)
			// Every run due by now is handled, the catch-up runs of loaded shards included:
			// those shards' progress is the loop's from now on.
			if len(sched.joining) > 0 {
				sched.join()
				s.publishOwned(sched)
			}
			if e := sched.peek(); e != nil {
				wait = time.Duration(e.next-unixMs(s.now())) * time.Millisecond
			}
		}
		if len(full) > 0 {
			// Apply a chunk of the oldest part; a whole part of 1,000 plans would hold due runs
			// back for a millisecond or more.
			r := &full[0]
			n := min(fullChunk, len(r.plans))
			sched.upsertFull(r.plans[:n], r.seq, unixMs(s.now()))
			r.plans = r.plans[n:]
			if len(r.plans) == 0 {
				bad += r.bad
				if r.last {
					sched.finishFull(r.seq, r.shards)
					s.m.unrunnable.Set(float64(bad))
					s.m.scheduled.Set(float64(sched.Len()))
					bad = 0
				}
				full = full[1:]
			}
			// Look again at once: the chunk may have brought runs due now (a shard taken over
			// catches up), and the wait above was computed without them.
			wait = 0
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case o := <-own:
			s.changeOwnership(sched, pub, o, startLoad)
		case r := <-loads:
			if r.full {
				full = append(full, r)
			} else {
				s.apply(sched, r)
			}
		case <-timer.C:
		}
	}
}

// shedding is what a term needs to shed the runs of regions whose queue is behind.
type shedding struct {
	behind backlogs
	rot    *rotation
}

// publishDue publishes up to batchLimit runs due at now, each in the regions not shed (see
// split). more reports that others are due; blocked that NATS could not take a run, which
// stays due (until its deadline).
func (s *Scheduler) publishDue(sched *schedule, pub *publisher, sh *shedding, now int64) (more, blocked bool) {
	sh.rot.prune(now)
	for range batchLimit {
		e := sched.peek()
		if e == nil || e.next > now {
			return false, false
		}
		p := e.plan
		if deadline := e.deadline(); now > deadline {
			s.skipRun(p, e.next)
		} else {
			regions, shed := s.split(e, sh.behind, sh.rot)
			if !pub.publish(p, regions, e.next, deadline, e.confirm, e.release != noTime, sh.rot) {
				return true, true
			}
			s.settleRun(e, e.next, shed, sh.rot)
		}
		sched.advance(e, now)
	}
	e := sched.peek()
	return e != nil && e.next <= now, false
}

// skipRun counts and keeps for recording the run of p due at due, which could not be queued
// before its deadline (NATS slow or unreachable, or the loop behind).
func (s *Scheduler) skipRun(p *plan, due int64) {
	s.m.skipped.WithLabelValues("late").Add(float64(len(p.regions)))
	at := time.UnixMilli(due).UTC()
	for _, r := range p.regions {
		if s.runsSkipped != nil {
			s.runsSkipped.WithLabelValues(r, store.SkipNotQueued).Inc()
		}
		s.skips.add(store.SkippedRun{OrgID: p.orgID, CheckID: p.id, Region: r, ScheduledAt: at, Reason: store.SkipNotQueued})
	}
}

// markHandled records that every run due at or before t was handled.
func (s *Scheduler) markHandled(sched *schedule, t int64) {
	before := sched.through
	sched.handled(t)
	if sched.through != before {
		if m := s.mark.Load(); m != nil {
			s.mark.Store(&progressMark{through: sched.through, shards: m.shards})
		}
	}
}

// apply folds a load of some checks into the schedule.
func (s *Scheduler) apply(sched *schedule, r loadResult) {
	sched.applyByID(r.ids, r.plans, r.seq, unixMs(s.now()))
	s.m.scheduled.Set(float64(sched.Len()))
}
