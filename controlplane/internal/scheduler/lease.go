package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// LeaseLockKey is the PostgreSQL advisory lock whose holder is the scheduler leader ("vantschd"
// in ASCII; distinct from the migration lock).
const LeaseLockKey int64 = 0x76616e7473636864

// leaseApplicationName names lease sessions in pg_stat_activity.
const leaseApplicationName = "vantage-scheduler-lease"

// lease is the leader's view of its lease: when it was last proven held. The loop publishes
// only while that is recent (fresh), so a leader that stalls (GC pause, frozen VM, dead
// database link) stops publishing before PostgreSQL can hand the lease to a standby.
type lease struct {
	renewed atomic.Pointer[time.Time]
	guard   time.Duration
}

func newLease(guard time.Duration) *lease {
	l := &lease{guard: guard}
	l.renew(time.Now())
	return l
}

func (l *lease) renew(at time.Time) { l.renewed.Store(&at) }

// fresh reports whether the lease was proven held less than guard ago (monotonic clock).
func (l *lease) fresh() bool { return time.Since(*l.renewed.Load()) < l.guard }

// campaign opens a lease session, stands by until it takes the lock, then leads until the
// lease is lost or ctx ends. An error ends the session; Run retries.
func (s *Scheduler) campaign(ctx context.Context) error {
	sess, err := s.store.OpenLeaseSession(ctx, leaseApplicationName, s.cfg.LeaseTTL)
	if err != nil {
		return fmt.Errorf("open lease session: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = sess.Close(cctx) // closing ends the session, which releases the lock in any case
	}()
	for {
		ok, err := sess.TryLock(ctx, LeaseLockKey)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("try lease: %w", err)
		}
		if ok {
			return s.hold(ctx, sess)
		}
		select {
		case <-time.After(s.cfg.LeaderRetry):
		case <-ctx.Done():
			return nil
		}
	}
}

// hold schedules while the lease holds: it runs a term and proves the session alive every
// LeaderPing; the first failed proof ends the term at once.
func (s *Scheduler) hold(ctx context.Context, sess *store.LeaseSession) error {
	s.log.Info("scheduler lease acquired: leading", "session_pid", sess.PID())
	s.leading.Store(true)
	s.m.leader.Set(1)
	defer func() {
		s.leading.Store(false)
		s.m.leader.Set(0)
	}()

	l := newLease(s.cfg.LeaseTTL / 2)
	termCtx, endTerm := context.WithCancel(ctx)
	defer endTerm()
	done := make(chan error, 1)
	go func() { done <- s.lead(termCtx, l) }()

	ping := time.NewTicker(s.cfg.LeaderPing)
	defer ping.Stop()
	var lost error
	for lost == nil && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case err := <-done:
			if ctx.Err() != nil { // shutting down: the term saw it first
				done <- err
				break
			}
			// The term ended on its own: it could not start (database or NATS down). Give the
			// lease up so that another replica may do better.
			if err == nil {
				err = errors.New("term ended")
			}
			s.log.Warn("scheduler term failed: giving the lease up", "err", err)
			return err
		case <-ping.C:
			sent := time.Now()
			pctx, cancel := context.WithTimeout(ctx, 2*s.cfg.LeaderPing)
			held, err := sess.Holds(pctx, LeaseLockKey)
			cancel()
			switch {
			case ctx.Err() != nil:
			case err != nil:
				lost = err
			case !held:
				lost = errors.New("the lease session no longer holds the lock")
			default:
				l.renew(sent)
			}
		}
	}
	endTerm()
	termErr := <-done
	if lost != nil {
		s.log.Warn("scheduler lease lost: stopped scheduling", "err", lost)
		return fmt.Errorf("lease lost: %w", lost)
	}
	// Clean step-down: unlock now so that a standby takes over at its next try rather than
	// when this session closes.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := sess.Unlock(uctx, LeaseLockKey); err != nil {
		s.log.Warn("scheduler lease: unlock", "err", err)
	}
	s.log.Info("scheduler lease released")
	return termErr
}
