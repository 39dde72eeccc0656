package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// leaderTestInterval is long enough that the runs a hand-over misses are fewer than one per
// check, so the catch-up republishes all of them and each check's runs stay contiguous.
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

func TestOnlyTheLeaderPublishesAndAStandbyTakesOver(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := addLeaderTestChecks(t, e, 20)
	got := e.consume(t)

	a, regA, stopA := e.startScheduler(t, Config{}, "a")
	testwait.Eventually(t, 10*time.Second, func() error {
		if !a.IsLeader() {
			return fmt.Errorf("a is not leading")
		}
		return nil
	})
	b, regB, _ := e.startScheduler(t, Config{}, "b")
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(2*len(ids)*2, "jobs", len(got.snapshot()))
	})
	if b.IsLeader() || published(regB) != 0 {
		t.Fatalf("standby b: leader %v, published %v; want only a to publish", b.IsLeader(), published(regB))
	}
	if published(regA) == 0 {
		t.Fatal("leader a published nothing")
	}

	stopA() // the leader's context ends
	stopped := time.Now()
	testwait.Eventually(t, 5*time.Second, func() error {
		if !b.IsLeader() {
			return fmt.Errorf("b has not taken over")
		}
		return nil
	})
	took := time.Since(stopped)
	t.Logf("b took over %v after a stopped", took)
	// About the 2 s standby retry when a releases its lease; the 10 s lease TTL if it did not.
	// The bound lies between the two, far from both, so a loaded machine does not cross it.
	if took > 6*time.Second {
		t.Errorf("take-over took %v, want the 2s standby retry, not the 10s lease expiry", took)
	}
	before := published(regB)
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(int(before)+2*len(ids)*2, "jobs published by b", int(published(regB)))
	})
	if a.IsLeader() {
		t.Error("a still claims to lead after it stopped")
	}
	time.Sleep(500 * time.Millisecond) // deliveries in flight
	assertContiguousRuns(t, got, ids)
}

func TestLeaderStepsDownWhenItsSessionDies(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ids := addLeaderTestChecks(t, e, 10)
	got := e.consume(t)
	a, _, _ := e.startScheduler(t, Config{}, "a")
	b, _, _ := e.startScheduler(t, Config{}, "b")
	var leader, standby *Scheduler
	testwait.Eventually(t, 10*time.Second, func() error {
		switch {
		case a.IsLeader() && b.IsLeader():
			t.Fatal("both schedulers lead")
		case a.IsLeader():
			leader, standby = a, b
		case b.IsLeader():
			leader, standby = b, a
		default:
			return fmt.Errorf("nobody leads yet")
		}
		return atLeast(len(ids)*2, "jobs", len(got.snapshot()))
	})

	// Kill the leader's lease session from the server side, as a database fail-over or a
	// network cut would.
	var pid int
	err := e.st.Pool().QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = ($1::bigint >> 32)::oid AND objid = ($1::bigint & 4294967295)::oid`, LeaseLockKey).Scan(&pid)
	if err != nil {
		t.Fatalf("find the lease holder: %v", err)
	}
	e.exec(t, `SELECT pg_terminate_backend($1)`, pid)
	killed := time.Now()
	testwait.Eventually(t, 3*time.Second, func() error {
		if leader.IsLeader() {
			return fmt.Errorf("the leader still leads after its session was killed")
		}
		return nil
	})
	t.Logf("old leader stepped down %v after its session died", time.Since(killed))
	testwait.Eventually(t, 6*time.Second, func() error {
		if !leader.IsLeader() && !standby.IsLeader() {
			return fmt.Errorf("nobody leads")
		}
		if leader.IsLeader() && standby.IsLeader() {
			t.Fatal("both schedulers lead")
		}
		return nil
	})
	t.Logf("a scheduler leads again %v after the session died", time.Since(killed))
	n := len(got.snapshot())
	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(n+2*len(ids)*2, "jobs after the hand-over", len(got.snapshot()))
	})
	time.Sleep(500 * time.Millisecond)
	assertContiguousRuns(t, got, ids)
}

// A leader that queued a run but died before recording it in its progress: its successor
// publishes the run again, with the same job id, and JetStream keeps one copy.
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
	e.exec(t, `UPDATE scheduler_progress SET handled_through = $1`, msTime(last-1000))

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
