// Package evaluator turns final-attempt results into run verdicts and drives each check's
// status machine (docs/architecture.md, "Check status machine"), writing check incidents and outbox rows in
// the same transaction as the results that caused them.
//
// # Verdicts and when a run is complete
//
// A run is one job id: the scheduler publishes one job per test region under the same id, and
// each region's agent reports attempts; only a region's final attempt counts (the first final
// attempt stored for a region, should a redelivered job produce another). Results of a run
// arrive separately, possibly at different control-plane replicas, so runs are aggregated in
// PostgreSQL (check_runs) under the check's lock (its check_progress row). A run gets its verdict when the first of
// these holds:
//
//   - every region expected for it (the check's test_regions when its first result came) has
//     reported a final attempt;
//   - its deadline has passed: max(scheduled_at + timeout × RunAttempts, first report) + RunGrace,
//     timeout being the check's timeout_ms or DefaultTimeout. The periodic sweep (Run) judges
//     runs whose deadline passes without further results;
//   - a later run of the same check gets its verdict: runs are judged in scheduled order, so an
//     earlier pending run is judged first with what it has.
//
// The verdict fails as the check's region_quorum says (runFails): by default when a majority of
// the regions that reported failed (more failing than passing regions; a tie passes). Regions that never reported do not count either way: a run
// with no report never exists, so a region without agents cannot flip a check by itself, and a
// run whose only reports fail is failing however many regions are silent.
//
// A run is judged once. Results of a run scheduled at or before the check's last judged run
// (check_progress.last_run_at) are stored but not judged ("late"). Paused checks store results but
// their runs are discarded without a verdict.
//
// # Transactions
//
// IngestBatch runs in the ingest transaction (store.IngestResults) with the batch's checks
// locked in id order; Sweep in its own (store.JudgeDueRuns). Both read the checks' pending
// runs, apply Step per verdict, and write runs, check state, incidents and outbox rows before
// commit. The lock of a check and the progress every judged run moves are a narrow row of its
// own (check_progress): a steady check costs one small row version per run, not a copy of its
// configuration, and the check's row is written only when its state changes. Neither the
// scheduler nor the API takes that lock. OnStateChange is called after commit for each check
// whose state changed.
//
// # The owner's judging
//
// By default (VANTAGE_JUDGE=owner) an Owner judges the checks of the shards its replica owns
// (the scheduler's lease) in memory instead: ingest stores results without judging them and hands each final attempt to the
// shard's owner (Judge), whose memory holds the pending runs; a run judged in the batch that
// completes it never touches check_runs. The judgment is the same judge, over a Tx whose
// pending runs are read from and written to memory (ownerTx), in a transaction of its own
// (store.JudgeChecks) that reads the checks without locking them. Fencing replaces the lock:
// the progress write moves check_progress.last_run_at only from the value read, and fails with
// store.ErrFenced otherwise, so that two owners overlapping during a handover never judge one
// run twice (the loser re-reads the checks, and the runs the other judged are late). Every
// CheckpointInterval the runs held longer than it are written to check_runs; on Take the
// shard's next owner reads them back, with the final attempts stored since each check's last
// judged run (ingest_dedupe gives their scheduled time), and merges those as it merges arriving
// ones. The owner's sweep judges runs past their deadline from memory.
package evaluator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Store is the persistence the evaluator drives; *store.Store implements it.
type Store interface {
	IngestResults(ctx context.Context, rows []store.ResultRow, judge store.JudgeFunc) (store.IngestStats, error)
	JudgeDueRuns(ctx context.Context, now time.Time, limit int, judge store.JudgeFunc) (int, error)
	// JudgeChecks, ShardRuns, ShardFinals and CheckpointRuns serve the owner's judging
	// (owner.go).
	JudgeChecks(ctx context.Context, refs []store.CheckRef, finals []store.ResultRow, judge store.JudgeFunc) error
	ShardRuns(ctx context.Context, shards []int) ([]store.Run, error)
	ShardFinals(ctx context.Context, shards []int, since time.Time) ([]store.ResultRow, error)
	CheckpointRuns(ctx context.Context, runs []store.Run) error
}

var _ Store = (*store.Store)(nil)

