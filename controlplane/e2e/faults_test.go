package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// midJob is a check whose first run is in flight on one of two agents of its region: the
// target holds the first request until its client goes away and answers later ones at once.
type midJob struct {
	s                *stack
	id               uuid.UUID
	region           string
	requests         *atomic.Int64
	firstGone        chan struct{} // closed when the held request's client went away
	holder, survivor *agent
}

// startMidJob sets a midJob up in region and returns once the job is in flight.
func startMidJob(t *testing.T, region string) *midJob {
	t.Helper()
	m := &midJob{region: region, requests: &atomic.Int64{}, firstGone: make(chan struct{})}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.requests.Add(1) == 1 {
			select {
			case <-r.Context().Done():
				close(m.firstGone)
			case <-release:
			}
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})

	m.s = newStack(t)
	agents := []*agent{m.s.startAgent(t, "agent-1", region), m.s.startAgent(t, "agent-2", region)}

	// The job's deadline is due + min(interval, 2 × timeout + 10s) (scheduler.jobDeadline): with
	// a timeout of 20s and an interval of at least 60s a job redelivered about AckWait (30s)
	// after its first delivery is still worth running, and no second run comes meanwhile.
	m.id = m.s.createCheck(t, "/v1/checks", map[string]any{
		"name":                            "e2e slow first answer",
		"url":                             srv.URL + "/",
		"test_regions":                    []string{region},
		"timeout":                         20000,
		"confirmation_period_seconds":     0,
		"recovery_period_seconds":         0,
		"reminder_alert_interval_minutes": -1,
	})
	interval, due := soonInterval(m.id, 60, 180, 4*time.Second, 15*time.Second)
	m.s.setInterval(t, m.id, interval)
	t.Logf("test_interval %ds: first run due in %s", interval, time.Until(due).Round(time.Millisecond))

	// Bounded by the interval, not the computed due time, in case the grid ever changes.
	testwait.Eventually(t, time.Duration(interval)*time.Second+slack, func() error {
		if m.requests.Load() == 0 {
			return fmt.Errorf("the target has not been probed yet")
		}
		return nil
	})
	// The agent running the job has it in flight; the other has none.
	testwait.Eventually(t, 10*time.Second, func() error {
		var inFlight [2]float64
		for i, a := range agents {
			n, err := a.metric("vantage_agent_jobs_in_flight")
			if err != nil {
				return err
			}
			inFlight[i] = n
		}
		switch inFlight {
		case [2]float64{1, 0}:
			m.holder, m.survivor = agents[0], agents[1]
		case [2]float64{0, 1}:
			m.holder, m.survivor = agents[1], agents[0]
		default:
			return fmt.Errorf("jobs in flight: %s %v, %s %v; want one job on one agent", agents[0].name, inFlight[0], agents[1].name, inFlight[1])
		}
		return nil
	})
	return m
}

// finish waits for the check to be UP on the survivor's result and checks the aftermath: two
// requests (the held one and the survivor's), the run's one final attempt stored once, no
// incident, no alert, the job acked. It returns when the survivor started the job.
func (m *midJob) finish(t *testing.T, stoppedAt time.Time, within time.Duration) time.Time {
	t.Helper()
	s, id := m.s, m.id
	select {
	case <-m.firstGone:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s's request to the target is still open 10s after it was stopped", m.holder.name)
	}
	seen := s.waitStatus(t, id, "UP", within)
	t.Logf("UP %s after %s was stopped; statuses seen %v", time.Since(stoppedAt).Round(time.Millisecond), m.holder.name, seen)
	mustOnlySee(t, seen, "PENDING", "UP")
	if got := m.requests.Load(); got != 2 {
		t.Errorf("the target got %d requests, want 2: the stopped agent's and the one of %s", got, m.survivor.name)
	}

	// One run, one region, one attempt: stored once. Its job was scheduled before the agent was
	// stopped (the job id is a UUIDv7 of the due time), so it is the stopped agent's job.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		jobID        uuid.UUID
		rows         int
		attempt      int
		final        bool
		dispatchedAt time.Time
	)
	if err := s.db.QueryRow(ctx, `SELECT min(job_id::text)::uuid, count(*), min(attempt_number), bool_and(is_final_attempt), min(dispatched_at)
		FROM check_results WHERE check_id = $1 AND region = $2`, id, m.region).Scan(&jobID, &rows, &attempt, &final, &dispatchedAt); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || attempt != 1 || !final {
		t.Errorf("stored results: %d rows, attempt %d, final %v; want the job's one final attempt, once", rows, attempt, final)
	}
	if n := s.count(t, `SELECT count(DISTINCT job_id) FROM check_results WHERE check_id = $1`, id); n != 1 {
		t.Errorf("results of %d jobs, want 1", n)
	}
	if dups := s.duplicateResults(t, id); len(dups) > 0 {
		t.Errorf("results stored more than once: %v", dups)
	}
	sec, nsec := jobID.Time().UnixTime()
	if scheduled := time.Unix(sec, nsec); scheduled.After(stoppedAt) {
		t.Errorf("the stored result's job %s is due at %s, after %s was stopped at %s: not its job", jobID, scheduled, m.holder.name, stoppedAt)
	}
	if inc := s.incidents(t, "uptime", id); len(inc) != 0 {
		t.Errorf("incidents: %+v, want none", inc)
	}
	if n := s.count(t, `SELECT count(*) FROM outbox WHERE check_id = $1`, id); n != 0 {
		t.Errorf("outbox rows: %d, want none", n)
	}
	// The survivor acked the job: the work queue holds nothing for the region.
	testwait.Eventually(t, 10*time.Second, func() error {
		info, err := s.consumerInfo(m.region)
		if err != nil {
			return err
		}
		if info.NumAckPending != 0 || info.NumPending != 0 {
			return fmt.Errorf("consumer %s: %d jobs awaiting an ack, %d pending; want none", info.Name, info.NumAckPending, info.NumPending)
		}
		return nil
	})
	if n, err := m.survivor.metric("vantage_agent_jobs_total"); err != nil || n < 1 {
		t.Errorf("%s finished %v jobs (%v), want at least the stopped agent's", m.survivor.name, n, err)
	}
	return dispatchedAt
}

