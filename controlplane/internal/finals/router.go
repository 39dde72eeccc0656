package finals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Judge judges the finals of the shards this replica owns; the evaluator's owner judge
// implements it.
type Judge interface {
	// Take recovers shards from PostgreSQL and starts judging them; for a shard already
	// taken it re-syncs after a loss. The Router calls it while Judge runs, for other shards
	// or, during a re-sync, for the same; and together with Takes of other shards, never of
	// the same. Its context ends when the shards are given meanwhile.
	Take(ctx context.Context, shards []int) error
	// Give stops judging shards and returns when no judgment of them is in flight.
	Give(shards []int)
	// Judge judges finals of taken shards, already stored; repeats are ignored.
	Judge(ctx context.Context, finals []store.ResultRow) error
}

// RouterConfig tunes the Router. Zero values take the documented defaults.
type RouterConfig struct {
	// SubjectPrefix is the prefix of the shards' subjects, as the Publisher's. Default
	// wire.FinalsSubjectPrefix.
	SubjectPrefix string
	// MaxBatch is the most finals handed to Judge at once (a single larger message is not
	// split). Default 1000.
	MaxBatch int
	// FlushInterval is the longest a final waits for its batch to fill. Default 25ms.
	FlushInterval time.Duration
	// QueueSize is how many messages may wait for the judging goroutine; beyond it they wait in
	// their subscriptions, up to the pending limits. Default 256.
	QueueSize int
	// PendingMsgs and PendingBytes limit each shard's subscription (-1: no limit): a message
	// beyond them is dropped by nats.go, and the shard re-synced. Default nats.go's (512Ki
	// messages, 64 MiB).
	PendingMsgs, PendingBytes int
	// PollInterval is how often subscriptions' drops and the connection's reconnects are
	// looked at. Default 1s.
	PollInterval time.Duration
	// RetryMin and RetryMax bound the backoff between attempts of a failed Take or Judge.
	// Default 100ms and 5s.
	RetryMin, RetryMax time.Duration
}

func (c *RouterConfig) defaults() {
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = wire.FinalsSubjectPrefix
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1000
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 25 * time.Millisecond
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 256
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.RetryMin <= 0 {
		c.RetryMin = 100 * time.Millisecond
	}
	if c.RetryMax < c.RetryMin {
		c.RetryMax = max(c.RetryMin, 5*time.Second)
	}
}

// RouterDeps are what the Router works with.
type RouterDeps struct {
	NATS  *nats.Conn // required
	Judge Judge      // required
	// Logger receives the router's log (component finals_router). Default: discarded.
	Logger *slog.Logger
	// Registerer takes the router's metrics. Default: a private registry.
	Registerer prometheus.Registerer
}

// Router delivers the finals of the shards this replica owns to its judge. The scheduler
// tells it which (ShardsTaken, ShardsGiven); Run delivers. See the package documentation.
type Router struct {
	cfg   RouterConfig
	nc    *nats.Conn
	judge Judge
	log   *slog.Logger
	m     routerMetrics

	// judging is held while Judge runs: ShardsGiven waits on it for the batch in flight.
	judging sync.Mutex

	mu         sync.Mutex
	shards     map[int]*owned
	reconnects uint64 // the connection's count when last looked at
	ctx        context.Context

	started, stopped chan struct{}
	in               chan delivery
	wake             chan struct{} // a re-sync may be due
}

// owned is one shard as long as this replica owns it; a shard given and taken again is
// another.
type owned struct {
	sub     *nats.Subscription // nil while it could not subscribe
	ready   chan struct{}      // closed once the first Take returned
	gone    chan struct{}      // closed when given
	isReady bool
	dropped int       // the subscription's Dropped count when last looked at
	resync  bool      // finals may have been lost since the last Take
	taking  *takeCall // the Take of this shard under way, if any
}

// takeCall is one call of the judge's Take, which ShardsGiven ends and waits for.
type takeCall struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// delivery is one message's finals, of shard k while o owned it.
type delivery struct {
	k      int
	o      *owned
	finals []store.ResultRow
}

// NewRouter returns a Router; Run delivers.
func NewRouter(cfg RouterConfig, deps RouterDeps) (*Router, error) {
	if deps.NATS == nil || deps.Judge == nil {
		return nil, errors.New("finals router: NATS and Judge are required")
	}
	cfg.defaults()
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := deps.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := newRouterMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &Router{cfg: cfg, nc: deps.NATS, judge: deps.Judge, log: log.With("component", "finals_router"), m: m,
		shards: map[int]*owned{}, reconnects: deps.NATS.Stats().Reconnects,
		started: make(chan struct{}), stopped: make(chan struct{}),
		in: make(chan delivery, cfg.QueueSize), wake: make(chan struct{}, 1)}, nil
}