// Tx is what the evaluator does inside a pipeline transaction; *store.PipelineTx implements it.
type Tx interface {
	PendingRuns(ctx context.Context, checks []*store.PipelineCheck) ([]store.Run, error)
	SaveRuns(ctx context.Context, runs []store.Run) error
	DeleteRuns(ctx context.Context, runs []store.Run) error
	UpdateCheckStates(ctx context.Context, states []store.CheckState) error
	OpenIncident(ctx context.Context, orgID, checkID uuid.UUID, startedAt time.Time) (store.Incident, error)
	CloseIncident(ctx context.Context, orgID, checkID uuid.UUID, endedAt time.Time) (store.Incident, bool, error)
	CurrentIncident(ctx context.Context, orgID, checkID uuid.UUID) (store.Incident, bool, error)
	InsertOutbox(ctx context.Context, events []store.OutboxEvent) error
	// CountVerdicts adds judged runs to their checks' daily counters (status page uptime).
	CountVerdicts(ctx context.Context, verdicts []store.Verdict) error
	// InMaintenance tells which of the checks sit in an active maintenance window at now.
	InMaintenance(ctx context.Context, checks []*store.PipelineCheck, now time.Time) (map[uuid.UUID]bool, error)
	// Degradations and SaveDegradation read and write regional degradation (regional.go).
	Degradations(ctx context.Context, checks []*store.PipelineCheck) (map[uuid.UUID]store.Degradation, error)
	SaveDegradation(ctx context.Context, d store.Degradation) error
	// Slowness and SaveSlowness read and write slowness (slow.go).
	Slowness(ctx context.Context, checks []*store.PipelineCheck) (map[uuid.UUID]store.Slowness, error)
	SaveSlowness(ctx context.Context, s store.Slowness) error
	// DownDependencies and SetIncidentCause serve dependencies (dependencies.go).
	DownDependencies(ctx context.Context, orgID, checkID uuid.UUID) ([]uuid.UUID, error)
	SetIncidentCause(ctx context.Context, orgID, incidentID, causedBy uuid.UUID) error
	// UnhealthyRegions are the regions whose results are left out of verdicts (probehealth).
	UnhealthyRegions(ctx context.Context) (map[string]bool, error)
	// LastCanaries are when each region's canary rounds were last received, of those since
	// since (holdoff.go).
	LastCanaries(ctx context.Context, since time.Time) (map[string]time.Time, error)
}

var _ Tx = (*store.PipelineTx)(nil)

// Config tunes the evaluator. Zero values take the documented defaults.
type Config struct {
	// RunAttempts is how many attempts a region may take for one run, for the run deadline.
	// Default 2, the scheduler's max_attempts of HTTP, DNS and TCP jobs (browser jobs take 1).
	RunAttempts int
	// RunGrace is added to a run's deadline for queueing and transport. Default 15s.
	RunGrace time.Duration
	// DefaultTimeout is the per-attempt timeout of checks without timeout_ms (legacy browser
	// checks). Default 60s, as the scheduler uses for them.
	DefaultTimeout time.Duration
	// SweepInterval is how often Run judges runs whose deadline passed. Default 1s.
	SweepInterval time.Duration
	// SweepLimit is how many checks one sweep transaction judges at most. Default 500.
	SweepLimit int
	// HoldOff is the longest a failing verdict that rests on one region waits for that
	// region's next canary round (holdoff.go): one canary interval plus the round's way.
	// Default 8s (the agents' default 5s interval, 3s for probing and transport).
	HoldOff time.Duration
	// CanaryFresh is how old a region's last canary round may be for its verdicts to be held
	// (a region whose agents send no canaries is never held). Default 20s.
	CanaryFresh time.Duration
}

// Deps are the evaluator's collaborators. Store is required.
type Deps struct {
	Store Store
	// Logger defaults to discarding; Now to time.Now; Registerer to a private registry.
	Logger     *slog.Logger
	Now        func() time.Time
	Registerer prometheus.Registerer
	// OnStateChange, if set, is called after commit for every check whose state changed, with
	// the new state (PENDING, UP, VERIFYING, DOWN, RECOVERING); main wires it to the NATS
	// notification that makes the scheduler run VERIFYING and RECOVERING checks sooner. It is
	// called on the ingest path and must not block.
	OnStateChange func(checkID uuid.UUID, state string)
	// Watch, if set, runs in every ingest transaction after the verdicts, with the batch's
	// checks and final attempts, so that what it queues commits with them (main wires
	// certwatch, the certificate expiry events).
	Watch store.JudgeFunc
}

func (o *Config) defaults() {
	if o.RunAttempts <= 0 {
		o.RunAttempts = 2
	}
	if o.RunGrace <= 0 {
		o.RunGrace = 15 * time.Second
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = 60 * time.Second
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = time.Second
	}
	if o.SweepLimit <= 0 {
		o.SweepLimit = 500
	}
	if o.HoldOff <= 0 {
		o.HoldOff = 8 * time.Second
	}
	if o.CanaryFresh <= 0 {
		o.CanaryFresh = 20 * time.Second
	}
}

// Evaluator judges runs and drives check status machines. It is safe for concurrent use.
type Evaluator struct {
	log   *slog.Logger
	now   func() time.Time
	store Store
	opts  Config
	m     metrics
	// onStateChange: Deps.OnStateChange.
	onStateChange func(checkID uuid.UUID, state string)
	// watch: Deps.Watch.
	watch store.JudgeFunc
	// reg: Deps.Registerer, for the metrics of an Owner.
	reg prometheus.Registerer
}

