// Package worker pulls check jobs from JetStream for the agent's free probe slots, runs their
// attempts, streams every attempt's result to the control plane, and acks a job only after the
// control plane has confirmed that all of its results are stored.
//
// Each region has one durable pull consumer shared by every agent of the region, and a second
// one for its browser jobs (wire.BrowserJobSubject), which only agents with a browser
// (BrowserConcurrency > 0) consume. The control plane creates the stream and the consumers; an
// agent uses them as they are, and creates a missing consumer itself (never overwriting one),
// so start order does not matter. One slot semaphore of size Concurrency is shared by all
// regions' jobs, another of size BrowserConcurrency by their browser jobs.
//
// Probing is decoupled from delivery. A slot is taken before a job is fetched and given back
// as soon as the job's attempts end; its results go to the uplink, which streams them
// pipelined and batched, and the job's message is settled (acked or handed back) when the
// control plane has answered for every one of them. Until then the message stays held, and
// one ticker keeps every held message in progress (InProgress), so neither a long probe nor a
// result waiting for its ack is redelivered after AckWait. The uplink bounds the results
// waiting for acks (uplink.Config.MaxUnacked): past it, finished jobs wait to submit, which
// throttles fetching.
//
// Fetching: each fetch asks for every free slot the queue may use (its share when queues share
// slots, at most MaxFetch), as one pull request that waits up to PollWait and delivers jobs as
// they arrive. When the agent is nearly full it lingers up to FetchLinger for more slots to
// free, so fetches stay batched under load instead of one per finished job.
//
// A job is:
//   - dropped (Term) when it cannot be decoded (nothing identifies it to report);
//   - reported as not run (CheckResult.not_run_reason EXPIRED) and acked once that is stored,
//     when its deadline has passed — late, or redelivered after its agent died; a redelivered
//     job whose run is still current is run;
//   - reported as not run (SHED) and acked once that is stored, when it comes late under
//     overload on its first delivery and its check's previous job on this agent ran: late
//     jobs are shed in rotation over the checks (rotation.go), so no check loses more than
//     every other run;
//   - acked once the results of its attempts are stored (attempts stop at the first pass);
//   - handed back (Nak, redelivered to any agent of the region) when a result is not stored,
//     not acked, or the agent stops before the job is done; on its last delivery, a job the
//     stopping agent cannot run is reported as not run (SHUTDOWN) instead.
//
// On shutdown (ctx done) the worker stops fetching, hands back jobs that arrive from a pending
// fetch, lets running jobs finish for DrainTimeout, then aborts the rest and hands them back at
// once, so no job waits for its AckWait; then it waits (up to ResultTimeout) for the acks of
// the results already sent.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Runner runs one attempt of a job and returns its result. The attempt's deadline (the job's
// timeout) is in ctx. A target that fails gives a failing result; nil means the agent itself
// could not probe (ctx cancelled, internal error) and the attempt must not be reported.
type Runner interface {
	Run(ctx context.Context, job *vantagev1.CheckJob, attempt int) *vantagev1.CheckResult
}

// Uplink delivers results to the control plane.
type Uplink interface {
	// Submit queues one result and returns; done is told later whether the control plane
	// stored it, or the error that means no answer will come. An error from Submit means the
	// result was not queued (and done is not called).
	Submit(ctx context.Context, r *vantagev1.CheckResult, done func(stored bool, err error)) error
	// WaitReady blocks until results can be sent (a registered session is up) or ctx ends.
	WaitReady(ctx context.Context) error
}

