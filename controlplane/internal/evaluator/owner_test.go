package evaluator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestOwnerJudgesAsTheLockingPath is the owner's property: for random streams, the owner's
// verdicts equal those of IngestBatch + Sweep.
func TestOwnerJudgesAsTheLockingPath(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			checks := genChecks(seed, 6)
			stream := genStream(seed, checks, t0, 30, stepEvery)
			clock := &testClock{t: t0}
			locking, owning := newWorld(t, clock, checks), newWorld(t, clock, checks)
			o := NewOwner(owning.e, OwnerConfig{CheckpointInterval: stepEvery})
			if err := o.Take(ctx, allShards); err != nil {
				t.Fatal(err)
			}
			for i, s := range stream {
				clock.Set(s.at)
				locking.lockingStep(ctx, s)
				owning.ownerStep(ctx, o, s)
				if i%3 == 2 { // checkpoints: judged runs then delete their rows
					if err := o.checkpoint(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, got := locking.verdicts(), owning.verdicts()
			if len(want.Daily) == 0 || len(want.Changes) == 0 {
				t.Fatalf("the stream judged nothing: %+v", want)
			}
			compareVerdicts(t, want, got, "owner")
			if n := testutil.ToFloat64(o.m.finals.WithLabelValues("judged")); n == 0 {
				t.Error("no final counted as judged by the owner")
			}
		})
	}
}

// TestOwnerTakeover: an owner judges part of a stream and is dropped after a checkpoint (or
// gives its shards up); a second owner takes the shards from PostgreSQL and continues; the
// verdicts are those of the locking path (which TestOwnerJudgesAsTheLockingPath holds equal to
// an uninterrupted owner's).
func TestOwnerTakeover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seed uint64
		give bool
	}{{"abandoned after a checkpoint", 11, false}, {"given up", 12, true}, {"abandoned, another stream", 13, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			takeover(t, tc.seed, tc.give)
		})
	}
}