type metrics struct {
	verdicts    *prometheus.CounterVec
	transitions *prometheus.CounterVec
	alerts      *prometheus.CounterVec
	late        prometheus.Counter
	excluded    prometheus.Counter
	held        *prometheus.CounterVec
	sweepErrors prometheus.Counter
}

// New returns an Evaluator.
func New(cfg Config, deps Deps) (*Evaluator, error) {
	if deps.Store == nil {
		return nil, errors.New("evaluator: a store is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	reg := deps.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	cfg.defaults()
	e := &Evaluator{log: deps.Logger.With("component", "evaluator"), now: deps.Now, store: deps.Store, opts: cfg,
		onStateChange: deps.OnStateChange, watch: deps.Watch, reg: reg}
	e.m = metrics{
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_evaluator_verdicts_total",
			Help: "Run verdicts, by verdict (pass, fail)."}, []string{"verdict"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_evaluator_transitions_total",
			Help: "Check state transitions, by from and to state."}, []string{"from", "to"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_evaluator_alerts_total",
			Help: "Outbox rows written, by event type."}, []string{"event"}),
		late: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_late_results_total",
			Help: "Final attempts stored but not judged because their run was already judged or superseded."}),
		excluded: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_excluded_results_total",
			Help: "Final attempts stored but left out of verdicts because their region was unhealthy (probe health)."}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_evaluator_held_runs_total",
			Help: "Failing verdicts resting on one region held for that region's next canary round: held (began waiting), released (judged after the wait)."},
			[]string{"phase"}),
		sweepErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_sweep_errors_total",
			Help: "Failed sweeps of runs past their deadline."}),
	}
	for _, c := range []prometheus.Collector{e.m.verdicts, e.m.transitions, e.m.alerts, e.m.late, e.m.excluded, e.m.held, e.m.sweepErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("evaluator metrics: %w", err)
		}
	}
	return e, nil
}

// IngestBatch stores a batch of results and judges its final attempts, in one transaction
// (see the package doc). Repeated results are stored once and judged once.
func (e *Evaluator) IngestBatch(ctx context.Context, rows []store.ResultRow) (store.IngestStats, error) {
	var out *outcome
	stats, err := e.store.IngestResults(ctx, rows, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
		out = &outcome{} // a retried transaction starts over
		if err := e.judge(ctx, tx, checks, finals, out); err != nil || e.watch == nil {
			return err
		}
		return e.watch(ctx, tx, checks, finals)
	})
	if err != nil {
		return stats, err
	}
	e.committed(out)
	return stats, nil
}

// Sweep judges, once, the runs whose deadline has passed (up to SweepLimit checks), and returns
// how many checks it judged.
func (e *Evaluator) Sweep(ctx context.Context) (int, error) {
	var out *outcome
	n, err := e.store.JudgeDueRuns(ctx, e.now(), e.opts.SweepLimit, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, _ []store.ResultRow) error {
		out = &outcome{}
		return e.judge(ctx, tx, checks, nil, out)
	})
	if err != nil {
		return 0, fmt.Errorf("sweep due runs: %w", err)
	}
	e.committed(out)
	return n, nil
}

// Run sweeps runs past their deadline every SweepInterval until ctx ends. A failed sweep is
// logged and retried on the next tick.
func (e *Evaluator) Run(ctx context.Context) error {
	t := time.NewTicker(e.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for {
			n, err := e.Sweep(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				e.m.sweepErrors.Inc()
				e.log.Warn("sweep failed", "err", err)
				break
			}
			if n < e.opts.SweepLimit {
				break
			}
		}
	}
}

// committed publishes what a committed transaction did: metrics and state-change hooks.
func (e *Evaluator) committed(out *outcome) {
	if out == nil {
		return
	}
	e.m.verdicts.WithLabelValues("pass").Add(float64(out.passing))
	e.m.verdicts.WithLabelValues("fail").Add(float64(out.failing))
	e.m.late.Add(float64(out.late))
	e.m.excluded.Add(float64(out.excluded))
	e.m.held.WithLabelValues("held").Add(float64(out.held))
	e.m.held.WithLabelValues("released").Add(float64(out.released))
	for ev, n := range out.alerts {
		e.m.alerts.WithLabelValues(ev).Add(float64(n))
	}
	for _, c := range out.changes {
		e.m.transitions.WithLabelValues(string(c.from), string(c.to)).Inc()
		e.log.Info("check state changed", "org_id", c.orgID.String(), "check_id", c.checkID.String(),
			"from", string(c.from), "to", string(c.to))
		if e.onStateChange != nil {
			e.onStateChange(c.checkID, string(c.to))
		}
	}
}
