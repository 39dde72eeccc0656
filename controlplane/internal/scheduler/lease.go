package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ShardLockClass is the upper half of the PostgreSQL advisory lock keys of the shards' leases
// ("vshd" in ASCII; distinct from the migration lock): shard k's lease is the lock
// ShardLockClass<<32 | k.
const ShardLockClass uint32 = 0x76736864

// shardLockKey is the advisory lock key of shard k's lease.
func shardLockKey(k int) int64 { return int64(ShardLockClass)<<32 | int64(k) }

// leaseApplicationName names lease sessions in pg_stat_activity, where replicas count each
// other.
const leaseApplicationName = "vantage-scheduler-lease"

// lease is the replica's view of its lease session: when it was last proven alive with its
// locks. The loop publishes only while that is recent (fresh), so a replica that stalls (GC
// pause, frozen VM, dead database link) stops publishing before PostgreSQL can hand its shards
// to another.
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

// session opens a lease session and schedules the shards it holds until the session is lost or
// ctx ends. An error ends the session; Run opens another.
func (s *Scheduler) session(ctx context.Context) error {
	sess, err := s.store.OpenLeaseSession(ctx, leaseApplicationName, s.cfg.LeaseTTL)
	if err != nil {
		return fmt.Errorf("open lease session: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = sess.Close(cctx) // closing ends the session, which releases its locks in any case
	}()
	return s.hold(ctx, sess)
}

// holder is the state of one lease session: the shards it holds, and the term publishing them.
type holder struct {
	s    *Scheduler
	sess *store.LeaseSession
	l    *lease
	held []int     // ascending
	told shard.Set // the shards the listener was told are taken, and not given since
	own  chan ownership
	done chan error // the term's end
}

// hold runs a term (lead) on the session and, every LeasePing, proves the session alive with
// all its locks and rebalances: gives up shards above its share, takes free ones below it. The
// first failed proof ends the term at once.
func (s *Scheduler) hold(ctx context.Context, sess *store.LeaseSession) error {
	s.log.Info("scheduler lease session opened", "session_pid", sess.PID())
	h := &holder{s: s, sess: sess, l: newLease(s.cfg.LeaseTTL / 2), own: make(chan ownership)}
	termCtx, endTerm := context.WithCancel(ctx)
	defer endTerm()
	// However the session ends, the shards it holds are released with it (the caller closes
	// it): whoever hears of them is told first.
	defer func() { h.shardsGiven(h.told.List()) }()
	h.done = make(chan error, 1)
	done := h.done
	go func() { done <- s.lead(termCtx, h.l, h.own) }()

	tick := time.NewTicker(s.cfg.LeasePing)
	defer tick.Stop()
	var lost error
	for first := true; lost == nil && ctx.Err() == nil; first = false {
		if !first {
			select {
			case <-ctx.Done():
				continue
			case err := <-done:
				if ctx.Err() != nil { // shutting down: the term saw it first
					done <- err
					continue
				}
				// The term ended on its own: it could not start (database or NATS down). Give the
				// shards up so that other replicas may do better.
				if err == nil {
					err = errors.New("term ended")
				}
				s.log.Warn("scheduler term failed: giving the shards up", "err", err)
				return err
			case <-tick.C:
			}
		}
		if err := h.step(ctx); err != nil && ctx.Err() == nil {
			lost = err
		}
	}
	endTerm()
	termErr := <-done
	s.owned.Store(&shard.Set{})
	s.m.shards.Set(0)
	if lost != nil {
		s.log.Warn("scheduler lease lost: stopped scheduling", "err", lost, "shards", len(h.held))
		return fmt.Errorf("lease lost: %w", lost)
	}
	// A clean stop: the term recorded its progress; closing the session (the caller) releases
	// every shard at once, for the others to take at their next look.
	s.log.Info("scheduler lease session closed", "shards", len(h.held))
	return termErr
}

// step proves the session and its locks, then rebalances. An error means the lease is lost.
func (h *holder) step(ctx context.Context) error {
	s := h.s
	sent := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 2*s.cfg.LeasePing)
	defer cancel()
	mine, others, err := h.sess.ClassLocks(pctx, ShardLockClass)
	if err != nil {
		return fmt.Errorf("look at the shards' locks: %w", err)
	}
	if !slices.Equal(lows(h.held), mine) {
		return fmt.Errorf("the session holds shard locks %v, want %v", mine, h.held)
	}
	h.l.renew(sent)
	replicas, err := h.sess.CountSessions(pctx, leaseApplicationName)
	if err != nil {
		return fmt.Errorf("count the replicas: %w", err)
	}
	release, take := shard.Rebalance(h.held, freeShards(mine, others), replicas, int(h.sess.PID()))
	if len(release) > 0 {
		if err := h.give(ctx, release); err != nil {
			return err
		}
	}
	if len(take) > 0 {
		return h.take(ctx, take)
	}
	return nil
}

