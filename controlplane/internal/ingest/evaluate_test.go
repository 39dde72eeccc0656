package ingest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
)

// run reports one run of a check from a single-region agent at scheduled time at, with the
// clock set to it, and checks the state that follows.
func (h *harness) run(a *agent, checkID uuid.UUID, at time.Time, passing bool, want string) {
	h.t.Helper()
	h.clock.Set(at)
	a.report(h.result(checkID, uuid.New(), "cloud:us-east-1", passing, at))
	if got := h.state(checkID); got != want {
		h.t.Fatalf("after a %s run at %s: state %s, want %s", map[bool]string{true: "passing", false: "failing"}[passing],
			at.Format(time.TimeOnly), got, want)
	}
}

// TestStatusMachineEndToEnd drives a check through PENDING → UP → VERIFYING → DOWN →
// RECOVERING → UP over the gRPC stream, with 20s confirmation and recovery periods and an
// injected clock.
func TestStatusMachineEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 20, recovery: 20})
	a := h.connect("a1", "cloud:us-east-1")
	t0 := h.clock.Now()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

	h.run(a, checkID, at(0), true, "UP")
	h.run(a, checkID, at(10), false, "VERIFYING")
	h.run(a, checkID, at(20), false, "VERIFYING")
	if ob := h.outbox(checkID); len(ob) != 0 {
		t.Fatalf("outbox before DOWN: %+v", ob)
	}
	h.run(a, checkID, at(30), false, "DOWN")

	inc := h.incidents(checkID)
	if len(inc) != 1 || !inc[0].startedAt.Equal(at(10)) || inc[0].endedAt != nil {
		t.Fatalf("incidents %+v, want one open since the first failure at %s", inc, at(10))
	}
	ob := h.outbox(checkID)
	if len(ob) != 1 || ob[0].event != "uptime.down" || ob[0].incidentID == nil || *ob[0].incidentID != inc[0].id {
		t.Fatalf("outbox %+v, want one uptime.down for the incident", ob)
	}
	check := ob[0].payload["check"].(map[string]any)
	if check["id"] != checkID.String() || check["state"] != "DOWN" || check["name"] != "Homepage" ||
		ob[0].payload["incident"].(map[string]any)["id"] != inc[0].id.String() {
		t.Fatalf("uptime.down payload %v", ob[0].payload)
	}

	h.run(a, checkID, at(40), false, "DOWN") // reminders off: nothing new
	h.run(a, checkID, at(50), true, "RECOVERING")
	h.run(a, checkID, at(60), false, "DOWN") // same incident continues
	h.run(a, checkID, at(70), true, "RECOVERING")
	h.run(a, checkID, at(80), true, "RECOVERING")
	h.run(a, checkID, at(90), true, "UP")

	inc = h.incidents(checkID)
	if len(inc) != 1 || inc[0].endedAt == nil || !inc[0].endedAt.Equal(at(70)) {
		t.Fatalf("incidents %+v, want one, ended at the first passing run %s", inc, at(70))
	}
	ob = h.outbox(checkID)
	if len(ob) != 2 || ob[1].event != "uptime.up" || *ob[1].incidentID != inc[0].id {
		t.Fatalf("outbox %+v, want uptime.down then uptime.up", ob)
	}
	if ob[1].payload["incident"].(map[string]any)["ended_at"] == nil {
		t.Fatalf("uptime.up payload without ended_at: %v", ob[1].payload)
	}
	var changedAt time.Time
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT state_changed_at FROM checks WHERE id = $1`, checkID).Scan(&changedAt); err != nil {
		t.Fatal(err)
	}
	if !changedAt.Equal(at(90)) {
		t.Fatalf("state_changed_at %s, want %s", changedAt, at(90))
	}
	id := checkID.String()
	want := []string{id + " UP", id + " VERIFYING", id + " DOWN", id + " RECOVERING", id + " DOWN", id + " RECOVERING", id + " UP"}
	if got := h.stateChanges(); !slices.Equal(got, want) {
		t.Fatalf("OnStateChange calls %v, want %v", got, want)
	}
}

func TestReminders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0, reminder: 1})
	a := h.connect("a1", "cloud:us-east-1")
	t0 := h.clock.Now()
	h.run(a, checkID, t0, false, "DOWN")
	h.run(a, checkID, t0.Add(30*time.Second), false, "DOWN")
	h.run(a, checkID, t0.Add(60*time.Second), false, "DOWN")
	ob := h.outbox(checkID)
	if len(ob) != 2 || ob[0].payload["reminder"] != false || ob[1].event != "uptime.down" || ob[1].payload["reminder"] != true {
		t.Fatalf("outbox %+v, want uptime.down then one reminder", ob)
	}
}

func TestMutedCheckWritesNoOutbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0, recovery: 0, muted: true})
	a := h.connect("a1", "cloud:us-east-1")
	t0 := h.clock.Now()
	h.run(a, checkID, t0, true, "UP")
	h.run(a, checkID, t0.Add(10*time.Second), false, "DOWN")
	h.run(a, checkID, t0.Add(20*time.Second), true, "UP")
	if ob := h.outbox(checkID); len(ob) != 0 {
		t.Fatalf("muted check wrote outbox rows: %+v", ob)
	}
	if inc := h.incidents(checkID); len(inc) != 1 || inc[0].endedAt == nil {
		t.Fatalf("incidents %+v, want one closed incident (muted checks still record them)", inc)
	}
}

func TestPausedCheckIgnoresResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0, paused: true})
	a := h.connect("a1", "cloud:us-east-1")
	h.run(a, checkID, h.clock.Now(), false, "PENDING")
	if n := h.count(`SELECT count(*) FROM check_runs`); n != 0 {
		t.Fatalf("%d pending runs kept for a paused check", n)
	}
	if ob := h.outbox(checkID); len(ob) != 0 {
		t.Fatalf("paused check wrote outbox rows: %+v", ob)
	}
}

// TestMajorityVerdict: three regions, three agents; a run fails only when most regions fail.
func TestMajorityVerdict(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"}
	checkID := h.createCheck(checkSpec{regions: regions, confirmation: 0})
	agents := make([]*agent, len(regions))
	for i, r := range regions {
		agents[i] = h.connect("agent-"+r, r)
	}
	t0 := h.clock.Now()
	runs := []struct {
		failing []bool // per region
		want    string
	}{
		{[]bool{false, false, false}, "UP"},
		{[]bool{true, false, false}, "UP"},  // 1 of 3 failing
		{[]bool{false, true, false}, "UP"},  // another region, still 1 of 3
		{[]bool{true, true, false}, "DOWN"}, // 2 of 3
		{[]bool{false, false, true}, "UP"},  // 1 of 3 failing passes: recovery period 0 → UP at once
	}
	for i, run := range runs {
		at := t0.Add(time.Duration(i) * time.Minute)
		h.clock.Set(at)
		job := uuid.New()
		for j, a := range agents {
			a.report(h.result(checkID, job, regions[j], !run.failing[j], at))
		}
		if got := h.state(checkID); got != run.want {
			t.Fatalf("run %d (failing %v): state %s, want %s", i, run.failing, got, run.want)
		}
	}
}

// TestMissingRegionDecidedByDeadline: one of three regions has no agent. Its runs are judged
// at their deadline on what the other regions reported, and the silent region counts for
// nothing: it never flips the check DOWN by itself.
func TestMissingRegionDecidedByDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{evaluator: evaluator.Config{RunAttempts: 1, RunGrace: 10 * time.Second}})
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"}
	checkID := h.createCheck(checkSpec{regions: regions, confirmation: 0})
	lonely := h.createCheck(checkSpec{regions: []string{"cloud:ap-southeast-2"}, confirmation: 0})
	us, eu := h.connect("a-us", regions[0]), h.connect("a-eu", regions[1])
	ctx := context.Background()

	t0 := h.clock.Now()
	job := uuid.New()
	us.report(h.result(checkID, job, regions[0], true, t0))
	eu.report(h.result(checkID, job, regions[1], true, t0))
	if got := h.state(checkID); got != "PENDING" {
		t.Fatalf("state %s before the deadline, want PENDING (waiting for ap-southeast-1)", got)
	}
	// Deadline: scheduled + 5s timeout × 1 attempt + 10s grace.
	h.clock.Set(t0.Add(14 * time.Second))
	if _, err := h.ev.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.state(checkID); got != "PENDING" {
		t.Fatalf("state %s 1s before the deadline, want PENDING", got)
	}
	h.clock.Set(t0.Add(15 * time.Second))
	if n, err := h.ev.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 check judged", n, err)
	}
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("state %s after the deadline, want UP", got)
	}

	// A late result of the judged run is stored but not judged.
	ap := h.connect("a-ap", regions[2])
	ap.report(h.result(checkID, job, regions[2], false, t0))
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("state %s after a late failing result, want UP", got)
	}
	ap.cancel()

	// The next run: one region fails, one passes, the third is silent: 1 of 2 → still passing.
	t1 := t0.Add(time.Minute)
	h.clock.Set(t1)
	job = uuid.New()
	us.report(h.result(checkID, job, regions[0], false, t1))
	eu.report(h.result(checkID, job, regions[1], true, t1))
	h.clock.Set(t1.Add(15 * time.Second))
	if _, err := h.ev.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("state %s, want UP (1 failing of 2 reporting regions)", got)
	}
	// A check whose only region has no agent gets no verdict at all.
	h.clock.Set(t1.Add(time.Hour))
	if _, err := h.ev.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.state(lonely); got != "PENDING" {
		t.Fatalf("check without agents: state %s, want PENDING", got)
	}
	if n := h.count(`SELECT count(*) FROM check_runs`); n != 0 {
		t.Fatalf("%d runs still pending", n)
	}
}

// TestLaterRunJudgesEarlierPendingRun: a run that completes judges the earlier run still
// waiting for a region first, so verdicts stay in scheduled order.
func TestLaterRunJudgesEarlierPendingRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	checkID := h.createCheck(checkSpec{regions: regions, confirmation: 0, recovery: 0})
	us, eu := h.connect("a-us", regions[0]), h.connect("a-eu", regions[1])
	t0 := h.clock.Now()
	first, second := uuid.New(), uuid.New()
	us.report(h.result(checkID, first, regions[0], false, t0)) // eu never reports this run
	if got := h.state(checkID); got != "PENDING" {
		t.Fatalf("state %s, want PENDING", got)
	}
	t1 := t0.Add(time.Minute)
	h.clock.Set(t1)
	us.report(h.result(checkID, second, regions[0], true, t1))
	eu.report(h.result(checkID, second, regions[1], true, t1))
	// First run (1 of 1 failing) → DOWN, then the second (passing) → UP at once.
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("state %s, want UP", got)
	}
	if inc := h.incidents(checkID); len(inc) != 1 || !inc[0].startedAt.Equal(t0) || inc[0].endedAt == nil || !inc[0].endedAt.Equal(t1) {
		t.Fatalf("incidents %+v, want one from %s to %s", inc, t0, t1)
	}
}