// Config configures a Worker. Zero values take the documented defaults.
type Config struct {
	AgentID     string   // reported in every result
	Regions     []string // "cloud:…" regions served (required)
	Concurrency int      // probe slots shared by all regions (required, >= 1)
	// BrowserConcurrency is the slots for browser jobs, shared by all regions; 0 means the
	// agent has no browser and consumes no browser jobs.
	BrowserConcurrency int

	// AckWait is how long JetStream waits for an ack (or progress) before it redelivers a job
	// to another agent, for consumers this worker creates. Default wire.JobAckWait.
	AckWait time.Duration
	// MaxDeliver is how many times a job is delivered before JetStream gives up on it, for
	// consumers this worker creates. Default 5.
	MaxDeliver int
	// PollWait is how long an idle long-poll waits for a job; it also bounds how long shutdown
	// waits for a pending fetch. Default 5s.
	PollWait time.Duration
	// ProgressInterval is how often a running job tells JetStream it is still in progress.
	// Default 5s; must be below AckWait.
	ProgressInterval time.Duration
	// ResultTimeout bounds the wait to submit a result, and how long a job whose results wait
	// for their acks is kept in progress; after it, the job is left to AckWait. Default 30s.
	ResultTimeout time.Duration
	// FetchLinger is how long a nearly full agent waits for more slots to free before it
	// fetches, so that fetches stay batched. Default 5ms.
	FetchLinger time.Duration
	// MaxFetch bounds the jobs one fetch asks for. The JetStream client allocates buffers the
	// size of the request for every fetch, so a request per thousands of free slots would cost
	// more than a few requests in a row. Default 512.
	MaxFetch int
	// AttemptTimeout is an attempt's deadline when the job carries no timeout. Default 30s.
	AttemptTimeout time.Duration
	// RetryNakDelay delays redelivery of a job whose result the control plane did not store or
	// the runner could not produce, so a failing store is not hammered. Default 1s. Jobs handed
	// back on shutdown or a lost stream are redelivered at once.
	RetryNakDelay time.Duration
	// DrainTimeout is how long running jobs may finish after ctx ends before they are aborted
	// and handed back. Default 10s.
	DrainTimeout time.Duration
	// Now is the clock for deadlines and result timestamps. Default time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.AckWait, wire.JobAckWait)
	def(&c.PollWait, 5*time.Second)
	def(&c.ProgressInterval, min(5*time.Second, c.AckWait/2))
	def(&c.ResultTimeout, 30*time.Second)
	def(&c.AttemptTimeout, 30*time.Second)
	def(&c.RetryNakDelay, time.Second)
	def(&c.DrainTimeout, 10*time.Second)
	def(&c.FetchLinger, 5*time.Millisecond)
	if c.MaxFetch <= 0 {
		c.MaxFetch = 512
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 5
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Worker consumes jobs; see the package documentation.
type Worker struct {
	cfg    Config
	js     jetstream.JetStream
	runner Runner
	up     Uplink
	log    *slog.Logger
	m      *metrics
	queues []queue
	rot    *rotation // which late jobs run (rotation.go)

	heldMu    sync.Mutex
	held      map[*tracked]struct{} // fetched and not yet settled
	unsettled sync.WaitGroup        // one per held message
}

// queue is one consumer the worker fetches from: a region's jobs or its browser jobs.
type queue struct {
	region      string
	consumer    string // durable name
	subject     string // filter subject
	description string
	slots       chan struct{} // a token per taken slot; shared by the queues of one kind
	share       int           // the most slots one fetch of this queue may take (≤ MaxFetch)
	maxDeliver  *atomic.Int64 // the consumer's MaxDeliver, once known
	// ready: the consumer exists and the last fetch worked. A consumer or stream that vanished
	// (NATS lost its store, or was replaced) makes the queue not ready until it is back.
	ready *atomic.Bool
}

// Deps are the worker's collaborators. JetStream, Runner and Uplink are required; Logger
// defaults to discarding and Registerer to a private registry.
type Deps struct {
	JetStream  jetstream.JetStream
	Runner     Runner
	Uplink     Uplink
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// New returns a worker; it starts consuming when Run is called.
func New(cfg Config, deps Deps) (*Worker, error) {
	cfg.setDefaults()
	switch {
	case deps.JetStream == nil || deps.Runner == nil || deps.Uplink == nil:
		return nil, errors.New("worker: JetStream, a runner and an uplink are required")
	case len(cfg.Regions) == 0:
		return nil, errors.New("worker: no regions")
	case cfg.Concurrency < 1:
		return nil, fmt.Errorf("worker: concurrency %d, want >= 1", cfg.Concurrency)
	case cfg.BrowserConcurrency < 0:
		return nil, fmt.Errorf("worker: browser concurrency %d, want >= 0", cfg.BrowserConcurrency)
	case cfg.ProgressInterval >= cfg.AckWait:
		return nil, fmt.Errorf("worker: progress interval %s must be below AckWait %s", cfg.ProgressInterval, cfg.AckWait)
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	w := &Worker{
		cfg:    cfg,
		js:     deps.JetStream,
		runner: deps.Runner,
		up:     deps.Uplink,
		log:    deps.Logger.With("component", "worker"),
		m:      newMetrics(deps.Registerer),
		held:   map[*tracked]struct{}{},
		rot:    newRotation(),
	}
	slots := make(chan struct{}, cfg.Concurrency)
	for _, r := range cfg.Regions {
		w.queues = append(w.queues, queue{region: r, consumer: wire.ConsumerName(r), subject: wire.JobSubject(r),
			description: "agents of " + r, slots: slots, share: max(1, min(cfg.MaxFetch, cfg.Concurrency/len(cfg.Regions))),
			ready: new(atomic.Bool), maxDeliver: new(atomic.Int64)})
	}
	if cfg.BrowserConcurrency > 0 {
		browserSlots := make(chan struct{}, cfg.BrowserConcurrency)
		for _, r := range cfg.Regions {
			w.queues = append(w.queues, queue{region: r, consumer: wire.BrowserConsumerName(r), subject: wire.BrowserJobSubject(r),
				description: "browser agents of " + r, slots: browserSlots, share: max(1, min(cfg.MaxFetch, cfg.BrowserConcurrency/len(cfg.Regions))),
				ready: new(atomic.Bool), maxDeliver: new(atomic.Int64)})
		}
	}
	return w, nil
}

// Ready reports whether every consumer (each region's, and its browser consumer on an agent
// with a browser) is in place now.
func (w *Worker) Ready() bool {
	for _, q := range w.queues {
		if !q.ready.Load() {
			return false
		}
	}
	return true
}

// Run consumes jobs until ctx ends, then drains (see the package documentation) and returns
// nil. Losing NATS or the control plane is not an error: the worker waits and carries on.
func (w *Worker) Run(ctx context.Context) error {
	// Jobs run under jobCtx, which outlives ctx by at most DrainTimeout.
	jobCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		w.keepInProgress(stopProgress)
	}()
	defer func() {
		close(stopProgress)
		<-progressDone
	}()
	var loops, jobs sync.WaitGroup
	for _, q := range w.queues {
		loops.Add(1)
		go func() {
			defer loops.Done()
			w.consume(ctx, jobCtx, q, &jobs)
		}()
	}
	<-ctx.Done()
	w.log.Info("stopping: no more fetches; letting running jobs finish", "drain_timeout", w.cfg.DrainTimeout)
	drain := time.AfterFunc(w.cfg.DrainTimeout, func() {
		w.log.Warn("drain timeout: aborting running jobs and handing them back")
		abort()
	})
	defer drain.Stop()
	loops.Wait()
	jobs.Wait()
	settled := make(chan struct{})
	go func() {
		w.unsettled.Wait()
		close(settled)
	}()
	select {
	case <-settled:
	case <-time.After(w.cfg.ResultTimeout):
		w.log.Warn("stopping with results still waiting for the control plane's ack; their jobs will be redelivered after AckWait")
	}
	// Acks and Naks are fire-and-forget publishes; make sure they left before NATS is closed.
	if err := w.js.Conn().FlushTimeout(2 * time.Second); err != nil {
		w.log.Warn("flush acks on shutdown", "err", err)
	}
	return nil
}

// consume is one queue's fetch loop.
func (w *Worker) consume(ctx, jobCtx context.Context, q queue, jobs *sync.WaitGroup) {
	region := q.region
	log := w.log.With("region", region, "consumer", q.consumer)
	var (
		cons     jetstream.Consumer
		failures int
	)
	ready := q.ready
	pause := func(err error, what string) {
		failures++
		d := retryDelay(failures)
		log.Warn(what, "err", err, "retry_in", d)
		sleep(ctx, d)
	}
	for ctx.Err() == nil {
		if cons == nil {
			c, err := w.ensureConsumer(ctx, q)
			if err != nil {
				ready.Store(false)
				if ctx.Err() == nil {
					pause(err, "cannot set up the region's job consumer")
				}
				continue
			}
			cons = c
			ready.Store(true)
		}
		// Take no job that cannot be reported: while the control plane is unreachable, the
		// region's other agents get the jobs.
		if err := w.up.WaitReady(ctx); err != nil {
			if ctx.Err() == nil {
				pause(err, "uplink unavailable")
			}
			continue
		}
		if !acquire(ctx, q.slots) {
			return
		}
		n := w.gather(ctx, q)
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(w.cfg.PollWait))
		if err != nil {
			release(q.slots, n)
			cons = nil
			ready.Store(false)
			pause(err, "fetch jobs")
			continue
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			if ctx.Err() != nil { // stopping: hand the job straight back
				w.handBack(msg, 0, log)
				release(q.slots, 1)
				continue
			}
			jobs.Add(1)
			go func() {
				defer jobs.Done()
				w.handle(jobCtx, q, msg)
				release(q.slots, 1)
			}()
		}
		release(q.slots, n-got)
		if err := batch.Error(); err != nil {
			cons = nil // re-create the consumer in case it was deleted
			ready.Store(false)
			pause(err, "fetch jobs")
			continue
		}
		failures = 0
	}
}

// gather takes, beyond the one slot already held, the free slots one fetch of q may use, and
// returns how many it holds. When that is under an eighth of the queue's share — the agent is
// nearly full — it waits up to FetchLinger for more to free, trading a few milliseconds of a
// few slots for fetches that carry many jobs each.
func (w *Worker) gather(ctx context.Context, q queue) int {
	n := 1 + tryAcquire(q.slots, q.share-1)
	if target := q.share / 8; n < target {
		linger := time.NewTimer(w.cfg.FetchLinger)
		defer linger.Stop()
		for n < target {
			select {
			case q.slots <- struct{}{}:
				n++
			case <-linger.C:
				return n
			case <-ctx.Done():
				return n
			}
		}
	}
	return n
}

// ensureConsumer returns the queue's durable consumer, which every agent of the region shares.
// The control plane owns its configuration (it creates the stream and the consumers at start-up,
// and may run NATS clustered with replicas the agent does not know about), so an existing
// consumer is used as it is. Only when the stream exists without this region's consumer does
// the agent create it, with the same settings as the control plane, so that agents may start
// before or after the control plane and before or after each other.
func (w *Worker) ensureConsumer(ctx context.Context, q queue) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name := q.consumer
	c, err := w.js.Consumer(ctx, wire.JobStream, name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		c, err = w.js.CreateConsumer(ctx, wire.JobStream, w.consumerConfig(q))
		if errors.Is(err, jetstream.ErrConsumerExists) { // another agent (or the control plane) won the race
			c, err = w.js.Consumer(ctx, wire.JobStream, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s on stream %s: %w", name, wire.JobStream, err)
	}
	q.maxDeliver.Store(int64(c.CachedInfo().Config.MaxDeliver))
	if aw := c.CachedInfo().Config.AckWait; aw > 0 && aw <= w.cfg.ProgressInterval {
		w.log.Warn("the consumer's AckWait is not above the progress interval: long jobs may be redelivered while they run",
			"region", q.region, "consumer", name, "ack_wait", aw, "progress_interval", w.cfg.ProgressInterval)
	}
	return c, nil
}

// consumerConfig mirrors the control plane's consumer configuration (controlplane/internal/
// jobqueue.ConsumerConfig and BrowserConsumerConfig), except that AckWait and MaxDeliver come
// from Config.
func (w *Worker) consumerConfig(q queue) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       q.consumer,
		Description:   q.description,
		FilterSubject: q.subject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.cfg.AckWait,
		MaxDeliver:    w.cfg.MaxDeliver,
		// A safety bound for the whole region; each agent's own bound is its slots.
		MaxAckPending: 50000,
	}
}

// acquire takes one of slots, waiting for one to free up; false when ctx ends first.
func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// tryAcquire takes up to n free slots without waiting and reports how many it took.
func tryAcquire(slots chan struct{}, n int) int {
	for i := range n {
		select {
		case slots <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

func release(slots chan struct{}, n int) {
	for range n {
		<-slots
	}
}

// retryDelay is a jittered exponential delay for the n-th consecutive failure: 100ms doubling
// to 10s.
func retryDelay(n int) time.Duration {
	d := min(100*time.Millisecond<<min(n-1, 7), 10*time.Second)
	return d/2 + rand.N(d/2+1) //nolint:gosec // jitter, not a secret
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
