package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// This file is the persistence of the owner's judging (evaluator.Owner, queries/
// pipeline_owner.sql): the replica that owns a check's shard judges it without the check's
// lock, and fences the progress it writes instead, so that two owners overlapping during a
// handover never both judge one run.

// ErrFenced means that another judge moved the progress (check_progress.last_run_at) of a check
// after the transaction read it: the transaction rolled back, and the caller re-reads the
// checks and judges again (the runs the other judge judged are then late).
var ErrFenced = errors.New("store: check judged meanwhile by another judge")

// CheckRef names a check in its organization.
type CheckRef struct {
	OrgID   uuid.UUID
	CheckID uuid.UUID
}

// JudgeChecks runs judge, in one transaction, on the checks that exist of refs, read without
// a lock and sorted by id, with the finals of those checks. Their progress write
// (PipelineTx.UpdateCheckStates) is fenced: when another judge moved a check's progress since
// it was read, the transaction fails with ErrFenced; so does one that failed otherwise while a
// check's progress moved (a racing judge's incident, say), since its judgment is stale anyway.
func (s *Store) JudgeChecks(ctx context.Context, refs []CheckRef, finals []ResultRow, judge JudgeFunc) error {
	if len(refs) == 0 {
		return nil
	}
	lockArg, asked := checkArgs(len(refs), func(i int) CheckRef { return refs[i] })
	arg := dbsqlc.ReadChecksForJudgingParams(lockArg)
	var read []*PipelineCheck
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if read, err = readChecks(ctx, s.q.WithTx(tx), arg, asked); err != nil {
			return err
		}
		if len(read) == 0 {
			return nil
		}
		byID := make(map[uuid.UUID]*PipelineCheck, len(read))
		for _, c := range read {
			byID[c.ID] = c
		}
		theirs := keepRows(finals, func(r *ResultRow) bool {
			c := byID[r.CheckID]
			return c != nil && c.OrgID == r.OrgID
		})
		p := newPipelineTx(tx, read)
		p.fenced = true
		return judge(ctx, p, read, theirs)
	})
	if err == nil || errors.Is(err, ErrFenced) || len(read) == 0 || ctx.Err() != nil {
		return err
	}
	now, rerr := readChecks(ctx, s.q, arg, asked)
	if rerr != nil {
		return err
	}
	before := make(map[uuid.UUID]*time.Time, len(read))
	for _, c := range read {
		before[c.ID] = c.LastRunAt
	}
	for _, c := range now {
		if b, ok := before[c.ID]; ok && !sameTime(b, c.LastRunAt) {
			return fmt.Errorf("%w: check %s (%w)", ErrFenced, c.ID, err)
		}
	}
	return err
}

func readChecks(ctx context.Context, q *dbsqlc.Queries, arg dbsqlc.ReadChecksForJudgingParams, asked map[CheckRef]struct{}) ([]*PipelineCheck, error) {
	rows, err := q.ReadChecksForJudging(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	checks := make([]*PipelineCheck, 0, len(rows))
	for _, r := range rows {
		if _, ok := asked[CheckRef{OrgID: r.OrgID, CheckID: r.ID}]; ok {
			checks = append(checks, pipelineCheck(dbsqlc.LockChecksForResultsRow(r)))
		}
	}
	return checks, nil
}

// saveProgressFenced is UpdateCheckStates' progress write in a JudgeChecks transaction: each
// check's progress moves only from the value the transaction read.
func (p *PipelineTx) saveProgressFenced(ctx context.Context, progress dbsqlc.SaveCheckProgressParams) error {
	n := len(progress.CheckIds)
	arg := dbsqlc.SaveCheckProgressFencedParams{CheckIds: progress.CheckIds, LastRunAts: progress.LastRunAts,
		ReadLastRunAts: make([]time.Time, n), ReadNull: make([]bool, n)}
	for i, id := range progress.CheckIds {
		if c := p.read[id]; c != nil && c.LastRunAt != nil {
			arg.ReadLastRunAts[i] = *c.LastRunAt
		} else {
			arg.ReadNull[i] = true
		}
	}
	moved, err := p.q().SaveCheckProgressFenced(ctx, arg)
	if err != nil {
		return fmt.Errorf("save check progress: %w", err)
	}
	if len(moved) == n {
		return nil
	}
	done := make(map[uuid.UUID]bool, len(moved))
	for _, id := range moved {
		done[id] = true
	}
	for _, id := range progress.CheckIds {
		if !done[id] {
			return fmt.Errorf("%w: check %s", ErrFenced, id)
		}
	}
	return fmt.Errorf("%w: %d of %d checks", ErrFenced, n-len(moved), n)
}

// ShardRuns returns the pending runs (check_runs) of the checks of the shards, for their new
// owner.
func (s *Store) ShardRuns(ctx context.Context, shards []int) ([]Run, error) {
	runs, err := s.q.ShardRuns(ctx, int32s(shards))
	if err != nil {
		return nil, fmt.Errorf("read pending runs of shards: %w", err)
	}
	return runs, nil
}

// ShardFinals returns the final attempts checked since since of the active checks of the
// shards whose run is after the check's last judged run, in check and checked_at order, with
// the fields the evaluator judges by (ID, OrgID, CheckID, JobID, Region, AttemptNumber,
// ScheduledAt, CheckedAt, Passing, ResponseTimeMs, FailureSource).
func (s *Store) ShardFinals(ctx context.Context, shards []int, since time.Time) ([]ResultRow, error) {
	rows, err := s.q.ShardFinals(ctx, dbsqlc.ShardFinalsParams{Shards: int32s(shards), Since: since})
	if err != nil {
		return nil, fmt.Errorf("read final attempts of shards: %w", err)
	}
	out := make([]ResultRow, len(rows))
	for i, r := range rows {
		out[i] = ResultRow{ID: r.ID, OrgID: r.OrgID, CheckID: r.CheckID, JobID: r.JobID, Region: r.Region,
			AttemptNumber: r.AttemptNumber, IsFinalAttempt: true, ScheduledAt: r.ScheduledAt, CheckedAt: r.CheckedAt,
			Passing: r.Passing, ResponseTimeMs: r.ResponseTimeMs, FailureSource: r.FailureSource}
	}
	return out, nil
}

// CheckpointRuns writes pending runs held in memory to check_runs (inserted or updated), in
// their own transaction, so that a shard's next owner recovers them.
func (s *Store) CheckpointRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		return (&PipelineTx{tx: tx}).SaveRuns(ctx, runs)
	})
}
