package evaluator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// The owner's judging is tested against the locking path: the same stream of results, fed to
// IngestBatch + Sweep on one database and to IngestResults + Owner on another, must give the
// same verdicts.

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// testCheck is the configuration of one generated check.
type testCheck struct {
	regions      []string
	quorum       check.Quorum
	confirmation int
	recovery     int
	timeoutMs    int
	reminder     int // minutes, -1 never
}

// world is one database with the stream's checks and an evaluator on the shared clock.
type world struct {
	t      testing.TB
	st     *store.Store
	e      *Evaluator
	reg    *prometheus.Registry
	org    uuid.UUID
	checks []uuid.UUID
	index  map[uuid.UUID]int

	mu      sync.Mutex
	changes []string // OnStateChange calls, "check-index STATE"
}

var allShards = func() []int {
	s := make([]int, shard.Count)
	for i := range s {
		s[i] = i
	}
	return s
}()

func newWorld(t testing.TB, clock *testClock, checks []testCheck) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{t: t, st: storetest.New(t), reg: prometheus.NewRegistry(), index: map[uuid.UUID]int{}}
	org, err := w.st.CreateOrganization(ctx, "owner", "paid")
	if err != nil {
		t.Fatal(err)
	}
	w.org = org.ID
	for i, tc := range checks {
		c := storetest.Check(t, w.st, &storetest.CheckOpts{OrgID: org.ID, Name: fmt.Sprintf("check %d", i), Spec: func(sp *check.Spec) {
			sp.TestRegions, sp.RegionQuorum = tc.regions, tc.quorum
			sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = tc.confirmation, tc.recovery
			sp.TimeoutMs, sp.ReminderAlertIntervalMinutes = new(tc.timeoutMs), new(tc.reminder)
			sp.DegradedResponseTimeMs = new(tc.timeoutMs / 2)
		}})
		w.index[c.ID] = i
		w.checks = append(w.checks, c.ID)
	}
	w.e, err = New(Config{RunGrace: 5 * time.Second}, Deps{Store: w.st, Now: clock.Now, Registerer: w.reg,
		OnStateChange: func(id uuid.UUID, state string) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.changes = append(w.changes, fmt.Sprintf("%d %s", w.index[id], state))
		}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// genResult is one generated result, of a check by index.
type genResult struct {
	check int
	row   store.ResultRow
}

// genStep is what arrives at one clock step: new results, and finals the transport repeats.
type genStep struct {
	at      time.Time
	results []genResult
	repeats []genResult
}

// genStream generates a stream of results for checks: a run of each check most steps, each
// region reporting at once, a step or two later, after the deadline (late) or never; targets
// that go down and come back, regional noise, slow responses, non-final attempts, repeated
// finals and re-runs.
func genStream(seed uint64, checks []testCheck, t0 time.Time, steps int, every time.Duration) []genStep {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]genStep, steps+8)
	for i := range out {
		out[i].at = t0.Add(time.Duration(i) * every)
	}
	down := make([]bool, len(checks))
	newID := func() uuid.UUID {
		var u uuid.UUID
		for i := range u {
			u[i] = byte(rnd.Uint32())
		}
		u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
		return u
	}
	for k := range steps {
		for ci, c := range checks {
			if rnd.Float64() < 0.2 {
				down[ci] = !down[ci]
			}
			if rnd.Float64() < 0.15 {
				continue // no run this step
			}
			scheduled := out[k].at
			job := newID()
			for ri, region := range c.regions {
				delay := 0
				switch p := rnd.Float64(); {
				case p < 0.08:
					continue // the region never reports
				case p < 0.2:
					delay = 1
				case p < 0.27:
					delay = 2
				case p < 0.33:
					delay = 5 // past the deadline: late
				}
				at := min(k+delay, len(out)-1)
				passing := !down[ci]
				if rnd.Float64() < 0.12 {
					passing = !passing
				}
				checked := out[at].at.Add(time.Duration(ri+1) * time.Millisecond)
				row := store.ResultRow{ID: newID(), JobID: job, Region: region, AttemptNumber: 1, IsFinalAttempt: true,
					ScheduledAt: scheduled, CheckedAt: checked, Passing: passing,
					ResponseTimeMs: float64(rnd.IntN(c.timeoutMs)), BodyAvailability: "NONE"}
				if !passing && rnd.Float64() < 0.3 { // a failed attempt before the final one
					first := row
					first.ID, first.IsFinalAttempt, first.CheckedAt = newID(), false, checked.Add(-time.Microsecond)
					row.AttemptNumber = 2
					out[at].results = append(out[at].results, genResult{ci, first})
				}
				out[at].results = append(out[at].results, genResult{ci, row})
				if rnd.Float64() < 0.1 { // the transport delivers the final again
					again := min(at+rnd.IntN(3), len(out)-1)
					out[again].repeats = append(out[again].repeats, genResult{ci, row})
				}
				if rnd.Float64() < 0.05 { // a redelivered job: another final of the region, stored too
					again := row
					again.ID, again.AttemptNumber, again.Passing = newID(), 3, !passing
					again.CheckedAt = checked.Add(time.Millisecond)
					later := min(at+1, len(out)-1)
					out[later].results = append(out[later].results, genResult{ci, again})
				}
			}
		}
	}
	for i := range out {
		slices.SortStableFunc(out[i].results, func(a, b genResult) int { return a.row.CheckedAt.Compare(b.row.CheckedAt) })
	}
	return out
}

