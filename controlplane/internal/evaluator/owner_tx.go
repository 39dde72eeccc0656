package evaluator

import (
	"context"
	"slices"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ownerTx is the Tx of an Owner's judgment: pending runs are read from and written to the
// owner's memory, everything else goes to the transaction. What judge saves and drops is
// applied to memory only once the transaction commits (commit), so a judgment rolled back
// (fenced, failed) leaves memory as it was. A dropped run whose row a checkpoint wrote is
// deleted from check_runs in the transaction, as the locking path deletes it.
type ownerTx struct {
	*store.PipelineTx
	o          *Owner
	save, drop []store.Run
}

var _ Tx = (*ownerTx)(nil)

// PendingRuns returns copies of the checks' runs in memory: judge changes the runs it reads.
func (t *ownerTx) PendingRuns(_ context.Context, checks []*store.PipelineCheck) ([]store.Run, error) {
	var out []store.Run
	for _, c := range checks {
		for _, m := range t.o.shard[shard.Of(c.ID)].runs[c.ID] {
			if m.run.OrgID == c.OrgID {
				out = append(out, cloneRun(m.run))
			}
		}
	}
	return out, nil
}

// SaveRuns keeps the runs for memory, at commit.
func (t *ownerTx) SaveRuns(_ context.Context, runs []store.Run) error {
	t.save = append(t.save, runs...)
	return nil
}

// DeleteRuns forgets the runs at commit, and deletes the rows of those a checkpoint wrote.
func (t *ownerTx) DeleteRuns(ctx context.Context, runs []store.Run) error {
	t.drop = append(t.drop, runs...)
	var rows []store.Run
	for _, r := range runs {
		if m := t.o.run(r.CheckID, r.JobID); m != nil && m.saved {
			rows = append(rows, r)
		}
	}
	return t.PipelineTx.DeleteRuns(ctx, rows)
}

// commit applies the committed judgment to memory; the caller holds the runs' shards.
func (t *ownerTx) commit(now time.Time) {
	for _, r := range t.drop {
		t.o.forget(r.CheckID, r.JobID)
	}
	for _, r := range t.save {
		t.o.put(r, now, false)
	}
}

func cloneRun(r store.Run) store.Run {
	r.ExpectedRegions = slices.Clone(r.ExpectedRegions)
	r.PassedRegions = slices.Clone(r.PassedRegions)
	r.FailedRegions = slices.Clone(r.FailedRegions)
	r.SlowRegions = slices.Clone(r.SlowRegions)
	if r.HeldSince != nil {
		h := *r.HeldSince
		r.HeldSince = &h
	}
	return r
}

// asStored is the run as check_runs would return it: times in microseconds, held_since in
// milliseconds (SaveRuns carries it so), so that a run judged from memory is judged exactly as
// one read back from its row.
func asStored(r store.Run) store.Run {
	r = cloneRun(r)
	r.ScheduledAt = r.ScheduledAt.Truncate(time.Microsecond)
	r.Deadline = r.Deadline.Truncate(time.Microsecond)
	r.FirstResultAt = r.FirstResultAt.Truncate(time.Microsecond)
	if r.HeldSince != nil {
		h := time.UnixMilli(r.HeldSince.UnixMilli())
		r.HeldSince = &h
	}
	return r
}
