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

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
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
