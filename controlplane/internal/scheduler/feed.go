package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Notify tells the scheduler that a check's configuration or state changed (created, updated,
// paused, resumed, deleted, moved, or its status entered or left VERIFYING/RECOVERING). Call
// it after the change is committed: the scheduler reloads the check from the database within
// a second. It is a core NATS publish (fire and forget); a lost notification is repaired by
// the scheduler's periodic resync.
func Notify(nc *nats.Conn, checkID uuid.UUID) error {
	if err := nc.Publish(wire.ConfigChangedSubject, []byte(checkID.String())); err != nil {
		return fmt.Errorf("notify scheduler of check %s: %w", checkID, err)
	}
	return nil
}

// ChangeNotifier returns Notify bound to nc, logging a failure instead of returning it: the
// shape of api.Deps.CheckChanged (and, ignoring the state, of the evaluator's OnStateChange).
func ChangeNotifier(nc *nats.Conn, log *slog.Logger) func(checkID uuid.UUID) {
	return func(checkID uuid.UUID) {
		if err := Notify(nc, checkID); err != nil {
			log.Warn("scheduler change notification not sent; the periodic resync will catch up", "check_id", checkID.String(), "err", err)
		}
	}
}

// Notifier is Notify bound to a connection, for components that take it as a dependency.
type Notifier struct{ nc *nats.Conn }

// NewNotifier returns a Notifier publishing on nc.
func NewNotifier(nc *nats.Conn) *Notifier { return &Notifier{nc: nc} }

// CheckChanged notifies the scheduler of changes to the given checks (see Notify). ctx is
// accepted for interface symmetry; publishing does not block.
func (n *Notifier) CheckChanged(_ context.Context, checkIDs ...uuid.UUID) error {
	var errs []error
	for _, id := range checkIDs {
		errs = append(errs, Notify(n.nc, id))
	}
	return errors.Join(errs...)
}

// loadResult is a load of checks from the database, turned into plans, on its way to the loop.
// A full load (every active check) arrives in parts, in id order, the last one marked.
type loadResult struct {
	seq    uint64
	full   bool        // a part of a load of every active check of shards; otherwise a load of ids
	shards shard.Set   // of a full load
	last   bool        // the last part of a full load
	ids    []uuid.UUID // by-id loads: what was asked for
	plans  []*plan
	bad    int // checks that could not be planned
}

// pageSize is how many checks one query of a full load reads.
const pageSize = 1000

// changeFeed receives change notifications and hands their check ids to the reloader. When the
// buffer is full it drops the id and asks for a full resync instead.
type changeFeed struct {
	ids      chan uuid.UUID
	overflow atomic.Bool
}

func (s *Scheduler) subscribe() (*changeFeed, *nats.Subscription, error) {
	f := &changeFeed{ids: make(chan uuid.UUID, 8192)}
	sub, err := s.nc.Subscribe(wire.ConfigChangedSubject, func(m *nats.Msg) {
		id, err := uuid.ParseBytes(m.Data)
		if err != nil {
			s.log.Debug("ignoring malformed check change notification", "err", err)
			return
		}
		select {
		case f.ids <- id:
		default:
			f.overflow.Store(true)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("subscribe to %s: %w", wire.ConfigChangedSubject, err)
	}
	// Make sure the server knows the subscription before the initial load, so that no change
	// committed after that load is missed.
	if err := s.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, nil, fmt.Errorf("subscribe to %s: %w", wire.ConfigChangedSubject, err)
	}
	return f, sub, nil
}

// reload loads the checks named by change notifications, batching whatever arrived together,
// and sends the results to out until ctx ends. A failed load is retried with the ids that
// arrive meanwhile.
func (s *Scheduler) reload(ctx context.Context, f *changeFeed, out chan<- loadResult, resyncNow chan<- struct{}) {
	const maxBatch = 1000
	pending := map[uuid.UUID]bool{}
	for {
		if len(pending) == 0 {
			select {
			case id := <-f.ids:
				pending[id] = true
			case <-ctx.Done():
				return
			}
		}
	gather:
		for len(pending) < maxBatch {
			select {
			case id := <-f.ids:
				pending[id] = true
			default:
				break gather
			}
		}
		if f.overflow.Swap(false) {
			select {
			case resyncNow <- struct{}{}:
			default:
			}
		}
		// Checks of other replicas' shards are theirs to load.
		owned := s.owned.Load()
		ids := make([]uuid.UUID, 0, len(pending))
		for id := range pending {
			if owned.Has(shard.Of(id)) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			clear(pending)
			continue
		}
		res, err := s.load(ctx, ids)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.m.loadErrs.WithLabelValues("by_id").Inc()
			s.loadErrLog.report("reload changed checks", err, "checks", len(ids))
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
			continue
		}
		clear(pending)
		select {
		case out <- res:
		case <-ctx.Done():
			return
		}
	}
}

