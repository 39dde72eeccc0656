package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// leaderTestInterval is long enough that the runs a hand-over misses are fewer than one per
// check, so the catch-up publishes all of them and each check's runs stay contiguous.
const leaderTestInterval = 4

func addLeaderTestChecks(t *testing.T, e *env, n int) []uuid.UUID {
	var ids []uuid.UUID
	for i := range n {
		ids = append(ids, e.addCheck(t, testCheck{Kind: check.TCP, Interval: leaderTestInterval,
			Regions: []string{"cloud:us-east-1", "cloud:ap-southeast-2"}, TCPHost: ptr(fmt.Sprintf("h%d.test", i)), TCPPort: ptr(1)}))
	}
	return ids
}

// assertContiguousRuns checks that every check's runs, per region, were received exactly once
// each and without a gap on the check's grid, from its first run to its last.
func assertContiguousRuns(t *testing.T, got *jobs, ids []uuid.UUID) {
	t.Helper()
	for _, id := range ids {
		byRegion := map[string][]int64{}
		for _, g := range got.of(id) {
			byRegion[g.job.Region] = append(byRegion[g.job.Region], g.job.ScheduledAtUnixMs)
		}
		for region, dues := range byRegion {
			slices.Sort(dues)
			for i := 1; i < len(dues); i++ {
				switch gap := dues[i] - dues[i-1]; {
				case gap == 0:
					t.Errorf("check %s: run due at %d delivered twice to %s", id, dues[i], region)
				case gap != leaderTestInterval*1000:
					t.Errorf("check %s, %s: runs due at %d and %d are %dms apart: a run was lost in the hand-over", id, region, dues[i-1], dues[i], gap)
				}
			}
		}
	}
}

// shared checks that the schedulers own every shard between them, each at most once and none
// above its share.
func shared(scheds ...*Scheduler) error {
	var all shard.Set
	total := 0
	for i, s := range scheds {
		owned := s.Owned()
		n := owned.Len()
		if n > shard.Target(len(scheds)) {
			return fmt.Errorf("scheduler %d owns %d shards, above its share %d", i, n, shard.Target(len(scheds)))
		}
		for _, k := range owned.List() {
			if all.Has(k) {
				return fmt.Errorf("shard %d owned twice", k)
			}
			all.Add(k)
		}
		total += n
	}
	if total != shard.Count {
		return fmt.Errorf("%d of %d shards owned", total, shard.Count)
	}
	return nil
}

// Three replicas share the shards, each publishing its own; when one stops, the others take
// its shards within 5s, and every check's runs stay exactly once each and without a gap —
// through the hand-overs of the start (the first replica takes every shard, then gives the
// newcomers their share) and of the stop.
func TestReplicasShareTheShardsAndTakeOverAStoppedOnesShards(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := addLeaderTestChecks(t, e, 60)
	got := e.consume(t)

	a, regA, stopA := e.startScheduler(t, Config{}, "a")
	b, regB, _ := e.startScheduler(t, Config{}, "b")
	c, regC, _ := e.startScheduler(t, Config{}, "c")
	testwait.Eventually(t, 10*time.Second, func() error { return shared(a, b, c) })
	before := [3]float64{published(regA), published(regB), published(regC)}
	testwait.Eventually(t, 15*time.Second, func() error {
		for i, reg := range []*prometheus.Registry{regA, regB, regC} {
			if published(reg) <= before[i] {
				return fmt.Errorf("scheduler %d has published nothing since the shards were shared", i)
			}
		}
		return nil
	})
	stopA() // a's context ends: it records its progress and closes its session
	stopped := time.Now()
	testwait.Eventually(t, 5*time.Second, func() error { return shared(b, c) })
	t.Logf("b and c own every shard %v after a stopped", time.Since(stopped))
	if n := a.Owned(); n.Len() != 0 {
		t.Errorf("a still claims %d shards after it stopped", n.Len())
	}
	n := len(got.snapshot())
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(n+2*len(ids)*2, "jobs after the hand-over", len(got.snapshot()))
	})
	time.Sleep(500 * time.Millisecond) // deliveries in flight
	assertContiguousRuns(t, got, ids)
}

// A replica whose lease session is killed from the server side (a database fail-over, a
// network cut) stops publishing; the others take its shards within 5s, and it takes its share
// back with a new session — no run lost, none delivered twice.
func TestAKilledSessionsShardsMove(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := addLeaderTestChecks(t, e, 30)
	got := e.consume(t)
	a, _, _ := e.startScheduler(t, Config{}, "a")
	b, _, _ := e.startScheduler(t, Config{}, "b")
	testwait.Eventually(t, 10*time.Second, func() error {
		if err := shared(a, b); err != nil {
			return err
		}
		return atLeast(len(ids)*2, "jobs", len(got.snapshot()))
	})
	victim := a.Owned()

	// Kill the session holding shard lease victim's first shard.
	var pid int
	err := e.st.Pool().QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1::bigint::oid AND objid = $2::bigint::oid`, int64(ShardLockClass), victim.List()[0]).Scan(&pid)
	if err != nil {
		t.Fatalf("find the lease holder: %v", err)
	}
	e.exec(t, `SELECT pg_terminate_backend($1)`, pid)
	killed := time.Now()
	testwait.Eventually(t, 3*time.Second, func() error {
		if n := a.Owned(); n.Len() != 0 {
			return fmt.Errorf("a still schedules %d shards after its session was killed", n.Len())
		}
		return nil
	})
	t.Logf("a stopped %v after its session died", time.Since(killed))
	testwait.Eventually(t, 5*time.Second, func() error {
		owned := b.Owned()
		for _, k := range victim.List() {
			if !owned.Has(k) && !a.Owned().Has(k) {
				return fmt.Errorf("shard %d of the killed session has no owner", k)
			}
		}
		return nil
	})
	t.Logf("a's shards owned again %v after its session died", time.Since(killed))
	testwait.Eventually(t, 10*time.Second, func() error { return shared(a, b) })
	n := len(got.snapshot())
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(n+2*len(ids)*2, "jobs after the hand-over", len(got.snapshot()))
	})
	time.Sleep(500 * time.Millisecond)
	assertContiguousRuns(t, got, ids)
}

// A replica that queued a run but died before recording it in its shard's progress: its
// successor publishes the run again, with the same job id, and JetStream keeps one copy.
func TestTakeOverRepublishingAQueuedRunIsDeduplicated(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := addLeaderTestChecks(t, e, 1)
	id := ids[0]
	got := e.consume(t)
	_, _, stopA := e.startScheduler(t, Config{}, "a")
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(2*2, "jobs", len(got.of(id)))
	})
	stopA() // right after a run, long before the next one
	js := got.of(id)
	last := js[len(js)-1].job.ScheduledAtUnixMs
	e.exec(t, `UPDATE scheduler_shard_progress SET handled_through = $1`, msTime(last-1000))

	_, regB, _ := e.startScheduler(t, Config{}, "b")
	testwait.Eventually(t, 10*time.Second, func() error {
		if d := counter(regB, "vantage_scheduler_jobs_duplicate_total"); d < 2 {
			return fmt.Errorf("b's duplicates: %v, want the 2 regions of the republished run", d)
		}
		return nil
	})
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(1, "runs published by b", int(published(regB)))
	})
	time.Sleep(500 * time.Millisecond)
	assertContiguousRuns(t, got, ids)
}
