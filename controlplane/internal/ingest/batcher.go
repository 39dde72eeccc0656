package ingest

import (
	"context"
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

// BatcherOptions tune the Batcher. Zero values take the documented defaults.
type BatcherOptions struct {
	// MaxBatch is the most results in one transaction. Default 1000.
	MaxBatch int
	// FlushInterval is the longest a result waits for its batch to fill. Default 25ms.
	FlushInterval time.Duration
	// Workers is how many batches are written concurrently. Default 2.
	Workers int
	// QueueSize is how many results may wait for a batch before Submit blocks, which slows
	// the agents' streams down (gRPC flow control). Default 4 × MaxBatch.
	QueueSize int
	// WriteTimeout bounds one batch transaction. Default 30s.
	WriteTimeout time.Duration
}

func (o *BatcherOptions) defaults() {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 25 * time.Millisecond
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4 * o.MaxBatch
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
}

// Batcher gathers results from every agent stream into batches: a batch is written when it
// holds MaxBatch results or its oldest result has waited FlushInterval, whichever comes first,
// by one of Workers writers, and each result's done is called with the batch's outcome (nil
// once committed). Under load batches grow while the writers are busy, so throughput rises
// with batch size rather than with transactions.
type Batcher struct {
	log     *slog.Logger
	sink    Sink
	opts    BatcherOptions
	in      chan item
	batches chan []item

	mu     sync.RWMutex // guards closed against Submits in flight
	closed bool

	batchSeconds prometheus.Histogram
	batchSize    prometheus.Histogram
	results      *prometheus.CounterVec
}

type item struct {
	row  store.ResultRow
	done func(error)
}

// NewBatcher returns a Batcher writing to sink. reg may be nil.
func NewBatcher(log *slog.Logger, reg prometheus.Registerer, sink Sink, opts BatcherOptions) (*Batcher, error) {
	opts.defaults()
	b := &Batcher{
		log:     log.With("component", "ingest_batcher"),
		sink:    sink,
		opts:    opts,
		in:      make(chan item, opts.QueueSize),
		batches: make(chan []item),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vantage_ingest_batch_seconds",
			Help: "Time to store and judge one batch of results.", Buckets: prometheus.ExponentialBuckets(0.002, 2, 12)}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vantage_ingest_batch_size",
			Help: "Results per batch.", Buckets: prometheus.ExponentialBuckets(1, 2, 11)}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_ingest_results_total",
			Help: "Results received from agents, by outcome (stored, duplicate, dropped, failed)."}, []string{"outcome"}),
	}
	if reg != nil {
		queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vantage_ingest_queued_results",
			Help: "Results waiting for a batch."}, func() float64 { return float64(len(b.in)) })
		for _, c := range []prometheus.Collector{b.batchSeconds, b.batchSize, b.results, queued} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("ingest batcher metrics: %w", err)
			}
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
	select {
	case b.in <- item{row: row, done: done}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run batches and writes results until ctx ends; then it stops accepting results, writes
// those already queued and returns once every batch is done.
func (b *Batcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range b.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range b.batches {
				b.write(context.WithoutCancel(ctx), batch)
			}
		}()
	}
	b.collect(ctx)
	close(b.batches)
	wg.Wait()
	return nil
}

// collect forms batches from the queue until ctx ends, then drains it.
func (b *Batcher) collect(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var cur []item
	due := false
	for {
		var out chan []item
		if len(cur) >= b.opts.MaxBatch || (due && len(cur) > 0) {
			out = b.batches
		}
		in := b.in
		if len(cur) >= b.opts.MaxBatch {
			in = nil // full: wait for a writer
		}
		select {
		case it := <-in:
			if len(cur) == 0 {
				timer.Reset(b.opts.FlushInterval)
				due = false
			}
			cur = append(cur, it)
		case <-timer.C:
			due = true
		case out <- cur:
			cur, due = make([]item, 0, b.opts.MaxBatch), false
		case <-ctx.Done():
			b.drain(cur)
			return
		}
	}
}

// drain closes the queue to new results and hands what is queued to the writers. Submits
// blocked on a full queue hold the read lock, so the queue is read while the lock is taken.
func (b *Batcher) drain(cur []item) {
	locked := make(chan struct{})
	go func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(locked)
	}()
	add := func(it item) {
		cur = append(cur, it)
		if len(cur) >= b.opts.MaxBatch {
			b.batches <- cur
			cur = make([]item, 0, b.opts.MaxBatch)
		}
	}
	for waiting := true; waiting; {
		select {
		case it := <-b.in:
			add(it)
		case <-locked:
			waiting = false
		}
	}
	for len(b.in) > 0 {
		add(<-b.in)
	}
	if len(cur) > 0 {
		b.batches <- cur
	}
}

func (b *Batcher) write(ctx context.Context, batch []item) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.WriteTimeout)
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
		b.results.WithLabelValues("duplicate").Add(float64(stats.Duplicates))
		b.results.WithLabelValues("dropped").Add(float64(stats.Dropped))
	}
	for _, it := range batch {
		it.done(err)
	}
}