// resync loads every active check of the shards owned every ResyncInterval (or at once on
// resyncNow) and sends the parts to out until ctx ends. It is a background repair, so it paces
// itself: after each page it rests as long as the page took, leaving the CPU to the publishing
// loop.
func (s *Scheduler) resync(ctx context.Context, out chan<- loadResult, resyncNow <-chan struct{}) {
	t := time.NewTicker(s.cfg.ResyncInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-resyncNow:
		case <-ctx.Done():
			return
		}
		owned := *s.owned.Load()
		if owned.Len() == 0 {
			continue
		}
		err := s.loadFull(ctx, s.seq.Add(1), owned, true, func(r loadResult) bool { return s.send(ctx, out, r) })
		if err != nil && ctx.Err() == nil {
			s.m.loadErrs.WithLabelValues("full").Inc()
			s.loadErrLog.report("resync checks", err)
		}
	}
}

// loadShards loads the checks of shards just taken over (the full load seq their joining
// waits for) and sends the parts to out, retrying every second until it succeeds or ctx ends.
func (s *Scheduler) loadShards(ctx context.Context, shards []int, seq uint64, out chan<- loadResult) {
	set := shard.SetOf(shards...)
	for {
		start := time.Now()
		checks, bad := 0, 0
		err := s.loadFull(ctx, seq, set, false, func(r loadResult) bool {
			checks, bad = checks+len(r.plans), bad+r.bad
			return s.send(ctx, out, r)
		})
		if err == nil && ctx.Err() == nil {
			s.log.Info("scheduler loaded checks", "shards", len(shards), "checks", checks, "unrunnable", bad,
				"took", time.Since(start).String())
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		s.m.loadErrs.WithLabelValues("full").Inc()
		s.loadErrLog.report("load the checks of shards taken over", err, "shards", len(shards))
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
	}
}

func (s *Scheduler) send(ctx context.Context, out chan<- loadResult, r loadResult) bool {
	select {
	case out <- r:
		return true
	case <-ctx.Done():
		return false
	}
}

// loadFull reads every active check of shards, page by page, and hands each page's plans to
// emit, which reports whether to go on. All parts carry the sequence number seq, taken before
// the first query: a page read later may hold newer data than its number says, which is
// harmless, since newer by-id loads still win and an older number only ever yields to them.
func (s *Scheduler) loadFull(ctx context.Context, seq uint64, shards shard.Set, pace bool, emit func(loadResult) bool) error {
	list := shards.List()
	after := uuid.Nil
	for {
		start := time.Now()
		checks, err := s.store.SchedulableChecksPage(ctx, list, after, pageSize)
		if err != nil {
			return err
		}
		res := s.plan(checks)
		res.seq, res.full, res.shards, res.last = seq, true, shards, len(checks) < pageSize
		if !emit(res) || res.last {
			return nil
		}
		after = checks[len(checks)-1].ID
		if pace {
			select {
			case <-time.After(time.Since(start)):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// load reads the checks ids and plans them.
func (s *Scheduler) load(ctx context.Context, ids []uuid.UUID) (loadResult, error) {
	seq := s.seq.Add(1) // before the query: see loadFull
	checks, err := s.store.SchedulableChecksByID(ctx, ids)
	if err != nil {
		return loadResult{}, err
	}
	res := s.plan(checks)
	res.seq, res.ids = seq, ids
	return res, nil
}

// plan builds the plans of loaded checks, logging those that cannot run.
func (s *Scheduler) plan(checks []store.SchedCheck) loadResult {
	res := loadResult{plans: make([]*plan, 0, len(checks))}
	for _, c := range checks {
		p, err := buildPlan(c, s.guard)
		if err != nil {
			res.bad++
			s.log.Warn("check cannot be scheduled", "check_id", c.ID.String(), "org_id", c.OrgID.String(), "err", err)
			continue
		}
		res.plans = append(res.plans, p)
	}
	return res
}