// ShardsTaken subscribes to the shards' subjects, then, without waiting, takes them from the
// judge (retried until it succeeds or they are given); their messages wait until it has. A
// shard already owned is re-synced.
func (r *Router) ShardsTaken(shards []int) {
	var fresh []int
	var os []*owned
	r.mu.Lock()
	for _, k := range shards {
		if o, ok := r.shards[k]; ok {
			o.resync = true
			continue
		}
		o := &owned{ready: make(chan struct{}), gone: make(chan struct{})}
		o.sub = r.subscribe(k, o)
		r.shards[k] = o
		fresh, os = append(fresh, k), append(os, o)
	}
	r.mu.Unlock()
	r.poke()
	if len(fresh) > 0 {
		go r.firstTake(fresh, os)
	}
}

// subscribe subscribes o to shard k's subject; nil when it could not (the poll tries again).
func (r *Router) subscribe(k int, o *owned) *nats.Subscription {
	sub, err := r.nc.Subscribe(Subject(r.cfg.SubjectPrefix, k), r.handler(k, o))
	if err == nil && (r.cfg.PendingMsgs != 0 || r.cfg.PendingBytes != 0) {
		msgs, bytes := nats.DefaultSubPendingMsgsLimit, nats.DefaultSubPendingBytesLimit
		if r.cfg.PendingMsgs != 0 {
			msgs = r.cfg.PendingMsgs
		}
		if r.cfg.PendingBytes != 0 {
			bytes = r.cfg.PendingBytes
		}
		err = sub.SetPendingLimits(msgs, bytes)
	}
	if err != nil {
		r.log.Warn("finals router: subscribe", "shard", k, "err", err)
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		return nil
	}
	return sub
}

// handler runs on the subscription's own goroutine: it holds the shard's messages in the
// subscription until the shard is taken, then queues them for the judging goroutine.
func (r *Router) handler(k int, o *owned) nats.MsgHandler {
	return func(msg *nats.Msg) {
		select {
		case <-o.ready:
		case <-o.gone:
			return
		case <-r.stopped:
			return
		}
		finals, err := Decode(msg.Data)
		if err != nil {
			r.m.decodeErrs.Inc()
			r.log.Error("finals router: a message of finals does not decode: re-syncing its shard", "shard", k, "err", err)
			r.markResync(k, o)
			return
		}
		r.m.received.Add(float64(len(finals)))
		r.m.queued.Add(float64(len(finals)))
		select {
		case r.in <- delivery{k: k, o: o, finals: finals}:
		case <-o.gone:
			r.m.queued.Sub(float64(len(finals)))
		case <-r.stopped:
			r.m.queued.Sub(float64(len(finals)))
		}
	}
}

// ShardsGiven unsubscribes from the shards, drops their waiting finals, lets the batch being
// judged end and gives them back to the judge. It returns when the judge no longer judges
// them.
func (r *Router) ShardsGiven(shards []int) {
	var given []int
	var subs []*nats.Subscription
	var takes []*takeCall
	r.mu.Lock()
	for _, k := range shards {
		o, ok := r.shards[k]
		if !ok {
			continue
		}
		delete(r.shards, k)
		close(o.gone)
		if o.taking != nil {
			o.taking.cancel()
			takes = append(takes, o.taking)
		}
		if o.sub != nil {
			subs = append(subs, o.sub)
		}
		given = append(given, k)
	}
	r.mu.Unlock()
	if len(given) == 0 {
		return
	}
	for _, sub := range subs {
		_ = sub.Unsubscribe() // fails only on a closed connection, which delivers nothing more
	}
	// A batch built before the shards left r.shards may be with the judge: wait for it. Later
	// batches leave them out.
	r.judging.Lock()
	r.judging.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
	// Nor may a Take of them be under way: it could take them back after Give.
	for _, c := range takes {
		<-c.done
	}
	r.judge.Give(given)
}

// firstTake takes newly owned shards, then lets their messages through.
func (r *Router) firstTake(shards []int, os []*owned) {
	<-r.started
	r.retry(r.ctx, "take shards", func() error {
		live, err := r.take(r.ctx, shards, os)
		if err == nil {
			r.mu.Lock()
			for _, i := range live {
				if o := os[i]; !o.isReady {
					o.isReady = true
					close(o.ready)
				}
			}
			r.mu.Unlock()
		}
		return err
	})
	r.poke() // a loss while they were taken is re-synced now
}

