package evaluator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// OwnerConfig tunes an Owner. Zero values take the documented defaults.
type OwnerConfig struct {
	// CheckpointInterval is how often Run writes the pending runs that have been in memory
	// longer than it to check_runs, for the shard's next owner. Default 1s.
	CheckpointInterval time.Duration
	// RecoveryWindow bounds Take's scan of stored final attempts: those checked longer ago are
	// not recovered. Default: the longest run deadline (RunAttempts × the longest timeout a
	// check may have + RunGrace + HoldOff) plus a minute for the lease to change hands.
	RecoveryWindow time.Duration
	// FenceRetries is how many times one judgment re-reads checks that another judge moved
	// (store.ErrFenced) before it fails. Default 5.
	FenceRetries int
}

func (c *OwnerConfig) defaults(e *Evaluator) {
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = time.Second
	}
	if c.RecoveryWindow <= 0 {
		longest := time.Duration(check.MaxBrowserTimeoutMs) * time.Millisecond
		c.RecoveryWindow = longest*time.Duration(e.opts.RunAttempts) + e.opts.RunGrace + e.opts.HoldOff + time.Minute
	}
	if c.FenceRetries <= 0 {
		c.FenceRetries = 5
	}
}

// Owner judges the checks of the shards this replica owns (scheduler lease) in memory: their
// pending runs live here instead of in check_runs, the finals of a run are merged as they
// arrive (Judge), and a run judged in the batch that completes it never touches check_runs.
// Judging itself is the evaluator's one definition (judge), run over a Tx whose pending runs
// are served from memory (ownerTx). See the package doc, "The owner's judging". It is safe
// for concurrent use.
type Owner struct {
	e     *Evaluator
	cfg   OwnerConfig
	m     ownerMetrics
	shard [shard.Count]ownedShard
}

// ownedShard is one shard's memory. mu is held for the whole of a judgment of its checks, so
// that memory changes only with what committed, and Give waits for judgments in progress.
type ownedShard struct {
	mu    sync.Mutex
	owned bool
	runs  map[uuid.UUID]map[uuid.UUID]*memRun // check id → job id → run
}

// memRun is a pending run held in memory.
type memRun struct {
	run   store.Run
	since time.Time // when it came into memory, for the checkpoint
	saved bool      // a check_runs row holds it (recovered or checkpointed)
	dirty bool      // its row is missing or older than it
}

type ownerMetrics struct {
	finals        *prometheus.CounterVec
	fenced        prometheus.Counter
	recoveries    prometheus.Counter
	recoveredRuns prometheus.Counter
	checkpoints   prometheus.Counter
	checkpointed  prometheus.Counter
}

// NewOwner returns an Owner of no shard yet, judging with e, its metrics registered on e's
// registerer (a second Owner of the same evaluator shares them).
func NewOwner(e *Evaluator, cfg OwnerConfig) *Owner {
	cfg.defaults(e)
	o := &Owner{e: e, cfg: cfg}
	o.m = ownerMetrics{
		finals: register(e.reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_evaluator_owner_finals_total",
			Help: "Final attempts handed to the shard owner, by outcome: judged (merged and judged in memory), ignored (their shard is not owned here)."},
			[]string{"outcome"})),
		fenced: register(e.reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_owner_fence_conflicts_total",
			Help: "Owner judgments rolled back because another judge moved a check's progress first; each is judged again."})),
		recoveries: register(e.reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_owner_recoveries_total",
			Help: "Shards whose pending runs were recovered from PostgreSQL (taken, or re-synced)."})),
		recoveredRuns: register(e.reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_owner_recovered_runs_total",
			Help: "Pending runs recovered from check_runs or from stored final attempts."})),
		checkpoints: register(e.reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_owner_checkpoints_total",
			Help: "Checkpoint transactions writing pending runs held in memory to check_runs."})),
		checkpointed: register(e.reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_evaluator_owner_checkpointed_runs_total",
			Help: "Pending runs written by checkpoints."})),
	}
	return o
}

// register registers c, or returns the collector already registered under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if prev, ok := are.ExistingCollector.(C); ok {
				return prev
			}
		}
	}
	return c
}

// Give stops judging the shards and forgets their state; it returns once no judgment of
// them is in progress (so the lease may be released after it).
func (o *Owner) Give(shards []int) {
	for _, s := range sortedShards(shards) {
		sh := &o.shard[s]
		sh.mu.Lock()
		sh.owned, sh.runs = false, nil
		sh.mu.Unlock()
	}
}

// Judge merges finals (final attempts already stored in check_results) of owned shards and
// judges what is complete, in one transaction. Finals of shards not owned are ignored and
// counted. Repeated finals (same job and region) are harmless.
func (o *Owner) Judge(ctx context.Context, finals []store.ResultRow) error {
	var shards []int
	for _, f := range finals {
		shards = append(shards, shard.Of(f.CheckID))
	}
	shards = sortedShards(shards)
	for _, s := range shards {
		o.shard[s].mu.Lock()
	}
	defer o.unlock(shards)
	mine := make([]store.ResultRow, 0, len(finals))
	var refs []store.CheckRef
	seen := map[store.CheckRef]bool{}
	for _, f := range finals {
		if !o.shard[shard.Of(f.CheckID)].owned || !f.IsFinalAttempt {
			continue
		}
		mine = append(mine, f)
		if ref := (store.CheckRef{OrgID: f.OrgID, CheckID: f.CheckID}); !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	if n := len(finals) - len(mine); n > 0 {
		o.m.finals.WithLabelValues("ignored").Add(float64(n))
	}
	if len(mine) == 0 {
		return nil
	}
	if err := o.judgeLocked(ctx, refs, mine, true); err != nil {
		return fmt.Errorf("judge finals: %w", err)
	}
	o.m.finals.WithLabelValues("judged").Add(float64(len(mine)))
	return nil
}

// Run judges runs past their deadline from memory (every Config.SweepInterval) and writes
// the batched checkpoint (every CheckpointInterval), until ctx ends. A failed sweep or
// checkpoint is logged and tried again on the next tick.
func (o *Owner) Run(ctx context.Context) error {
	sweep := time.NewTicker(o.e.opts.SweepInterval)
	defer sweep.Stop()
	checkpoint := time.NewTicker(o.cfg.CheckpointInterval)
	defer checkpoint.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sweep.C:
			if err := o.sweep(ctx); err != nil && ctx.Err() == nil {
				o.e.m.sweepErrors.Inc()
				o.e.log.Warn("owner sweep failed", "err", err)
			}
		case <-checkpoint.C:
			if err := o.checkpoint(ctx); err != nil && ctx.Err() == nil {
				o.e.log.Warn("owner checkpoint failed", "err", err)
			}
		}
	}
}