// rows maps generated results to the world's checks.
func (w *world) rows(gs []genResult) []store.ResultRow {
	out := make([]store.ResultRow, len(gs))
	for i, g := range gs {
		out[i] = g.row
		out[i].OrgID, out[i].CheckID = w.org, w.checks[g.check]
	}
	return out
}

func finalsOf(rows []store.ResultRow) []store.ResultRow {
	var out []store.ResultRow
	for _, r := range rows {
		if r.IsFinalAttempt {
			out = append(out, r)
		}
	}
	return out
}

// lockingStep feeds one step to the locking path: IngestBatch, then sweeps.
func (w *world) lockingStep(ctx context.Context, s genStep) {
	w.t.Helper()
	if len(s.results) > 0 {
		if _, err := w.e.IngestBatch(ctx, w.rows(s.results)); err != nil {
			w.t.Fatal(err)
		}
	}
	for {
		n, err := w.e.Sweep(ctx)
		if err != nil {
			w.t.Fatal(err)
		}
		if n < w.e.opts.SweepLimit {
			return
		}
	}
}

// ownerStep feeds one step to the owner: results stored without judging, their finals and
// the repeated ones to Judge, then the owner's sweep.
func (w *world) ownerStep(ctx context.Context, o *Owner, s genStep) {
	w.t.Helper()
	rows := w.rows(s.results)
	if len(rows) > 0 {
		if _, err := w.st.IngestResults(ctx, rows, nil); err != nil {
			w.t.Fatal(err)
		}
	}
	if finals := append(finalsOf(rows), w.rows(s.repeats)...); len(finals) > 0 {
		if err := o.Judge(ctx, finals); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := o.sweep(ctx); err != nil {
		w.t.Fatal(err)
	}
}

// verdicts is everything judging wrote that people see, by check index.
type verdicts struct {
	Changes, States, Incidents, Outbox, Daily []string
}

func (w *world) verdicts() verdicts {
	w.t.Helper()
	ctx := context.Background()
	var v verdicts
	// Each check's own sequence: checks judged in one step may commit in another order (a
	// repeated final brings its check into the owner's Judge, where the locking path's sweep
	// judges it a moment later, on the same clock).
	w.mu.Lock()
	perCheck := map[string][]string{}
	for _, c := range w.changes {
		idx, state, _ := strings.Cut(c, " ")
		perCheck[idx] = append(perCheck[idx], state)
	}
	w.mu.Unlock()
	for idx, states := range perCheck {
		v.Changes = append(v.Changes, idx+": "+strings.Join(states, " "))
	}
	sort.Strings(v.Changes)
	query := func(sql string, scan func(idx int, vals []any) string) []string {
		rows, err := w.st.Pool().Query(ctx, sql, w.org)
		if err != nil {
			w.t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				w.t.Fatal(err)
			}
			out = append(out, scan(w.index[uuid.UUID(vals[0].([16]byte))], vals[1:]))
		}
		if err := rows.Err(); err != nil {
			w.t.Fatal(err)
		}
		sort.Strings(out)
		return out
	}
	line := func(idx int, vals []any) string { return fmt.Sprintf("%d %v", idx, vals) }
	v.States = query(`SELECT c.id, c.state, c.state_changed_at, c.failing_since, c.passing_since, c.last_alert_at,
		c.down_alerted, c.current_incident_id IS NOT NULL, p.last_run_at
		FROM checks c JOIN check_progress p ON p.check_id = c.id WHERE c.org_id = $1`, line)
	v.Incidents = query(`SELECT check_id, started_at, ended_at FROM check_incidents WHERE org_id = $1`, line)
	v.Outbox = query(`SELECT check_id, event_type, created_at FROM outbox WHERE org_id = $1`, line)
	v.Daily = query(`SELECT check_id, day, runs, failed_runs FROM check_daily_stats WHERE org_id = $1`, line)
	return v
}

func compareVerdicts(t *testing.T, want, got verdicts, what string) {
	t.Helper()
	for _, c := range []struct {
		name      string
		want, got []string
	}{{"state changes", want.Changes, got.Changes}, {"check states", want.States, got.States},
		{"incidents", want.Incidents, got.Incidents}, {"outbox", want.Outbox, got.Outbox}, {"daily counters", want.Daily, got.Daily}} {
		if !slices.Equal(c.want, c.got) {
			t.Errorf("%s: %s differ\nlocking: %q\n%s: %q", what, c.name, c.want, what, c.got)
		}
	}
}

// genChecks draws the checks of a stream: one to three regions, every quorum, periods of
// none to a few steps, reminders on or off.
func genChecks(seed uint64, n int) []testCheck {
	rnd := rand.New(rand.NewPCG(seed, 7))
	all := check.DefaultRegions()
	quorums := []check.Quorum{check.QuorumMajority, check.QuorumAny, check.QuorumAll, check.QuorumCount(2)}
	periods := []int{0, 5, 10, 20}
	out := make([]testCheck, n)
	for i := range out {
		out[i] = testCheck{regions: all[:1+rnd.IntN(len(all))], quorum: quorums[rnd.IntN(len(quorums))],
			confirmation: periods[rnd.IntN(len(periods))], recovery: periods[rnd.IntN(len(periods))],
			timeoutMs: []int{1000, 3000}[rnd.IntN(2)], reminder: []int{-1, 1}[rnd.IntN(2)]}
		if len(out[i].regions) < 2 && out[i].quorum == check.QuorumCount(2) {
			out[i].quorum = check.QuorumAny // a count above the regions is refused
		}
	}
	return out
}

const stepEvery = 5 * time.Second

var t0 = time.Date(2026, 3, 14, 23, 58, 0, 0, time.UTC) // the stream crosses midnight (daily counters)

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
