package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

func TestRotationNeverShedsTwiceInARow(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	const r1, r2 = "cloud:us-east-1", "cloud:eu-west-2"
	rot := newRotation()
	step := func(id uuid.UUID, region string, behind bool, due int64) bool {
		shed := rot.shed(id, region, behind)
		if again := rot.shed(id, region, behind); again != shed {
			t.Fatalf("shed is not a pure question: %v then %v", shed, again)
		}
		rot.settle(id, region, due, shed)
		return shed
	}
	// Behind: every check alternates, starting shed; regions are independent.
	var gotA, gotB []bool
	for due := int64(1); due <= 6; due++ {
		gotA = append(gotA, step(a, r1, true, due))
		gotB = append(gotB, step(b, r1, true, due))
	}
	want := []bool{true, false, true, false, true, false}
	if !slices.Equal(gotA, want) || !slices.Equal(gotB, want) {
		t.Fatalf("behind: sheds %v and %v, want %v", gotA, gotB, want)
	}
	if step(a, r2, false, 7) {
		t.Fatal("shed in a region that is not behind")
	}
	// a was published last in r1 (due 6): shed at 7; then it goes first at 8.
	if !step(a, r1, true, 7) || step(a, r1, true, 8) {
		t.Fatal("a was not shed at 7 and published at 8")
	}
	// A published run while healthy clears the memory: the next behind run is shed.
	step(b, r1, true, 7) // shed (b was published at 6)
	if step(b, r1, false, 8) {
		t.Fatal("shed while healthy")
	}
	if !step(b, r1, true, 9) {
		t.Fatal("b ran last at 8 and was not shed at 9 while behind")
	}
	if !rot.shed(a, r1, true) || rot.shed(b, r1, true) {
		t.Fatal("the next behind run: a (published at 8) should be shed, b (shed at 9) published")
	}
	// Sheds older than forgetShedAfter are forgotten (deleted checks, moved shards).
	rot.prune(9 + forgetShedAfter.Milliseconds() + 1)
	if len(rot.shedAt) != 0 {
		t.Fatalf("prune kept %d stale sheds", len(rot.shedAt))
	}
}

func TestIsBehind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		was     bool
		pending uint64
		rate    float64
		want    bool
	}{
		{"idle region", false, 0, 0, false},
		{"no agents, below the floor", false, 100, 0, false},
		{"no agents, above the floor", false, 101, 0, true},
		{"agents keep up", false, 500, 1000, false}, // 0.5 s of work
		{"more than two seconds of work", false, 2001, 1000, true},
		{"behind, not yet down to half", true, 1001, 1000, true},
		{"behind, drained to half", true, 1000, 1000, false},
		{"behind without agents, drained to half the floor", true, 50, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := isBehind(c.was, c.pending, c.rate, 2*time.Second, 100); got != c.want {
				t.Errorf("isBehind(was %v, pending %d, rate %v) = %v, want %v", c.was, c.pending, c.rate, got, c.want)
			}
		})
	}
}

// TestShedsRegionBehind runs ordinary checks and one confirming check in two regions, one of
// which nothing drains: the scheduler sheds that region's ordinary runs in rotation and
// records them, keeps publishing every run of the healthy region and every confirmation run,
// stops shedding once the region's queue is drained, and handles every due run.
func TestShedsRegionBehind(t *testing.T) {
	t.Parallel()
	const healthy, slow = "cloud:us-east-1", "cloud:eu-west-2"
	e := setup(t)
	var ordinary []uuid.UUID
	for range 20 {
		ordinary = append(ordinary, e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, Regions: []string{healthy, slow},
			TCPHost: ptr("db.example.test"), TCPPort: ptr(5432)}))
	}
	confirming := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, Regions: []string{healthy, slow},
		State: stateVerifying, ConfirmationPeriod: 3, TCPHost: ptr("db.example.test"), TCPPort: ptr(5432)})

	healthyJobs := e.consumeRegion(t, healthy)
	_, reg, stop := e.startScheduler(t, Config{BacklogSample: 100 * time.Millisecond, ShedAfter: time.Second,
		ShedMinPending: 15, MinConfirmationCadence: time.Second}, "a")

	// 21 jobs a second reach the slow region and none leave it: past 15 pending it is behind.
	testwait.Eventually(t, 20*time.Second, func() error {
		return atLeast(40, "runs shed in "+slow, int(counterOf(reg, "vantage_scheduler_runs_shed_total", slow)))
	})
	if n := counterOf(reg, "vantage_scheduler_runs_shed_total", healthy); n != 0 {
		t.Fatalf("%v runs shed in the healthy region", n)
	}
	// The healthy region keeps getting every check's runs while the other sheds.
	before := map[uuid.UUID]int{}
	for _, id := range append(ordinary, confirming) {
		before[id] = len(healthyJobs.of(id))
	}
	testwait.Eventually(t, 10*time.Second, func() error {
		for id, n := range before {
			if err := atLeast(n+3, "healthy jobs of "+id.String(), len(healthyJobs.of(id))); err != nil {
				return err
			}
		}
		return nil
	})

	// Agents come back: the queue drains and shedding stops.
	slowJobs := e.consumeRegion(t, slow)
	testwait.Eventually(t, 20*time.Second, func() error {
		if v := gaugeOf(reg, "vantage_scheduler_region_behind", slow); v != 0 {
			return fmt.Errorf("%s still behind", slow)
		}
		return nil
	})
	shedThen := counterOf(reg, "vantage_scheduler_runs_shed_total", slow)
	resumed := time.Now().UnixMilli()
	testwait.Eventually(t, 10*time.Second, func() error {
		for _, id := range ordinary {
			n := 0
			for _, g := range slowJobs.of(id) {
				if g.job.ScheduledAtUnixMs > resumed {
					n++
				}
			}
			if err := atLeast(3, "runs published after resuming of "+id.String(), n); err != nil {
				return err
			}
		}
		return nil
	})
	if now := counterOf(reg, "vantage_scheduler_runs_shed_total", slow); now != shedThen {
		t.Fatalf("%v runs shed after %s drained", now-shedThen, slow)
	}
	stop() // records the skipped runs it still holds

	testwait.Eventually(t, 10*time.Second, func() error {
		b, err := jobqueue.RegionBacklog(context.Background(), e.js, slow)
		if err != nil || b.Pending != 0 {
			return fmt.Errorf("%s backlog %+v, %v", slow, b, err)
		}
		return nil
	})
	skipped := e.skippedRuns(t)
	for _, id := range append(ordinary, confirming) {
		for _, c := range []struct {
			region string
			got    *jobs
		}{{healthy, healthyJobs}, {slow, slowJobs}} {
			sheds, err := accountRuns(c.got.of(id), skipped[runKey{id, c.region}], c.region)
			if err != nil {
				t.Errorf("check %s in %s: %v", id, c.region, err)
			}
			switch {
			case id == confirming || c.region == healthy:
				if sheds != 0 {
					t.Errorf("check %s in %s: %d runs shed, want none (healthy region or confirmation runs)", id, c.region, sheds)
				}
			case sheds == 0:
				t.Errorf("check %s in %s: no run shed while the region was behind", id, c.region)
			}
		}
	}
}

