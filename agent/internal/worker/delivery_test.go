package worker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestSlotsFreeBeforeConfirmationAndAcksWaitForIt: probing does not wait for delivery. With
// the control plane holding every ack for longer than AckWait, an agent with 4 slots still
// probes all 40 jobs, acks none of them, keeps them all in progress (none is redelivered),
// and acks all of them once the control plane confirms.
func TestSlotsFreeBeforeConfirmationAndAcksWaitForIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	release := make(chan struct{})
	e.cp.SetOnResult(func(ctx context.Context, _ *vantagev1.CheckResult) (bool, string) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return true, ""
	})
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(0)
	e.startAgent(t, "agent-a", runner, worker.Config{
		Concurrency: 4, AckWait: 2 * time.Second, ProgressInterval: 300 * time.Millisecond,
	})
	const jobs = 40
	for i := range jobs {
		agenttest.PublishJob(t, e.js, tcpJob(fmt.Sprintf("job-%d", i), usEast, port, 1))
	}
	testwait.Eventually(t, 20*time.Second, func() error {
		if _, runs := runner.stats(); len(runs) != jobs {
			return fmt.Errorf("%d of %d jobs probed while no result is confirmed", len(runs), jobs)
		}
		return nil
	})
	time.Sleep(2500 * time.Millisecond) // past AckWait: only InProgress keeps the jobs here
	if n := e.streamMsgs(t); n != jobs {
		t.Fatalf("stream holds %d jobs before any confirmation, want %d (acked too early)", n, jobs)
	}
	close(release)
	waitStreamMsgs(t, e, 0)

	maxRunning, runs := runner.stats()
	for id, n := range runs {
		if n != 1 {
			t.Errorf("%s ran %d times, want 1 (redelivered while waiting for its ack)", id, n)
		}
	}
	if maxRunning > 4 {
		t.Errorf("%d probes ran at once, want <= 4", maxRunning)
	}
	if n := e.cp.StoredCount(); n != jobs {
		t.Errorf("%d results stored, want %d", n, jobs)
	}
}

// TestControlPlaneDiesBeforeConfirming: results the control plane took but never confirmed
// (it crashed) leave their jobs unacked; the jobs are redelivered and run again, and the
// control plane, idempotent on the run's identity, stores each once.
func TestControlPlaneDiesBeforeConfirming(t *testing.T) {
	t.Parallel()
	e := setup(t)
	took := make(chan struct{}, 10)
	e.cp.SetOnResult(func(ctx context.Context, _ *vantagev1.CheckResult) (bool, string) {
		took <- struct{}{}
		<-ctx.Done() // stored, but the ack never leaves: the control plane dies first
		return true, ""
	})
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(0)
	a := e.startAgent(t, "agent-a", runner, worker.Config{})
	agenttest.PublishJob(t, e.js, tcpJob("job-1", usEast, port, 1))
	<-took
	if n := e.streamMsgs(t); n != 1 {
		t.Fatalf("stream holds %d jobs before confirmation, want 1", n)
	}
	e.cp.SetOnResult(nil)
	e.cp.Stop()
	testwait.Eventually(t, 10*time.Second, func() error {
		if a.up.Ready() {
			return errors.New("uplink still ready")
		}
		return nil
	})
	e.cp.Restart(t)
	waitStreamMsgs(t, e, 0)

	k := key("job-1", usEast, 1)
	if n := e.cp.ReceivedCount(k); n != 2 {
		t.Errorf("result received %d times, want 2 (unconfirmed, then again after redelivery)", n)
	}
	if n := e.cp.StoredCount(); n != 1 {
		t.Errorf("%d results stored, want 1", n)
	}
	if _, runs := runner.stats(); runs["job-1"] != 2 {
		t.Errorf("job ran %d times, want 2", runs["job-1"])
	}
}

// TestDeadAgentsJob: an agent that dies mid-job (its NATS connection gone, so neither ack nor
// progress arrives) loses nothing. Its job is redelivered after AckWait and run by another
// agent while its run is current; once its deadline has passed, the other agent reports it
// as not run (EXPIRED) instead of dropping it.
func TestDeadAgentsJob(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		due      time.Duration // from publishing
		deadline time.Duration // from publishing
		notRun   string
	}{
		{"still current: run", 0, time.Minute, ""},
		// Redelivered (after AckWait, 2s) later than a quarter of its window: a first delivery
		// would take part in the rotation (and be shed: agent B does not know the check), but a
		// redelivered job is never shed.
		{"late and still current: run", 0, 6 * time.Second, ""},
		{"past its deadline: reported not run", 0, 800 * time.Millisecond, wire.NotRunExpired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			hang := target(t, func(int) string { return "" }) // A's probe never finishes
			okPort := target(t, func(int) string { return "ok" })
			// The deadline falls between A's fetch (at once: A is waiting) and the redelivery.
			cfg := worker.Config{AckWait: 2 * time.Second, ProgressInterval: 300 * time.Millisecond, DrainTimeout: 100 * time.Millisecond}
			runnerA := newTCPRunner(0)
			a := e.startAgent(t, "agent-a", runnerA, cfg)
			job := tcpJob("job-1", usEast, hang, 1)
			job.TimeoutMs = 60_000
			job.ScheduledAtUnixMs = time.Now().Add(tt.due).UnixMilli()
			job.DeadlineUnixMs = time.Now().Add(tt.deadline).UnixMilli()
			agenttest.PublishJob(t, e.js, job)
			select {
			case <-runnerA.started:
			case <-time.After(10 * time.Second):
				t.Fatal("agent A never started the job")
			}
			a.nc.Close() // A is gone as far as JetStream can tell

			runnerB := &redirectRunner{tcpRunner: newTCPRunner(0), port: okPort}
			e.startAgent(t, "agent-b", runnerB, cfg)
			waitStreamMsgs(t, e, 0)
			r := e.cp.Stored(key("job-1", usEast, 1))
			if r == nil || r.GetAgentId() != "agent-b" || r.GetNotRunReason() != tt.notRun {
				t.Fatalf("stored = %v, want agent-b's result with not_run_reason %q", r, tt.notRun)
			}
			_, runs := runnerB.stats()
			if want := map[bool]int{true: 1, false: 0}[tt.notRun == ""]; runs["job-1"] != want {
				t.Errorf("agent B ran the job %d times, want %d", runs["job-1"], want)
			}
		})
	}
}

// TestShutdownOnLastDeliveryReportsNotRun: a stopping agent hands its unfinished jobs back
// for another agent, except a job on its last delivery, which JetStream would drop: that one
// is reported as not run (SHUTDOWN).
func TestShutdownOnLastDeliveryReportsNotRun(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hang := target(t, func(int) string { return "" })
	runner := newTCPRunner(0)
	a := e.startAgent(t, "agent-a", runner, worker.Config{MaxDeliver: 1, DrainTimeout: 100 * time.Millisecond})
	job := tcpJob("job-1", usEast, hang, 1)
	job.TimeoutMs = 60_000
	agenttest.PublishJob(t, e.js, job)
	<-runner.started
	a.stop()
	waitStreamMsgs(t, e, 0)
	r := e.cp.Stored(key("job-1", usEast, 1))
	if r == nil || r.GetNotRunReason() != wire.NotRunShutdown || r.GetPassing() {
		t.Fatalf("stored = %v, want a not-run SHUTDOWN result", r)
	}
	if n := metricValue(t, a.reg, "vantage_agent_jobs_not_run_total", map[string]string{"reason": "SHUTDOWN"}); n != 1 {
		t.Errorf("not_run{SHUTDOWN} = %v, want 1", n)
	}
}
