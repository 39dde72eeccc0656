package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// PartitionStore is the partition maintenance the Maintainer drives; *store.Store implements it.
type PartitionStore interface {
	EnsureResultPartitions(ctx context.Context, from, to time.Time) ([]string, error)
	DropResultPartitions(ctx context.Context, before time.Time) ([]string, int64, error)
	EnsureDedupePartitions(ctx context.Context, from, to time.Time) ([]string, error)
	DropDedupePartitions(ctx context.Context, before time.Time) ([]string, int64, error)
	PruneSkippedRuns(ctx context.Context, now time.Time) (int64, error)
	PruneRollups(ctx context.Context, before time.Time) (int64, error)
	FoldMonthlyStats(ctx context.Context, month time.Time) (int64, error)
}

var _ PartitionStore = (*store.Store)(nil)

// MaintainerConfig tunes the Maintainer. Zero values take the documented defaults.
type MaintainerConfig struct {
	// RetentionDays is how many whole UTC days of results are kept besides today
	// (VANTAGE_RESULT_RETENTION_DAYS). Default 30.
	RetentionDays int
	// DaysAhead is how many daily result partitions exist beyond today. Default 2.
	DaysAhead int
	// DedupeWindow is how long ingest de-duplication keys are kept, by their run's scheduled
	// time. It must exceed the longest a job can be redelivered after it was due
	// (wire.JobMaxAge plus a job's run time). Default 3h.
	DedupeWindow time.Duration
	// Interval is how often partitions are checked. Default 10m.
	Interval time.Duration
	// RetryInterval is how soon a failed round is retried. Default 30s.
	RetryInterval time.Duration
}

// MaintainerDeps are what the Maintainer works with.
type MaintainerDeps struct {
	Store PartitionStore // required
	// Logger receives the maintainer's log (component partitions). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Registerer takes the maintainer's metrics. Default: a private registry.
	Registerer prometheus.Registerer
}

func (o *MaintainerConfig) defaults() {
	if o.RetentionDays <= 0 {
		o.RetentionDays = 30
	}
	if o.DaysAhead <= 0 {
		o.DaysAhead = 2
	}
	if o.DedupeWindow <= 0 {
		o.DedupeWindow = 3 * time.Hour
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Minute
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = 30 * time.Second
	}
}

// Maintainer keeps the time partitions of check_results (daily: yesterday to DaysAhead days
// ahead exist, days older than RetentionDays are dropped) and ingest_dedupe (hourly: the last
// hour to three hours ahead exist, hours older than DedupeWindow are dropped), and deletes
// skipped runs past their two days of retention and rollups past store.RollupRetention, and
// folds the last closed month's daily run counters into monthly ones (store.FoldMonthlyStats).
// Every replica may run one: the store serializes the DDL and folds a month once.
type Maintainer struct {
	log     *slog.Logger
	now     func() time.Time
	store   PartitionStore
	cfg     MaintainerConfig
	created prometheus.Counter
	dropped prometheus.Counter
	errs    prometheus.Counter
}

// NewMaintainer returns a Maintainer; it works when Run (or Maintain) is called.
func NewMaintainer(cfg MaintainerConfig, deps MaintainerDeps) (*Maintainer, error) {
	if deps.Store == nil {
		return nil, errors.New("partition maintainer: a store is required")
	}
	cfg.defaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	m := &Maintainer{
		log: deps.Logger.With("component", "partitions"), now: deps.Now, store: deps.Store, cfg: cfg,
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_partitions_created_total",
			Help: "Partitions of check_results and ingest_dedupe created."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_partitions_dropped_total",
			Help: "Partitions of check_results and ingest_dedupe dropped by retention."}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_partitions_errors_total",
			Help: "Failed partition maintenance rounds."}),
	}
	for _, c := range []prometheus.Collector{m.created, m.dropped, m.errs} {
		if err := deps.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("partition metrics: %w", err)
		}
	}
	return m, nil
}

// Run maintains partitions at once and then every Interval until ctx ends. A failed round is
// logged, counted in vantage_partitions_errors_total and retried after RetryInterval; it never
// stops the control plane: partitions are made hours (results: days) ahead, and rows without
// a partition still land in the default partition, so ingest goes on meanwhile.
func (m *Maintainer) Run(ctx context.Context) error {
	for {
		wait := m.cfg.Interval
		if err := m.Maintain(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			m.errs.Inc()
			m.log.Warn("partition maintenance failed; retrying", "err", err, "retry_in", m.cfg.RetryInterval)
			wait = m.cfg.RetryInterval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Maintain runs one round: create the partitions due ahead, drop those past retention.
func (m *Maintainer) Maintain(ctx context.Context) error {
	now := m.now().UTC()
	today := now.Truncate(24 * time.Hour)
	hour := now.Truncate(time.Hour)
	var errs []error
	created, err := m.store.EnsureResultPartitions(ctx, today.AddDate(0, 0, -1), today.AddDate(0, 0, m.cfg.DaysAhead))
	errs = append(errs, err)
	more, err := m.store.EnsureDedupePartitions(ctx, hour.Add(-time.Hour), hour.Add(3*time.Hour))
	errs = append(errs, err)
	created = append(created, more...)

	dropped, stray, err := m.store.DropResultPartitions(ctx, today.AddDate(0, 0, -m.cfg.RetentionDays))
	errs = append(errs, err)
	moreDropped, strayKeys, err := m.store.DropDedupePartitions(ctx, now.Add(-m.cfg.DedupeWindow))
	errs = append(errs, err)
	dropped = append(dropped, moreDropped...)
	skipped, err := m.store.PruneSkippedRuns(ctx, now)
	errs = append(errs, err)
	rollups, err := m.store.PruneRollups(ctx, now.Add(-store.RollupRetention))
	errs = append(errs, err)
	// The month before this one: closed, so its later verdicts are stragglers.
	folded, err := m.store.FoldMonthlyStats(ctx, time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.UTC))
	errs = append(errs, err)

	m.created.Add(float64(len(created)))
	m.dropped.Add(float64(len(dropped)))
	if len(created)+len(dropped) > 0 || stray+strayKeys+skipped+rollups+folded > 0 {
		m.log.Info("partitions maintained", "created", created, "dropped", dropped,
			"default_results_pruned", stray, "default_keys_pruned", strayKeys, "skipped_runs_pruned", skipped,
			"rollups_pruned", rollups, "monthly_counters_folded", folded)
	}
	return errors.Join(errs...)
}