// accountRuns checks that every run of a check in region from its first to its last is either
// published or recorded skipped, never both, and never shed twice in a row, and that the run
// after a shed one is published as a catch-up job (which agents never shed); it returns how
// many were shed.
func accountRuns(published []gotJob, skipped map[int64]string, region string) (sheds int, err error) {
	handled := map[int64]string{}
	catchUp := map[int64]bool{}
	for _, g := range published {
		if g.job.Region == region {
			handled[g.job.ScheduledAtUnixMs] = "published"
			catchUp[g.job.ScheduledAtUnixMs] = g.job.CatchUp
		}
	}
	for due, reason := range skipped {
		if _, dup := handled[due]; dup {
			return 0, fmt.Errorf("run due %d both published and skipped %s", due, reason)
		}
		handled[due] = reason
	}
	dues := make([]int64, 0, len(handled))
	for due := range handled {
		dues = append(dues, due)
	}
	slices.Sort(dues)
	for i, due := range dues {
		if i > 0 && due-dues[i-1] != 1000 {
			return 0, fmt.Errorf("runs from %d to %d neither published nor recorded skipped", dues[i-1], due)
		}
		if i > 0 && handled[dues[i-1]] == store.SkipShed && handled[due] == "published" && !catchUp[due] {
			return 0, fmt.Errorf("run due %d follows a shed run but is not a catch-up job", due)
		}
		if handled[due] == store.SkipShed {
			sheds++
			if i > 0 && handled[dues[i-1]] == store.SkipShed {
				return 0, fmt.Errorf("runs due %d and %d both shed", dues[i-1], due)
			}
		}
	}
	if len(dues) < 5 {
		return 0, fmt.Errorf("only %d runs handled", len(dues))
	}
	return sheds, nil
}

// skippedRuns returns the recorded skipped runs of the test's organization, by check and
// region, then due time.
func (e *env) skippedRuns(t testing.TB) map[runKey]map[int64]string {
	t.Helper()
	rows, err := e.st.Pool().Query(context.Background(),
		`SELECT check_id, region, scheduled_at, reason FROM skipped_runs WHERE org_id = $1`, e.orgID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[runKey]map[int64]string{}
	for rows.Next() {
		var k runKey
		var at time.Time
		var reason string
		if err := rows.Scan(&k.check, &k.region, &at, &reason); err != nil {
			t.Fatal(err)
		}
		if out[k] == nil {
			out[k] = map[int64]string{}
		}
		out[k][at.UnixMilli()] = reason
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// consumeRegion consumes one region's (non-browser) jobs like its agents do.
func (e *env) consumeRegion(t testing.TB, region string) *jobs {
	t.Helper()
	got := &jobs{}
	cons, err := e.js.Consumer(context.Background(), wire.JobStream, wire.ConsumerName(region))
	if err != nil {
		t.Fatalf("consumer of %s: %v", region, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		j, err := wire.DecodeJob(m.Data())
		if err != nil {
			t.Errorf("decode job on %s: %v", m.Subject(), err)
			return
		}
		got.mu.Lock()
		got.all = append(got.all, gotJob{subject: m.Subject(), job: j})
		got.mu.Unlock()
		_ = m.Ack()
	})
	if err != nil {
		t.Fatalf("consume %s: %v", region, err)
	}
	t.Cleanup(cc.Stop)
	return got
}

// counterOf is a counter's series of one region.
func counterOf(reg *prometheus.Registry, name, region string) float64 {
	return seriesOf(reg, name, region, func(m float64, _ float64) float64 { return m })
}

// gaugeOf is a gauge's series of one region; -1 when absent.
func gaugeOf(reg *prometheus.Registry, name, region string) float64 {
	return seriesOf(reg, name, region, func(_ float64, g float64) float64 { return g })
}

func seriesOf(reg *prometheus.Registry, name, region string, pick func(counter, gauge float64) float64) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "region" && l.GetValue() == region {
					return pick(m.GetCounter().GetValue(), m.GetGauge().GetValue())
				}
			}
		}
	}
	if name == "vantage_scheduler_region_behind" {
		return -1
	}
	return 0
}