// TestAgentKilledMidJob: two agents share a region; the one running a job is killed (SIGKILL)
// while its probe is in flight; JetStream redelivers the job to the other agent after
// AckWait; its result is stored once per (job, region, attempt) and the check is UP, with no
// incident and no alert.
func TestAgentKilledMidJob(t *testing.T) {
	parallel(t)
	m := startMidJob(t, "cloud:ap-south-1")
	m.holder.kill(t)
	killed := time.Now()
	t.Logf("killed %s (it held the job); %s should get the job after AckWait", m.holder.name, m.survivor.name)
	started := m.finish(t, killed, wire.JobAckWait+slack)
	if wait := started.Sub(killed); wait < wire.JobAckWait-5*time.Second {
		t.Errorf("%s ran the job %s after the kill; a redelivery after a crash waits for AckWait (%s)", m.survivor.name, wait, wire.JobAckWait)
	}
}

// TestAgentStoppedMidJob: two agents share a region; the one running a job gets SIGTERM while
// its probe hangs. It lets the job run for its drain timeout, then aborts it without
// reporting and hands it back, so the other agent runs it at once instead of after AckWait;
// the agent exits cleanly and the run is stored once.
func TestAgentStoppedMidJob(t *testing.T) {
	parallel(t)
	m := startMidJob(t, "cloud:ap-southeast-2")
	stopping := time.Now()
	m.holder.terminate(t)
	t.Logf("%s (it held the job) exited %s after SIGTERM", m.holder.name, time.Since(stopping).Round(time.Millisecond))
	if took := time.Since(stopping); took > agentShutdownTimeout+5*time.Second {
		t.Errorf("%s took %s to stop, want about its drain timeout %s", m.holder.name, took, agentShutdownTimeout)
	}
	started := m.finish(t, stopping, agentShutdownTimeout+slack)
	if wait := started.Sub(stopping); wait >= wire.JobAckWait {
		t.Errorf("%s ran the job %s after SIGTERM: it waited for AckWait (%s) instead of being handed back", m.survivor.name, wait, wire.JobAckWait)
	}
}

// soonInterval picks a test_interval in [lo, hi] seconds whose first run after now falls in
// [minWait, maxWait], following the scheduler's grid (scheduler/timing.go: a check runs every
// interval at phase sha256(id)[:8] mod interval), and returns it with that due time. A new
// check first runs at its next grid point, up to a whole interval away; this keeps a test with
// a long interval from waiting for it. Should the grid ever differ, the test only waits longer:
// the wait for the first run is bounded by the interval.
func soonInterval(id uuid.UUID, lo, hi int, minWait, maxWait time.Duration) (int, time.Time) {
	now := time.Now()
	sum := sha256.Sum256(id[:])
	h := binary.BigEndian.Uint64(sum[:8])
	for interval := lo; interval <= hi; interval++ {
		step := int64(interval) * 1000
		phase := int64(h % uint64(step))
		next := phase + ((now.UnixMilli()-phase)/step+1)*step
		due := time.UnixMilli(next)
		if wait := due.Sub(now); wait >= minWait && wait <= maxWait {
			return interval, due
		}
	}
	step := int64(lo) * 1000
	phase := int64(h % uint64(step))
	return lo, time.UnixMilli(phase + ((now.UnixMilli()-phase)/step+1)*step)
}

