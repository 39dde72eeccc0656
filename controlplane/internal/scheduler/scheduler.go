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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Store is what the scheduler needs from the database.
type Store interface {
	// SchedulableChecksPage returns active checks of shards after an id, in id order, resolved
	// for job building.
	SchedulableChecksPage(ctx context.Context, shards []int, after uuid.UUID, limit int) ([]store.SchedCheck, error)
	// SchedulableChecksByID returns those of ids that exist and are active.
	SchedulableChecksByID(ctx context.Context, ids []uuid.UUID) ([]store.SchedCheck, error)
	// ShardProgress returns how far the runs of shards were handled (absent: never recorded).
	ShardProgress(ctx context.Context, shards []int) (map[int]time.Time, error)
	// SetShardProgress moves the handled-through time of shards forward.
	SetShardProgress(ctx context.Context, shards []int, through time.Time) error
	// RecordSkippedRuns records runs that did not run (shown per check in the API).
	RecordSkippedRuns(ctx context.Context, runs []store.SkippedRun) (int64, error)
	// OpenLeaseSession opens the dedicated session that holds the shards' leases.
	OpenLeaseSession(ctx context.Context, applicationName string, idleTimeout time.Duration) (*store.LeaseSession, error)
}

var _ Store = (*store.Store)(nil)

// JobGuard protects the jobs the scheduler publishes; *jobguard.Guard implements it.
type JobGuard interface {
	// Seal moves the secrets out of a check's job template and returns them sealed for the
	// agents of each of regions (nil when there are none).
	Seal(template *vantagev1.CheckJob, regions []string) (map[string][]byte, error)
	// Sign signs one job, so that ingest accepts its results.
	Sign(job *vantagev1.CheckJob)
}

// Config tunes the scheduler. Zero values take the documented defaults.
type Config struct {
	// ResyncInterval is how often a replica reloads every active check of its shards from the
	// database, repairing missed change notifications and picking up changed variable values.
	// Default 60s.
	ResyncInterval time.Duration
	// RetryWait is how long a replica waits before opening a new lease session after one
	// failed or was lost. Default 2s.
	RetryWait time.Duration
	// LeasePing is how often a replica proves its lease session alive — it stops scheduling at
	// the first failure — and looks at the other replicas to give up or take shards. Default
	// 1s.
	LeasePing time.Duration
	// LeaseTTL is how long PostgreSQL keeps a silent replica's session (idle_session_timeout),
	// so how long its shards wait at worst for another owner when it vanishes without closing
	// its connection. A replica publishes only while its last successful ping is younger than
	// half of it. Default 10s.
	LeaseTTL time.Duration
	// FlushInterval is how often a replica records how far it handled the runs of its shards
	// (one statement, the shards' progress). Default 1s.
	FlushInterval time.Duration
	// MinConfirmationCadence is the shortest spacing of confirmation runs of VERIFYING and
	// RECOVERING checks (see confirmCadence). Default 10s.
	MinConfirmationCadence time.Duration
	// MaxInFlight bounds published jobs awaiting their JetStream ack. Default 8192.
	MaxInFlight int
	// AckTimeout is how long a published job may wait for its ack before it counts as failed.
	// Default 10s.
	AckTimeout time.Duration
	// BacklogSample is how often a replica reads each region's job consumer (pending jobs and
	// deliveries) to judge whether the region is behind. Default 1s.
	BacklogSample time.Duration
	// ShedAfter is the wait in a region's queue past which the region is behind: its pending
	// jobs exceed what its agents took in that long (see isBehind). Default 2s.
	ShedAfter time.Duration
	// ShedMinPending is the fewest pending jobs of a behind region, the bound alone when its
	// agents take nothing. Default 1000.
	ShedMinPending int
	// NoShedding publishes every run whatever the regions' queues, for measuring publishing
	// into queues that nothing drains (BenchmarkScheduler). Default false: behind regions shed.
	NoShedding bool
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ResyncInterval, 60*time.Second)
	def(&c.RetryWait, 2*time.Second)
	def(&c.LeasePing, time.Second)
	def(&c.LeaseTTL, 10*time.Second)
	def(&c.FlushInterval, time.Second)
	def(&c.MinConfirmationCadence, 10*time.Second)
	def(&c.AckTimeout, 10*time.Second)
	def(&c.BacklogSample, time.Second)
	def(&c.ShedAfter, 2*time.Second)
	if c.ShedMinPending <= 0 {
		c.ShedMinPending = 1000
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 8192
	}
}