// give hands shards back: the loop stops publishing them and the jobs it published are
// acknowledged before their progress is recorded and their locks released — the order that
// lets the next owner start where this one stopped, neither missing a run nor repeating one.
func (h *holder) give(ctx context.Context, shards []int) error {
	s := h.s
	answer := make(chan release, 1)
	select {
	case h.own <- ownership{give: shards, released: answer}:
	case err := <-h.done:
		h.requeue(err)
		return errors.New("the term ended")
	case <-ctx.Done():
		return nil
	}
	r := <-answer
	// The wait is short of the lease's guard: this goroutine must ping again soon, or every
	// shard stops publishing.
	acked := true
	select {
	case <-r.acked:
	case <-time.After(min(s.cfg.AckTimeout, s.cfg.LeasePing)):
		// Not recorded then: the next owner starts from the progress of a second or two ago
		// and publishes those runs again, by the same ids — the ones that did reach the
		// stream are dropped as duplicates, the others are not lost.
		acked = false
	}
	if acked && len(r.covered) > 0 && r.through != noTime {
		if err := s.store.SetShardProgress(ctx, r.covered, time.UnixMilli(r.through).UTC()); err != nil {
			// The next owner starts from the progress written a second ago: it publishes
			// the last runs again, and JetStream drops them as duplicates.
			s.flushErrs.report("write the progress of shards given up", err, "shards", len(r.covered))
		}
	}
	h.shardsGiven(shards)
	for _, k := range shards {
		if err := h.sess.Unlock(ctx, shardLockKey(k)); err != nil {
			return fmt.Errorf("release shard %d: %w", k, err)
		}
		h.held = slices.DeleteFunc(h.held, func(x int) bool { return x == k })
	}
	s.log.Info("scheduler shards given up", "shards", len(shards), "held", len(h.held))
	return nil
}

// take locks free shards (another replica may win some) and hands those it got to the loop,
// with their recorded progress.
func (h *holder) take(ctx context.Context, shards []int) error {
	s := h.s
	var got []int
	var lockErr error
	for _, k := range shards {
		ok, err := h.sess.TryLock(ctx, shardLockKey(k))
		if err != nil {
			lockErr = fmt.Errorf("lock shard %d: %w", k, err)
			break
		}
		if ok {
			got = append(got, k)
			h.held = append(h.held, k)
		}
	}
	slices.Sort(h.held)
	// Every shard held is heard of as taken, so that hold's end gives back exactly those.
	h.shardsTaken(got)
	if lockErr != nil || len(got) == 0 {
		return lockErr
	}
	through, err := s.store.ShardProgress(ctx, got)
	if err != nil {
		return fmt.Errorf("read the progress of shards taken: %w", err)
	}
	progress := make(map[int]int64, len(through))
	for k, t := range through {
		progress[k] = unixMs(t)
	}
	select {
	case h.own <- ownership{take: got, progress: progress}:
	case err := <-h.done:
		h.requeue(err)
		return errors.New("the term ended")
	case <-ctx.Done():
		return nil
	}
	s.log.Info("scheduler shards taken", "shards", len(got), "held", len(h.held))
	return nil
}

// shardsTaken tells the listener, if any, of shards locked.
func (h *holder) shardsTaken(shards []int) {
	if h.s.heard == nil || len(shards) == 0 {
		return
	}
	for _, k := range shards {
		h.told.Add(k)
	}
	h.s.heard.ShardsTaken(slices.Clone(shards))
}

// shardsGiven tells the listener, if any, of shards about to be released, and returns when it
// is done with them.
func (h *holder) shardsGiven(shards []int) {
	if h.s.heard == nil || len(shards) == 0 {
		return
	}
	for _, k := range shards {
		h.told.Remove(k)
	}
	h.s.heard.ShardsGiven(slices.Clone(shards))
}

// requeue puts the term's result back for hold to see.
func (h *holder) requeue(err error) {
	h.done <- err
}

// freeShards are the shards no session holds, in ascending order.
func freeShards(mine, others []int64) []int {
	var held shard.Set
	for _, low := range slices.Concat(mine, others) {
		if low >= 0 && low < shard.Count {
			held.Add(int(low))
		}
	}
	var free []int
	for k := range shard.Count {
		if !held.Has(k) {
			free = append(free, k)
		}
	}
	return free
}

func lows(shards []int) []int64 {
	out := make([]int64, len(shards))
	for i, k := range shards {
		out[i] = int64(k)
	}
	return out
}