// TestControlPlaneRestart: a DOWN check survives control-plane restarts (SIGTERM, then SIGKILL,
// each followed by a new process on the same database, NATS and addresses): scheduling
// resumes, new results arrive, and the incident opened before the restarts stays the only
// one, with one uptime.down, until the target heals and that same incident closes.
func TestControlPlaneRestart(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, false)
	s := newStack(t)
	const region = "cloud:us-east-2"
	ag := s.startAgent(t, "agent-restart", region)
	id := s.createCheck(t, "/v1/checks", map[string]any{
		"name":                            "e2e restart",
		"url":                             target.URL,
		"test_regions":                    []string{region},
		"timeout":                         3000,
		"confirmation_period_seconds":     0,
		"recovery_period_seconds":         0,
		"reminder_alert_interval_minutes": -1,
	})
	s.setInterval(t, id, fastInterval)
	s.waitStatus(t, id, "DOWN", 30*time.Second)

	// Let a few more failing runs be judged while DOWN, then note where things stand.
	downAt := time.Now()
	testwait.Eventually(t, 3*fastInterval*time.Second+slack, func() error {
		if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND is_final_attempt AND checked_at > $2`, id, downAt); n < 2 {
			return fmt.Errorf("%d final results since DOWN, want 2", n)
		}
		return nil
	})
	incBefore := s.incidents(t, "uptime", id)
	if len(incBefore) != 1 || incBefore[0].EndedAt != nil {
		t.Fatalf("incidents before the restart: %+v, want one open", incBefore)
	}

	restart := func(how string) {
		t.Helper()
		before := s.checkRow(t, id)
		if before.progress == nil {
			t.Fatal("no scheduler progress after several runs")
		}
		switch how {
		case "SIGTERM":
			// A graceful stop ends the agents' streams instead of waiting for them until the
			// shutdown timeout forces it.
			if took := s.cp.stop(t); took >= cpShutdownTimeout/2 {
				t.Errorf("SIGTERM took %s to stop the control plane (shutdown timeout %s): it waited for something that does not end by itself",
					took.Round(time.Millisecond), cpShutdownTimeout)
			} else {
				t.Logf("control plane stopped %s after SIGTERM", took.Round(time.Millisecond))
			}
		case "SIGKILL":
			s.cp.kill(t)
		}
		s.cp.start(t)
		restarted := time.Now()
		ag.waitReady(t) // registered with the new process
		t.Logf("control plane started again after %s; agent registered %s later", how, time.Since(restarted).Round(time.Millisecond))

		testwait.Eventually(t, 3*fastInterval*time.Second+slack, func() error {
			now := s.checkRow(t, id)
			if now.progress == nil || !now.progress.After(*before.progress) {
				return fmt.Errorf("scheduler progress %v, not after %v from before the restart", now.progress, before.progress)
			}
			if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND is_final_attempt AND checked_at > $2`, id, restarted); n < 3 {
				return fmt.Errorf("%d final results since the restart, want 3", n)
			}
			return nil
		})
		after := s.checkRow(t, id)
		if after.state != "DOWN" || !after.stateChangedAt.Equal(before.stateChangedAt) {
			t.Errorf("after the %s restart the check is %s since %s; want still DOWN since %s", how, after.state, after.stateChangedAt, before.stateChangedAt)
		}
		if st, err := s.status(id); err != nil || st != "DOWN" {
			t.Errorf("status after the %s restart: %q %v, want DOWN", how, st, err)
		}
		inc := s.incidents(t, "uptime", id)
		if len(inc) != 1 || inc[0].ID != incBefore[0].ID || inc[0].EndedAt != nil {
			t.Errorf("incidents after the %s restart: %+v, want only %s, open", how, inc, incBefore[0].ID)
		}
		if got := s.outbox(t, id, "uptime.down"); got != 1 {
			t.Errorf("uptime.down outbox rows after the %s restart: %d, want 1", how, got)
		}
		if dups := s.duplicateResults(t, id); len(dups) > 0 {
			t.Errorf("results stored more than once: %v", dups)
		}
	}
	restart("SIGTERM")
	restart("SIGKILL") // a crash, too: the lease and the state live in PostgreSQL

	// The incident from before the restart is the one that closes.
	target.healthy.Store(true)
	s.waitStatus(t, id, "UP", fastInterval*time.Second+slack)
	inc := s.incidents(t, "uptime", id)
	if len(inc) != 1 || inc[0].ID != incBefore[0].ID || inc[0].EndedAt == nil {
		t.Errorf("incidents after recovery: %+v, want only %s, closed", inc, incBefore[0].ID)
	}
	if up, down := s.outbox(t, id, "uptime.up"), s.outbox(t, id, "uptime.down"); up != 1 || down != 1 {
		t.Errorf("outbox: %d uptime.up and %d uptime.down rows, want 1 and 1", up, down)
	}
}

