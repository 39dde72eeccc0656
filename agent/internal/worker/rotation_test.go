package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// TestOverloadShedsInRotation: eight checks every 2s, each on its own phase, on an agent with
// one slot and a target that takes 500ms — twice the agent's capacity. The late jobs are shed
// in rotation: after the backlog builds up, no check misses two runs in a row, every check
// runs about every other time, and the agent keeps running at its capacity.
func TestOverloadShedsInRotation(t *testing.T) {
	t.Parallel()
	const (
		checks   = 8
		interval = 2 * time.Second
		probe    = 500 * time.Millisecond // interval/probe * 1 slot = half the demand
		rounds   = 8
		warmup   = 2 // rounds while the backlog builds up, not judged
	)
	e := setup(t)
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(probe)
	a := e.startAgent(t, "agent-small", runner, worker.Config{Concurrency: 1})

	start := time.Now().Truncate(time.Second).Add(time.Second)
	jobID := func(c, r int) string { return fmt.Sprintf("c%d-r%d", c, r) }
	for r := range rounds {
		for c := range checks {
			due := start.Add(time.Duration(r)*interval + time.Duration(c)*interval/checks)
			time.Sleep(time.Until(due))
			job := tcpJob(jobID(c, r), usEast, port, 1)
			job.CheckId = fmt.Sprintf("check-%d", c)
			job.ScheduledAtUnixMs, job.DeadlineUnixMs = due.UnixMilli(), due.Add(interval).UnixMilli()
			agenttest.PublishJob(t, e.js, job)
		}
	}
	testwait.Eventually(t, 3*interval, func() error {
		if n := e.streamMsgs(t); n != 0 {
			return fmt.Errorf("%d jobs still queued", n)
		}
		return nil
	})

	reasons := map[string]int{}
	ran := make([][]bool, checks)
	worstGap, runs := 0, 0
	for c := range checks {
		ran[c] = make([]bool, rounds)
		missed := 0
		for r := range rounds {
			res := e.cp.Stored(key(jobID(c, r), usEast, 1))
			if res == nil {
				t.Errorf("job %s: no result, want a run or a not-run result", jobID(c, r))
				continue
			}
			if reason := res.GetNotRunReason(); reason != "" {
				reasons[reason]++
				if r >= warmup {
					missed++
					worstGap = max(worstGap, missed)
				}
				continue
			}
			ran[c][r] = true
			if r >= warmup {
				runs++
				missed = 0
			}
		}
	}
	t.Logf("not run by reason: %v; runs after the warm-up: %d of %d; most runs in a row a check missed: %d",
		reasons, runs, checks*(rounds-warmup), worstGap)
	for c := range checks {
		t.Logf("check-%d ran: %v", c, ran[c])
	}
	if reasons[wire.NotRunShed] == 0 {
		t.Fatal("no job shed at twice the capacity")
	}
	if worstGap > 1 {
		t.Errorf("a check missed %d runs in a row, want at most 1 (no check more than two intervals without a run)", worstGap)
	}
	// Capacity over the judged rounds is (rounds-warmup)*interval/probe; shedding is cheap, so
	// the agent runs close to it.
	if capacity := int((rounds - warmup) * interval / probe); runs < capacity*3/4 {
		t.Errorf("%d runs after the warm-up, want at least 3/4 of the capacity %d", runs, capacity)
	}
	if n := metricValue(t, a.reg, "vantage_agent_jobs_not_run_total", map[string]string{"region": usEast, "reason": wire.NotRunShed}); int(n) != reasons[wire.NotRunShed] {
		t.Errorf("not_run{SHED} = %v, want %d", n, reasons[wire.NotRunShed])
	}
}