// sweep judges the owned checks with a run past its deadline, or held for a canary round
// (whether the round came is the judgment's to see: held runs are few and short), up to
// SweepLimit checks per transaction. Shards are locked in ascending order, as Judge locks
// them.
func (o *Owner) sweep(ctx context.Context) error {
	now := o.e.now()
	var locked []int
	var refs []store.CheckRef
	flush := func() error {
		defer func() { o.unlock(locked); locked = nil }()
		if len(refs) == 0 {
			return nil
		}
		err := o.judgeLocked(ctx, refs, nil, false)
		refs = nil
		return err
	}
	for s := range o.shard {
		sh := &o.shard[s]
		sh.mu.Lock()
		n := len(refs)
		if sh.owned {
			for checkID, runs := range sh.runs {
				for _, m := range runs {
					if !now.Before(m.run.Deadline) || m.run.HeldSince != nil {
						refs = append(refs, store.CheckRef{OrgID: m.run.OrgID, CheckID: checkID})
						break
					}
				}
			}
		}
		if len(refs) == n {
			sh.mu.Unlock()
			continue
		}
		locked = append(locked, s)
		if len(refs) >= o.e.opts.SweepLimit {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// judgeLocked judges the checks in one transaction over memory (ownerTx), their shards held
// by the caller; a judgment fenced by another judge is done again with the checks re-read.
func (o *Owner) judgeLocked(ctx context.Context, refs []store.CheckRef, finals []store.ResultRow, watch bool) error {
	for attempt := 0; ; attempt++ {
		var out *outcome
		var otx *ownerTx
		var read []*store.PipelineCheck
		err := o.e.store.JudgeChecks(ctx, refs, finals, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
			out, otx, read = &outcome{}, &ownerTx{PipelineTx: tx, o: o}, checks // a retried transaction starts over
			if err := o.e.judge(ctx, otx, checks, finals, out); err != nil || !watch || o.e.watch == nil {
				return err
			}
			return o.e.watch(ctx, tx, checks, finals)
		})
		if errors.Is(err, store.ErrFenced) {
			o.m.fenced.Inc()
			if attempt < o.cfg.FenceRetries {
				continue
			}
		}
		if err != nil {
			return err
		}
		if otx != nil {
			otx.commit(o.e.now())
		}
		o.forgetMissing(refs, read)
		o.e.committed(out)
		return nil
	}
}

// run returns the run in memory, nil when there is none; the caller holds its shard.
func (o *Owner) run(checkID, jobID uuid.UUID) *memRun {
	return o.shard[shard.Of(checkID)].runs[checkID][jobID]
}

// put keeps a run in memory, as PostgreSQL would return it; the caller holds its shard.
func (o *Owner) put(r store.Run, now time.Time, saved bool) {
	sh := &o.shard[shard.Of(r.CheckID)]
	if !sh.owned {
		return
	}
	byJob := sh.runs[r.CheckID]
	if byJob == nil {
		byJob = map[uuid.UUID]*memRun{}
		sh.runs[r.CheckID] = byJob
	}
	r = asStored(r)
	if m := byJob[r.JobID]; m != nil {
		m.run, m.dirty = r, true
		return
	}
	byJob[r.JobID] = &memRun{run: r, since: now, saved: saved, dirty: !saved}
}

// forget drops a run from memory; the caller holds its shard.
func (o *Owner) forget(checkID, jobID uuid.UUID) {
	byJob := o.shard[shard.Of(checkID)].runs[checkID]
	delete(byJob, jobID)
	if len(byJob) == 0 {
		delete(o.shard[shard.Of(checkID)].runs, checkID)
	}
}

// forgetMissing drops the runs of the checks asked for that were not read: deleted checks,
// whose runs would otherwise be swept for ever. The caller holds their shards.
func (o *Owner) forgetMissing(refs []store.CheckRef, read []*store.PipelineCheck) {
	if len(read) == len(refs) {
		return
	}
	found := make(map[uuid.UUID]bool, len(read))
	for _, c := range read {
		found[c.ID] = true
	}
	for _, r := range refs {
		if !found[r.CheckID] {
			if sh := &o.shard[shard.Of(r.CheckID)]; sh.owned {
				delete(sh.runs, r.CheckID)
			}
		}
	}
}

func (o *Owner) unlock(shards []int) {
	for _, s := range slices.Backward(shards) {
		o.shard[s].mu.Unlock()
	}
}

// sortedShards returns the valid shards once each, in ascending order: the order in which
// they are locked.
func sortedShards(shards []int) []int {
	out := slices.DeleteFunc(slices.Clone(shards), func(s int) bool { return s < 0 || s >= shard.Count })
	slices.Sort(out)
	return slices.Compact(out)
}