// TestRegionWithoutAgent: a check runs in two regions, one of which has no agent. The served
// region's passing results make it UP, and it stays UP across several runs (never VERIFYING
// or DOWN); the silent region's jobs wait undelivered in JetStream until they expire.
func TestRegionWithoutAgent(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	const served, silent = "cloud:eu-west-2", "cloud:ap-northeast-1"
	s.startAgent(t, "agent-served", served)
	id := s.createCheck(t, "/v1/checks", map[string]any{
		"name":                            "e2e half the regions",
		"url":                             target.URL,
		"test_regions":                    []string{served, silent},
		"timeout":                         1000,
		"confirmation_period_seconds":     0,
		"recovery_period_seconds":         0,
		"reminder_alert_interval_minutes": -1,
	})
	s.setInterval(t, id, fastInterval)

	// A run missing a region is judged at its deadline: scheduled + timeout × 2 attempts + 15s
	// grace (evaluator.Config).
	seen := s.waitStatus(t, id, "UP", fastInterval*time.Second+2*time.Second+15*time.Second+slack)
	mustOnlySee(t, seen, "PENDING", "UP")
	upRow := s.checkRow(t, id)
	resultsAtUp := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1`, id)

	// Several more runs are judged; the check is UP at every look.
	const runs = 4
	watch := time.Now().Add(runs*fastInterval*time.Second + 2*time.Second)
	for time.Now().Before(watch) {
		st, err := s.status(id)
		if err != nil {
			t.Fatal(err)
		}
		if st != "UP" {
			t.Fatalf("the check is %s, want UP throughout: a region without agents must not flip it", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	now := s.checkRow(t, id)
	if now.state != "UP" || !now.stateChangedAt.Equal(upRow.stateChangedAt) {
		t.Errorf("the check is %s since %s, want UP since %s (no transition in between)", now.state, now.stateChangedAt, upRow.stateChangedAt)
	}
	if upRow.lastRunAt == nil || now.lastRunAt == nil || now.lastRunAt.Sub(*upRow.lastRunAt) < (runs-1)*fastInterval*time.Second {
		t.Errorf("last judged run moved from %v to %v: want %d more runs judged while watching", upRow.lastRunAt, now.lastRunAt, runs-1)
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1`, id); n < resultsAtUp+runs-1 {
		t.Errorf("%d results, %d when UP; want new results from %s", n, resultsAtUp, served)
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND (region <> $2 OR NOT passing)`, id, served); n != 0 {
		t.Errorf("%d results that are not passing results from %s", n, served)
	}
	if n := s.count(t, `SELECT count(*) FROM check_incidents WHERE check_id = $1`, id); n != 0 {
		t.Errorf("incidents: %d, want none", n)
	}
	if n := s.count(t, `SELECT count(*) FROM outbox WHERE check_id = $1`, id); n != 0 {
		t.Errorf("outbox rows: %d, want none", n)
	}
	info, err := s.consumerInfo(silent)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending < runs || info.NumAckPending != 0 || info.Delivered.Consumer != 0 {
		t.Errorf("consumer %s: %d jobs pending, %d awaiting an ack, %d delivered; want the runs' jobs waiting undelivered (they expire after %s)",
			info.Name, info.NumPending, info.NumAckPending, info.Delivered.Consumer, wire.JobMaxAge)
	}
}

// checkRowState is what the database says about a check's state and the schedule.
type checkRowState struct {
	state          string
	stateChangedAt time.Time
	progress       *time.Time // the check's shard's: its runs due up to it were handled
	lastRunAt      *time.Time
}

func (s *stack) checkRow(t *testing.T, id uuid.UUID) checkRowState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r checkRowState
	var changed *time.Time
	if err := s.db.QueryRow(ctx, `SELECT state, state_changed_at, (SELECT handled_through FROM scheduler_shard_progress
			WHERE shard = get_byte(sha256(uuid_send(c.id)), 0)),
		(SELECT last_run_at FROM check_progress WHERE check_id = c.id) FROM checks c WHERE id = $1`, id).Scan(&r.state, &changed, &r.progress, &r.lastRunAt); err != nil {
		t.Fatal(err)
	}
	if changed != nil {
		r.stateChangedAt = *changed
	}
	return r
}
