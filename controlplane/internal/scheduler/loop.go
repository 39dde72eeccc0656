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

// lead is one leadership term: subscribe to changes, load every active check, then publish due
// runs until ctx ends (the lease is lost or the process stops). It returns an error only when
// the term cannot start.
func (s *Scheduler) lead(ctx context.Context, l *lease) error {
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

	start := time.Now()
	through := int64(noTime)
	if t, ok, err := s.store.SchedulerProgress(ctx); err != nil {
		return fmt.Errorf("read scheduler progress: %w", err)
	} else if ok {
		through = unixMs(t)
	}
	s.handled.Store(through)
	sched := newSchedule(through, s.cfg.MinConfirmationCadence)
	bad := 0
	err = s.loadFull(ctx, false, func(r loadResult) bool {
		sched.upsertFull(r.plans, r.seq, unixMs(s.now()))
		bad += r.bad
		if r.last {
			sched.finishFull(r.seq)
		}
		return true
	})
	if err != nil {
		s.m.loadErrs.WithLabelValues("full").Inc()
		return fmt.Errorf("load checks: %w", err)
	}
	s.m.scheduled.Set(float64(sched.Len()))
	s.m.unrunnable.Set(float64(bad))
	s.log.Info("scheduler loaded checks", "checks", sched.Len(), "unrunnable", bad, "took", time.Since(start).String())

	pub := newPublisher(js, s.cfg.MaxInFlight, stallWait, s.m, s.now, s.log)
	loads := make(chan loadResult)
	resyncNow := make(chan struct{}, 1)
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.reload(bg, feed, loads, resyncNow) })
	wg.Go(func() { s.resync(bg, loads, resyncNow) })
	wg.Go(func() { s.recordProgress(bg) })
	collected := make(chan struct{})
	go func() { pub.collect(); close(collected) }()

	s.loop(ctx, l, sched, pub, loads)

	stopBG()
	wg.Wait()
	pub.drain(drainTimeout)
	<-collected
	// Every publish is acknowledged or abandoned now: a clean step-down records all it did.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	s.writeProgress(fctx, s.handled.Load())
	cancel()
	s.m.scheduled.Set(0)
	return nil
}

// fullChunk is how many plans of a full load the loop applies between two looks at due runs.
const fullChunk = 500

// loop publishes due runs and applies loads until ctx ends.
func (s *Scheduler) loop(ctx context.Context, l *lease, sched *schedule, pub *publisher, loads <-chan loadResult) {
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
		} else if more, blocked := s.publishDue(sched, pub, now); blocked {
			wait = retryWait
			s.markHandled(sched, sched.peek().next-1)
		} else if more {
			wait = 0 // more are due: look at the other inputs, then carry on
			s.markHandled(sched, sched.peek().next-1)
		} else {
			s.markHandled(sched, now)
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
					sched.finishFull(r.seq)
					s.m.unrunnable.Set(float64(bad))
					s.m.scheduled.Set(float64(sched.Len()))
					bad = 0
				}
				full = full[1:]
			}
			if len(full) > 0 {
				wait = 0
			}
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
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

// publishDue publishes up to batchLimit runs due at now. more reports that others are due;
// blocked that NATS could not take a run, which stays due (until its deadline).
func (s *Scheduler) publishDue(sched *schedule, pub *publisher, now int64) (more, blocked bool) {
	for range batchLimit {
		e := sched.peek()
		if e == nil || e.next > now {
			return false, false
		}
		p := e.plan
		if deadline := e.deadline(); now > deadline {
			s.skipRun(p, e.next)
		} else if !pub.publish(p, e.next, deadline, e.confirm) {
			return true, true
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
	sched.handled(t)
	s.handled.Store(sched.through)
}

// apply folds a load of some checks into the schedule.
func (s *Scheduler) apply(sched *schedule, r loadResult) {
	sched.applyByID(r.ids, r.plans, r.seq, unixMs(s.now()))
	s.m.scheduled.Set(float64(sched.Len()))
}