// take calls the judge's Take for those of shards (owned as os) still owned, returning their
// indexes. ShardsGiven cancels a Take of a shard it gives, and waits for it to return. Takes
// of different shards may run together; a shard has one at a time.
func (r *Router) take(ctx context.Context, shards []int, os []*owned) (live []int, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The shards' subscriptions must be the server's before the judge reads PostgreSQL: a
	// final stored after that read is then published to a subscription that hears it.
	fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
	err = r.nc.FlushWithContext(fctx)
	fcancel()
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	call := &takeCall{cancel: cancel, done: make(chan struct{})}
	defer func() { cancel(); close(call.done) }()
	var ks []int
	r.mu.Lock()
	for i, k := range shards {
		if r.shards[k] == os[i] {
			os[i].taking = call
			live, ks = append(live, i), append(ks, k)
		}
	}
	r.mu.Unlock()
	if len(ks) == 0 {
		return nil, nil
	}
	defer func() {
		r.mu.Lock()
		for _, i := range live {
			if os[i].taking == call {
				os[i].taking = nil
			}
		}
		r.mu.Unlock()
	}()
	if err := r.judge.Take(ctx, ks); err != nil {
		r.m.takeErrs.Inc()
		return nil, fmt.Errorf("take shards %v: %w", ks, err)
	}
	return live, nil
}

// retry calls f until it succeeds or ctx ends, backing off between attempts.
func (r *Router) retry(ctx context.Context, what string, f func() error) {
	wait := r.cfg.RetryMin
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return
		}
		r.log.Warn("finals router: "+what+": retrying", "err", err, "retry_in", wait.String())
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		wait = min(2*wait, r.cfg.RetryMax)
	}
}

// Run delivers the finals of the owned shards to the judge, watches for lost messages and
// re-syncs, until ctx ends. It unsubscribes from every shard when it returns; ShardsGiven
// still gives them to the judge.
func (r *Router) Run(ctx context.Context) error {
	select {
	case <-r.started:
		return errors.New("finals router: Run called twice")
	default:
	}
	r.ctx = ctx
	close(r.started)
	var wg sync.WaitGroup
	wg.Go(func() { r.watch(ctx) })
	wg.Go(func() { r.resyncs(ctx) })
	r.deliver(ctx)
	wg.Wait()
	close(r.stopped)
	r.mu.Lock()
	for _, o := range r.shards {
		if o.sub != nil {
			_ = o.sub.Unsubscribe()
		}
	}
	r.mu.Unlock()
	return nil
}

// deliver forms batches of up to MaxBatch finals of every owned shard, or what came within
// FlushInterval of the first, and judges them one at a time.
func (r *Router) deliver(ctx context.Context) {
	timer := time.NewTimer(0)
	<-timer.C
	for {
		var batch []delivery
		select {
		case d := <-r.in:
			batch = append(batch, d)
		case <-ctx.Done():
			return
		}
		n := len(batch[0].finals)
		timer.Reset(r.cfg.FlushInterval)
	fill:
		for n < r.cfg.MaxBatch {
			select {
			case d := <-r.in:
				batch = append(batch, d)
				n += len(d.finals)
			case <-timer.C:
				break fill
			case <-ctx.Done():
				return
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		r.judgeBatch(ctx, batch)
		r.m.queued.Sub(float64(n))
	}
}

// judgeBatch hands batch to the judge until it succeeds or ctx ends; each attempt leaves out
// the finals of shards given meanwhile.
func (r *Router) judgeBatch(ctx context.Context, batch []delivery) {
	r.retry(ctx, "judge finals", func() error {
		r.judging.Lock()
		defer r.judging.Unlock()
		finals := r.live(batch)
		if len(finals) == 0 {
			return nil
		}
		if err := r.judge.Judge(ctx, finals); err != nil {
			if ctx.Err() == nil {
				r.m.judgeErrs.Inc()
			}
			return fmt.Errorf("judge %d finals: %w", len(finals), err)
		}
		r.m.batches.Inc()
		return nil
	})
}

// live is the finals of batch whose shards are still owned as they were when they came.
func (r *Router) live(batch []delivery) []store.ResultRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []store.ResultRow
	for _, d := range batch {
		if r.shards[d.k] == d.o {
			out = append(out, d.finals...)
		}
	}
	return out
}
