package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Sink stores and judges one batch of results in one transaction; *evaluator.Evaluator
// implements it.
type Sink interface {
	IngestBatch(ctx context.Context, rows []store.ResultRow) (store.IngestStats, error)
}

var _ Sink = (*evaluator.Evaluator)(nil)

// ErrStopped is returned by Submit once the batcher has stopped.
var ErrStopped = errors.New("ingest batcher stopped")

// BatcherConfig tunes the Batcher. Zero values take the documented defaults.
type BatcherConfig struct {
	// MaxBatch is the most results in one transaction. Default 1000.
	MaxBatch int
	// FlushInterval is the longest a result waits for its batch to fill. Default 25ms.
	FlushInterval time.Duration
	// Lanes is how many batches are written concurrently. Results are assigned to a lane by
	// their check, so concurrent transactions of one replica never wait on each other's check
	// row locks. Default 2.
	Lanes int
	// QueueSize is how many results may wait for a batch, per lane, before Submit blocks, which
	// slows the agents' streams down (gRPC flow control). Default 2 × MaxBatch.
	QueueSize int
	// WriteTimeout bounds one batch transaction. Default 30s.
	WriteTimeout time.Duration
}

// BatcherDeps are what the Batcher works with.
type BatcherDeps struct {
	Sink Sink // required: stores and judges the batches
	// Logger receives the batcher's log (component ingest_batcher). Default: discarded.
	Logger *slog.Logger
	// Registerer takes the batcher's metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// RunsSkipped is vantage_runs_skipped_total (NewRunsSkipped), registered by the caller.
	// Nil: the Batcher makes and registers its own.
	RunsSkipped *prometheus.CounterVec
}

func (o *BatcherConfig) defaults() {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 25 * time.Millisecond
	}
	if o.Lanes <= 0 {
		o.Lanes = 2
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 2 * o.MaxBatch
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
}

// Batcher gathers results from every agent stream into batches. Each lane (results of a fixed
// share of the checks) forms its own batches: a batch is written when it holds MaxBatch results
// or its oldest result has waited FlushInterval, whichever comes first, and each result's done
// is called with the batch's outcome (nil once committed). While a lane's writer is busy its
// next batch keeps filling, so under load throughput grows with batch size rather than with
// the number of transactions.
type Batcher struct {
	log   *slog.Logger
	sink  Sink
	cfg   BatcherConfig
	lanes []*lane

	mu     sync.RWMutex // guards closed against Submits in flight
	closed bool

	batchSeconds prometheus.Histogram
	batchSize    prometheus.Histogram
	results      *prometheus.CounterVec
	runs         *runMetrics
}

type lane struct {
	in      chan item
	batches chan []item
}

type item struct {
	row  store.ResultRow
	done func(error)
}

// NewBatcher returns a Batcher writing to deps.Sink.
func NewBatcher(cfg BatcherConfig, deps BatcherDeps) (*Batcher, error) {
	if deps.Sink == nil {
		return nil, errors.New("ingest batcher: a sink is required")
	}
	cfg.defaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	b := &Batcher{
		log:  deps.Logger.With("component", "ingest_batcher"),
		sink: deps.Sink,
		cfg:  cfg,
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vantage_ingest_batch_seconds",
			Help: "Time to store and judge one batch of results.", Buckets: prometheus.ExponentialBuckets(0.002, 2, 12)}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vantage_ingest_batch_size",
			Help: "Results per batch.", Buckets: prometheus.ExponentialBuckets(1, 2, 11)}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_ingest_results_total",
			Help: "Results received from agents, by outcome (stored, skipped, duplicate, dropped, failed)."}, []string{"outcome"}),
		runs: newRunMetrics(deps.RunsSkipped),
	}
	if deps.RunsSkipped == nil {
		b.runs.skipped = NewRunsSkipped()
	}
	for range cfg.Lanes {
		b.lanes = append(b.lanes, &lane{in: make(chan item, cfg.QueueSize), batches: make(chan []item)})
	}
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vantage_ingest_queued_results",
		Help: "Results waiting for a batch."}, func() float64 {
		n := 0
		for _, l := range b.lanes {
			n += len(l.in)
		}
		return float64(n)
	})
	cs := []prometheus.Collector{b.batchSeconds, b.batchSize, b.results, queued, b.runs.late, b.runs.lateness}
	if deps.RunsSkipped == nil {
		cs = append(cs, b.runs.skipped)
	}
	for _, c := range cs {
		if err := deps.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("ingest batcher metrics: %w", err)
		}
	}
	return b, nil
}

