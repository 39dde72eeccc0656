package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
	first, err := s.load(ctx, nil)
	if err != nil {
		s.m.loadErrs.WithLabelValues("full").Inc()
		return fmt.Errorf("load checks: %w", err)
	}
	sched := newSchedule(s.cfg.CatchUp, s.cfg.MinConfirmationCadence)
	sched.applyFull(first.plans, first.seq, unixMs(s.now()))
	s.m.scheduled.Set(float64(sched.Len()))
	s.m.unrunnable.Set(float64(first.bad))
	s.log.Info("scheduler loaded checks", "checks", sched.Len(), "unrunnable", first.bad, "took", time.Since(start).String())

	pub := newPublisher(js, s.cfg.MaxInFlight, stallWait, s.m, s.now, s.log)
	loads := make(chan loadResult)
	resyncNow := make(chan struct{}, 1)
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.reload(bg, feed, loads, resyncNow) })
	wg.Go(func() { s.resync(bg, loads, resyncNow) })
	wg.Go(func() { s.flushLastQueued(bg, pub.marks) })
	collected := make(chan struct{})
	go func() { pub.collect(); close(collected) }()

	s.loop(ctx, l, sched, pub, loads)

	stopBG()
	wg.Wait()
	pub.drain(drainTimeout)
	<-collected
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	s.flushOnce(fctx, pub.marks)
	cancel()
	s.m.scheduled.Set(0)
	return nil
}

// fullChunk is how many plans of a full load the loop applies between two looks at due runs:
// applying 100,000 at once would hold runs back for tens of milliseconds.
const fullChunk = 2000

// loop publishes due runs and applies loads until ctx ends.
func (s *Scheduler) loop(ctx context.Context, l *lease, sched *schedule, pub *publisher, loads <-chan loadResult) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var full *loadResult // a full load being applied in chunks
	for {
		now := unixMs(s.now())
		wait := time.Hour
		if !l.fresh() {
			// The lease is not proven recently: publish nothing, and let the holder either
			// renew it or end this term.
			wait = 100 * time.Millisecond
		} else if more, blocked := s.publishDue(sched, pub, now); blocked {
			wait = retryWait
		} else if more {
			wait = 0 // more are due: look at the other inputs, then carry on
		} else if e := sched.peek(); e != nil {
			wait = time.Duration(e.next-unixMs(s.now())) * time.Millisecond
		}
		if full != nil {
			if s.applyFullChunk(sched, full) {
				full = nil
			} else {
				wait = 0
			}
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case r := <-loads:
			if r.full {
				full = &r // a newer full load supersedes one still being applied
			} else {
				s.apply(sched, r)
			}
		case <-timer.C:
		}
	}
}

// applyFullChunk applies the next chunk of a full load and reports whether it is done.
func (s *Scheduler) applyFullChunk(sched *schedule, r *loadResult) bool {
	n := min(fullChunk, len(r.plans))
	sched.upsertFull(r.plans[:n], r.seq, unixMs(s.now()))
	r.plans = r.plans[n:]
	if len(r.plans) > 0 {
		return false
	}
	sched.finishFull(r.seq)
	s.m.unrunnable.Set(float64(r.bad))
	s.m.scheduled.Set(float64(sched.Len()))
	return true
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
		if now > jobDeadline(e.next, e.spacing(), p.timeout, p.attempts) {
			s.m.skipped.WithLabelValues("late").Add(float64(len(p.regions)))
		} else if !pub.publish(p, e.next, e.confirm, e.spacing()) {
			return true, true
		}
		sched.advance(e, now)
	}
	e := sched.peek()
	return e != nil && e.next <= now, false
}

// apply folds a load of some checks into the schedule.
func (s *Scheduler) apply(sched *schedule, r loadResult) {
	sched.applyByID(r.ids, r.plans, r.seq, unixMs(s.now()))
	s.m.scheduled.Set(float64(sched.Len()))
}