// Deps are the scheduler's collaborators.
type Deps struct {
	Store Store      // required
	NATS  *nats.Conn // required: JetStream for jobs, core NATS for change notifications
	// Logger receives the scheduler's log; the caller sets its component. Default: discarded.
	Logger *slog.Logger
	// Registerer receives the scheduler's metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// Now is the clock of due times and lateness. Default time.Now. (The lease is timed with
	// the monotonic clock regardless.)
	Now func() time.Time
	// RunsSkipped is vantage_runs_skipped_total{region,reason}, shared with ingest: the
	// scheduler adds the runs it could not queue before their deadline (reason NOT_QUEUED)
	// and those it shed because their region was behind (SHED).
	// Nil: they are counted only in vantage_scheduler_jobs_skipped_total.
	RunsSkipped *prometheus.CounterVec
	// Guard signs every job and seals its secrets for its region's agents. Nil publishes jobs
	// unsigned, with their secrets in clear: only for tests of the scheduler alone — ingest
	// refuses the results of unsigned jobs.
	Guard JobGuard
	// Shards hears which shards this replica owns: taken after their locks are acquired, given
	// before they are released. Nil: nobody is told.
	Shards ShardListener
}

// ShardListener hears of the shards this replica comes to own and stops owning; the finals
// router (*finals.Router) implements it. ShardsTaken must not block the lease loop: it is
// called with the lease's clock running. ShardsGiven may block briefly: the shards' locks are
// held until it returns, so their next owner starts after it.
type ShardListener interface {
	ShardsTaken(shards []int)
	ShardsGiven(shards []int)
}

// Scheduler publishes a CheckJob per region for every due run of the active checks of the
// shards whose leases it holds. See the package documentation.
type Scheduler struct {
	cfg   Config
	store Store
	nc    *nats.Conn
	log   *slog.Logger
	now   func() time.Time
	m     *metrics
	guard JobGuard
	heard ShardListener // nil: nobody
	// runsSkipped: see Deps.RunsSkipped; skips holds the skipped runs not recorded yet.
	runsSkipped *prometheus.CounterVec
	skips       skipLog

	seq atomic.Uint64 // load sequence numbers
	// owned is the loop's set of shards, for the reloader, resync and Owned.
	owned atomic.Pointer[shard.Set]
	// mark is how far the loop has handled the runs of which shards, for the progress writer.
	mark       atomic.Pointer[progressMark]
	flushErrs  *errorLog
	loadErrLog *errorLog
}

// New returns a scheduler; Run makes it take its share of the shards and schedule them.
func New(cfg Config, deps Deps) (*Scheduler, error) {
	if deps.Store == nil || deps.NATS == nil {
		return nil, errors.New("scheduler: Store and NATS are required")
	}
	cfg.setDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	m, err := newMetrics(deps.Registerer)
	if err != nil {
		return nil, fmt.Errorf("scheduler: register metrics: %w", err)
	}
	sched := &Scheduler{
		cfg: cfg, store: deps.Store, nc: deps.NATS, log: deps.Logger, now: deps.Now, m: m, guard: deps.Guard,
		heard:       deps.Shards,
		runsSkipped: deps.RunsSkipped,
		flushErrs:   &errorLog{log: deps.Logger, every: 10 * time.Second},
		loadErrLog:  &errorLog{log: deps.Logger, every: 10 * time.Second},
	}
	sched.owned.Store(&shard.Set{})
	return sched, nil
}

// Owned returns the shards this scheduler schedules now.
func (s *Scheduler) Owned() shard.Set { return *s.owned.Load() }

// Run holds a lease session until ctx ends, taking its share of the shards and scheduling
// them; when the session fails or is lost it opens another. It returns nil when ctx ends;
// database or NATS trouble is logged and retried, never returned.
func (s *Scheduler) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := s.session(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("scheduler lease session: retrying", "err", err, "retry_in", s.cfg.RetryWait.String())
			select {
			case <-time.After(s.cfg.RetryWait):
			case <-ctx.Done():
			}
		}
	}
	return nil
}