// takeover feeds a stream to the locking path and to an owner A replaced by an owner B
// halfway, after A's checkpoint (and A's Give when give is set), and compares the verdicts.
func takeover(t *testing.T, seed uint64, give bool) {
	ctx := context.Background()
	checks := genChecks(seed, 6)
	stream := genStream(seed, checks, t0, 30, stepEvery)
	clock := &testClock{t: t0}
	locking, owning := newWorld(t, clock, checks), newWorld(t, clock, checks)
	cfg := OwnerConfig{CheckpointInterval: stepEvery}
	a := NewOwner(owning.e, cfg)
	if err := a.Take(ctx, allShards); err != nil {
		t.Fatal(err)
	}
	o := a
	half := len(stream) / 2
	for i, s := range stream {
		clock.Set(s.at)
		locking.lockingStep(ctx, s)
		if i != half {
			owning.ownerStep(ctx, o, s)
			continue
		}
		// A takes the step's finals, checkpoints what it has held a step, and is gone:
		// the runs that arrived now are in its memory only.
		rows := owning.rows(s.results)
		if _, err := owning.st.IngestResults(ctx, rows, nil); err != nil {
			t.Fatal(err)
		}
		if err := a.Judge(ctx, append(finalsOf(rows), owning.rows(s.repeats)...)); err != nil {
			t.Fatal(err)
		}
		if err := a.checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		if give {
			a.Give(allShards)
		}
		held := 0
		for sh := range a.shard {
			for _, runs := range a.shard[sh].runs {
				held += len(runs)
			}
		}
		b := NewOwner(owning.e, cfg)
		if err := b.Take(ctx, allShards); err != nil {
			t.Fatal(err)
		}
		if err := b.sweep(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("taken over at step %d: A held %d runs, B recovered %v", i, held, testutil.ToFloat64(b.m.recoveredRuns))
		o = b
	}
	compareVerdicts(t, locking.verdicts(), owning.verdicts(), "taken over")
}

// TestOwnerTakeRecoversFinalsInMemoryOnly: a run whose finals the previous owner held in memory
// only (never checkpointed) is rebuilt from check_results by Take, and a re-sync of an owned
// shard judges nothing twice.
func TestOwnerTakeRecoversFinalsInMemoryOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &testClock{t: t0}
	two := []string{"cloud:us-east-1", "cloud:eu-central-1"}
	w := newWorld(t, clock, []testCheck{{regions: two, quorum: check.QuorumMajority, timeoutMs: 3000, reminder: -1}})
	a := NewOwner(w.e, OwnerConfig{})
	if err := a.Take(ctx, allShards); err != nil {
		t.Fatal(err)
	}
	job := uuid.New()
	first := store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[0], JobID: job, Region: two[0], AttemptNumber: 1,
		IsFinalAttempt: true, ScheduledAt: t0, CheckedAt: t0.Add(time.Second), Passing: true, BodyAvailability: "NONE"}
	if _, err := w.st.IngestResults(ctx, []store.ResultRow{first}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Judge(ctx, []store.ResultRow{first}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, w.st, `SELECT count(*) FROM check_runs`); n != 0 {
		t.Fatalf("%d check_runs rows before any checkpoint, want the run in memory only", n)
	}
	b := NewOwner(w.e, OwnerConfig{})
	if err := b.Take(ctx, allShards); err != nil {
		t.Fatal(err)
	}
	if r := b.run(w.checks[0], job); r == nil || !slices.Equal(r.run.PassedRegions, two[:1]) {
		t.Fatalf("recovered run %+v, want the run with %s passed", r, two[0])
	}
	second := first
	second.ID, second.Region, second.CheckedAt = uuid.New(), two[1], t0.Add(2*time.Second)
	if _, err := w.st.IngestResults(ctx, []store.ResultRow{second}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Judge(ctx, []store.ResultRow{second}); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(ctx, allShards); err != nil { // a re-sync judges nothing again
		t.Fatal(err)
	}
	if got := count(t, w.st, `SELECT runs FROM check_daily_stats`); got != 1 {
		t.Fatalf("%d runs counted, want 1", got)
	}
	if got := testutil.ToFloat64(b.m.recoveredRuns); got != 1 {
		t.Errorf("recovered runs %v, want 1 (the re-sync recovers nothing new)", got)
	}
	if st := w.verdicts().States; len(st) != 1 || !strings.HasPrefix(st[0], "0 [UP ") {
		t.Errorf("check state %q, want UP", st)
	}
}

// TestOwnersOverlapJudgeOnce: two owners of the same shard receive the same finals at once;
// the fence lets every run be judged exactly once.
func TestOwnersOverlapJudgeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	checks := genChecks(21, 8)
	for i := range checks {
		checks[i].confirmation, checks[i].recovery = 0, 0 // every failing run opens an incident, every pass closes it
	}
	clock := &testClock{t: t0}
	w := newWorld(t, clock, checks)
	owners := []*Owner{NewOwner(w.e, OwnerConfig{}), NewOwner(w.e, OwnerConfig{})}
	for _, o := range owners {
		if err := o.Take(ctx, allShards); err != nil {
			t.Fatal(err)
		}
	}
	rnd := rand.New(rand.NewPCG(21, 21))
	runs := 0
	for k := range 20 {
		at := t0.Add(time.Duration(k) * stepEvery)
		clock.Set(at)
		var rows []store.ResultRow
		for ci, c := range checks {
			job := uuid.New()
			runs++
			for _, region := range c.regions {
				rows = append(rows, store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[ci], JobID: job,
					Region: region, AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at,
					Passing: rnd.IntN(2) == 0, BodyAvailability: "NONE"})
			}
		}
		if _, err := w.st.IngestResults(ctx, rows, nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(owners))
		for i, o := range owners {
			wg.Go(func() {
				// Each owner gets the finals in its own order and batches, as two subscribers would.
				mine := slices.Clone(rows)
				if i == 1 {
					slices.Reverse(mine)
				}
				for batch := range slices.Chunk(mine, 5) {
					if errs[i] = o.Judge(ctx, batch); errs[i] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := count(t, w.st, `SELECT coalesce(sum(runs), 0) FROM check_daily_stats`); got != runs {
		t.Errorf("%d verdicts counted, want one per run: %d", got, runs)
	}
	if n := count(t, w.st, `SELECT count(*) FROM (SELECT 1 FROM outbox GROUP BY check_id, event_type, created_at HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d outbox events written twice", n)
	}
	if n := count(t, w.st, `SELECT count(*) FROM (SELECT 1 FROM check_incidents GROUP BY check_id, started_at HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d incidents opened twice", n)
	}
	t.Logf("%d runs, %v fence conflicts", runs, testutil.ToFloat64(owners[0].m.fenced))
}

// TestOwnerIgnoresShardsNotOwned: finals of a shard given up (or never taken) are counted and
// left alone.
func TestOwnerIgnoresShardsNotOwned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &testClock{t: t0}
	w := newWorld(t, clock, []testCheck{{regions: []string{"cloud:us-east-1"}, quorum: check.QuorumMajority, timeoutMs: 1000, reminder: -1}})
	o := NewOwner(w.e, OwnerConfig{})
	s := shard.Of(w.checks[0])
	if err := o.Take(ctx, []int{s}); err != nil {
		t.Fatal(err)
	}
	o.Give([]int{s})
	f := store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[0], JobID: uuid.New(), Region: "cloud:us-east-1",
		AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: t0, CheckedAt: t0, Passing: true, BodyAvailability: "NONE"}
	if _, err := w.st.IngestResults(ctx, []store.ResultRow{f}, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Judge(ctx, []store.ResultRow{f}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(o.m.finals.WithLabelValues("ignored")); got != 1 {
		t.Errorf("ignored finals %v, want 1", got)
	}
	if n := count(t, w.st, `SELECT count(*) FROM check_daily_stats`); n != 0 {
		t.Errorf("a final of a shard not owned was judged")
	}
}

func count(t testing.TB, st *store.Store, sql string) int {
	t.Helper()
	var n int64
	if err := st.Pool().QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestOwnerForgetsDeletedChecks: the pending runs of a check deleted meanwhile leave memory at
// the next judgment instead of being swept for ever.
func TestOwnerForgetsDeletedChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &testClock{t: t0}
	two := []string{"cloud:us-east-1", "cloud:eu-central-1"}
	w := newWorld(t, clock, []testCheck{{regions: two, quorum: check.QuorumMajority, timeoutMs: 1000, reminder: -1}})
	o := NewOwner(w.e, OwnerConfig{})
	if err := o.Take(ctx, allShards); err != nil {
		t.Fatal(err)
	}
	f := store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[0], JobID: uuid.New(), Region: two[0],
		AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: t0, CheckedAt: t0, Passing: true, BodyAvailability: "NONE"}
	if _, err := w.st.IngestResults(ctx, []store.ResultRow{f}, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Judge(ctx, []store.ResultRow{f}); err != nil {
		t.Fatal(err)
	}
	if o.run(f.CheckID, f.JobID) == nil {
		t.Fatal("the half-reported run is not in memory")
	}
	if err := w.st.DeleteCheck(ctx, store.SystemActor, w.org, w.checks[0], check.Uptime); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(time.Minute))
	if err := o.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(o.shard[shard.Of(f.CheckID)].runs); n != 0 {
		t.Errorf("%d checks' runs still in memory after their check was deleted", n)
	}
}

// TestOwnerRunCheckpointsAndSweeps: Run writes a run held longer than the checkpoint interval
// to check_runs, and judges it once its deadline passes, deleting its row.
func TestOwnerRunCheckpointsAndSweeps(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &testClock{t: t0}
	two := []string{"cloud:us-east-1", "cloud:eu-central-1"}
	w := newWorld(t, clock, []testCheck{{regions: two, quorum: check.QuorumMajority, timeoutMs: 1000, reminder: -1}})
	w.e.opts.SweepInterval = 10 * time.Millisecond
	o := NewOwner(w.e, OwnerConfig{CheckpointInterval: 10 * time.Millisecond})
	if err := o.Take(ctx, allShards); err != nil {
		t.Fatal(err)
	}
	f := store.ResultRow{ID: uuid.New(), OrgID: w.org, CheckID: w.checks[0], JobID: uuid.New(), Region: two[0],
		AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: t0, CheckedAt: t0, Passing: false, BodyAvailability: "NONE"}
	if _, err := w.st.IngestResults(ctx, []store.ResultRow{f}, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Judge(ctx, []store.ResultRow{f}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	clock.Set(t0.Add(time.Second)) // held a second: checkpointed, not yet due (deadline t0+7s)
	testwait.Eventually(t, 5*time.Second, func() error {
		if n := count(t, w.st, `SELECT count(*) FROM check_runs`); n != 1 {
			return fmt.Errorf("%d check_runs rows, want the checkpointed run", n)
		}
		return nil
	})
	if n := count(t, w.st, `SELECT count(*) FROM check_daily_stats`); n != 0 {
		t.Fatalf("the run was judged before its deadline")
	}
	clock.Set(t0.Add(10 * time.Second))
	testwait.Eventually(t, 5*time.Second, func() error {
		if n := count(t, w.st, `SELECT count(*) FROM check_runs`); n != 0 {
			return fmt.Errorf("%d check_runs rows left after the sweep", n)
		}
		if n := count(t, w.st, `SELECT coalesce(sum(failed_runs), 0) FROM check_daily_stats`); n != 1 {
			return fmt.Errorf("%d failed runs counted, want the swept one", n)
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(o.m.checkpointed); got != 1 {
		t.Errorf("checkpointed runs %v, want 1", got)
	}
}