// Submit queues a result; done is called exactly once, from another goroutine, with nil once
// the result is committed (or was a duplicate, or its check no longer exists) or with the
// error that kept it from being stored. Submit blocks while the queue is full, until ctx ends.
func (b *Batcher) Submit(ctx context.Context, row store.ResultRow, done func(error)) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return ErrStopped
	}
	l := b.lanes[int(binary.BigEndian.Uint32(row.CheckID[12:]))%len(b.lanes)]
	select {
	case l.in <- item{row: row, done: done}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run batches and writes results until ctx ends; then it stops accepting results, writes
// those already queued and returns once every batch is done.
func (b *Batcher) Run(ctx context.Context) error {
	// Once ctx ends, close the queues to Submit. Submits blocked on a full queue hold the read
	// lock, so the lanes keep reading their queues until the lock is taken.
	locked := make(chan struct{})
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(locked)
	}()
	var wg sync.WaitGroup
	for _, l := range b.lanes {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for batch := range l.batches {
				b.write(context.WithoutCancel(ctx), batch)
			}
		}()
		go func() {
			defer wg.Done()
			b.collect(ctx, l, locked)
			close(l.batches)
		}()
	}
	wg.Wait()
	return nil
}

// collect forms a lane's batches until ctx ends, then drains its queue.
func (b *Batcher) collect(ctx context.Context, l *lane, locked <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var cur []item
	due := false
	for {
		var out chan []item
		if len(cur) >= b.cfg.MaxBatch || (due && len(cur) > 0) {
			out = l.batches
		}
		in := l.in
		if len(cur) >= b.cfg.MaxBatch {
			in = nil // full: wait for the writer
		}
		select {
		case it := <-in:
			if len(cur) == 0 {
				timer.Reset(b.cfg.FlushInterval)
				due = false
			}
			cur = append(cur, it)
		case <-timer.C:
			due = true
		case out <- cur:
			cur, due = make([]item, 0, b.cfg.MaxBatch), false
		case <-ctx.Done():
			b.drain(l, cur, locked)
			return
		}
	}
}

// drain hands what is queued in a lane to its writer, reading until the queue is closed.
func (b *Batcher) drain(l *lane, cur []item, locked <-chan struct{}) {
	add := func(it item) {
		cur = append(cur, it)
		if len(cur) >= b.cfg.MaxBatch {
			l.batches <- cur
			cur = make([]item, 0, b.cfg.MaxBatch)
		}
	}
	for waiting := true; waiting; {
		select {
		case it := <-l.in:
			add(it)
		case <-locked:
			waiting = false
		}
	}
	for len(l.in) > 0 {
		add(<-l.in)
	}
	if len(cur) > 0 {
		l.batches <- cur
	}
}

func (b *Batcher) write(ctx context.Context, batch []item) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
	defer cancel()
	rows := make([]store.ResultRow, len(batch))
	for i := range batch {
		rows[i] = batch[i].row
	}
	start := time.Now()
	stats, err := b.sink.IngestBatch(ctx, rows)
	b.batchSeconds.Observe(time.Since(start).Seconds())
	b.batchSize.Observe(float64(len(batch)))
	if err != nil {
		b.results.WithLabelValues("failed").Add(float64(len(batch)))
		b.log.Error("store result batch", "results", len(batch), "err", err)
		err = fmt.Errorf("store results: %w", err)
	} else {
		b.results.WithLabelValues("stored").Add(float64(stats.Stored))
		b.results.WithLabelValues("skipped").Add(float64(stats.Skipped))
		b.runs.account(stats.Accepted)
		b.results.WithLabelValues("duplicate").Add(float64(stats.Duplicates))
		b.results.WithLabelValues("dropped").Add(float64(stats.Dropped))
	}
	for _, it := range batch {
		it.done(err)
	}
}
