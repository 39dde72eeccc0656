package evaluator

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// What outlives an owner: the checkpoint of its pending runs to check_runs, and the recovery
// of a shard's state from PostgreSQL by its next owner (Take).

// Take recovers the shards' state from PostgreSQL and starts judging their finals. Calling
// it again for a shard already owned re-syncs that shard from PostgreSQL (used after the
// subscriber lost messages): finals already in memory are kept, none is judged twice.
//
// Recovery reads the shards' check_runs rows (checkpointed by the previous owner) and the final
// attempts stored within RecoveryWindow after each check's last judged run (some were in the
// previous owner's memory only), and merges the finals as Judge does; runs they complete are
// judged at once.
func (o *Owner) Take(ctx context.Context, shards []int) error {
	shards = sortedShards(shards)
	if len(shards) == 0 {
		return nil
	}
	for _, s := range shards {
		o.shard[s].mu.Lock()
	}
	defer o.unlock(shards)
	runs, err := o.e.store.ShardRuns(ctx, shards)
	if err != nil {
		return fmt.Errorf("take shards: %w", err)
	}
	now := o.e.now()
	finals, err := o.e.store.ShardFinals(ctx, shards, now.Add(-o.cfg.RecoveryWindow))
	if err != nil {
		return fmt.Errorf("take shards: %w", err)
	}
	for _, s := range shards {
		if sh := &o.shard[s]; !sh.owned {
			sh.owned, sh.runs = true, map[uuid.UUID]map[uuid.UUID]*memRun{}
		}
	}
	type runKey struct{ check, job uuid.UUID }
	recovered := map[runKey]bool{}
	var refs []store.CheckRef
	seen := map[uuid.UUID]bool{}
	addRef := func(orgID, checkID uuid.UUID) {
		if !seen[checkID] {
			seen[checkID] = true
			refs = append(refs, store.CheckRef{OrgID: orgID, CheckID: checkID})
		}
	}
	for _, r := range runs {
		// A run in memory is newer than its row (the row is a checkpoint of it).
		if m := o.run(r.CheckID, r.JobID); m != nil {
			m.saved = true // its row goes when it is judged
		} else {
			o.put(r, now, true)
			recovered[runKey{r.CheckID, r.JobID}] = true
		}
		addRef(r.OrgID, r.CheckID)
	}
	for _, f := range finals {
		if o.run(f.CheckID, f.JobID) == nil {
			recovered[runKey{f.CheckID, f.JobID}] = true
		}
		addRef(f.OrgID, f.CheckID)
	}
	o.m.recoveries.Add(float64(len(shards)))
	o.m.recoveredRuns.Add(float64(len(recovered)))
	finalsOf := map[uuid.UUID][]store.ResultRow{}
	for _, f := range finals {
		finalsOf[f.CheckID] = append(finalsOf[f.CheckID], f)
	}
	for batch := range slices.Chunk(refs, o.e.opts.SweepLimit) {
		var fs []store.ResultRow
		for _, r := range batch {
			fs = append(fs, finalsOf[r.CheckID]...)
		}
		if err := o.judgeLocked(ctx, batch, fs, false); err != nil {
			return fmt.Errorf("take shards: %w", err)
		}
	}
	return nil
}

// checkpoint writes, in one transaction, the pending runs that have been in memory longer
// than CheckpointInterval and whose row is missing or older, holding their shards so that
// no judgment deletes a run while its row is being written.
func (o *Owner) checkpoint(ctx context.Context) error {
	now := o.e.now()
	var locked []int
	defer func() { o.unlock(locked) }()
	var runs []store.Run
	var written []*memRun
	for s := range o.shard {
		sh := &o.shard[s]
		sh.mu.Lock()
		n := len(runs)
		if sh.owned {
			for _, byJob := range sh.runs {
				for _, m := range byJob {
					if m.dirty && now.Sub(m.since) >= o.cfg.CheckpointInterval {
						runs = append(runs, m.run)
						written = append(written, m)
					}
				}
			}
		}
		if len(runs) == n {
			sh.mu.Unlock()
			continue
		}
		locked = append(locked, s)
	}
	if len(runs) == 0 {
		return nil
	}
	if err := o.e.store.CheckpointRuns(ctx, runs); err != nil {
		return fmt.Errorf("checkpoint pending runs: %w", err)
	}
	for _, m := range written {
		m.saved, m.dirty = true, false
	}
	o.m.checkpoints.Inc()
	o.m.checkpointed.Add(float64(len(runs)))
	return nil
}
