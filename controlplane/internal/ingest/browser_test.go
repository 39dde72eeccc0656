package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// A result the agent failed (failure_source AGENT: its browser crashed) is stored, but it is
// no verdict on the target: an UP check stays UP however many of them arrive, while a real
// failure still moves it.
func TestAgentFailuresDoNotJudgeTheTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.register("a1", []string{wire.CapabilityBrowser}, "cloud:us-east-1")
	t0 := h.clock.Now()
	h.run(a, checkID, t0, true, "UP")

	for i := 1; i <= 3; i++ {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		h.clock.Set(at)
		r := h.result(checkID, uuid.New(), "cloud:us-east-1", false, at)
		src, typ, summary := wire.FailureSourceAgent, "BROWSER_CRASHED", "the agent's browser crashed during the run"
		r.FailureSource, r.FailureType, r.ResultSummary = &src, &typ, &summary
		a.report(r)
		if got := h.state(checkID); got != "UP" {
			t.Fatalf("after %d agent failures: state %s, want UP", i, got)
		}
	}
	// They are due by now (deadline passed), and still judge nothing.
	h.clock.Set(t0.Add(10 * time.Minute))
	if _, err := h.ev.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("after the runs' deadlines: state %s, want UP", got)
	}
	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1 AND failure_source = 'AGENT'`, checkID); n != 3 {
		t.Fatalf("%d agent failures stored, want 3", n)
	}
	h.run(a, checkID, t0.Add(11*time.Minute), false, "DOWN") // no confirmation period: a real failure counts at once
}

// A browser result's screenshot goes to check_results.screenshot, its steps and page timings
// to details; a screenshot that is too large or not an image is dropped, and details say why.
func TestBrowserResultStored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.register("a1", []string{wire.CapabilityBrowser}, "cloud:us-east-1")
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{1}, 1000)...)
	now := h.clock.Now()

	good := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now)
	good.Kind = vantagev1.CheckKind_CHECK_KIND_BROWSER
	good.Screenshot = jpeg
	dcl, load := 120.5, 180.25
	good.Timings = &vantagev1.Timings{TotalMs: 900, DomContentLoadedMs: &dcl, LoadMs: &load}
	good.Steps = []*vantagev1.Step{
		{Title: "checkout", Location: "check.spec.ts:3:1", StartMs: 1, DurationMs: 800},
		{Title: "checkout > pay", Location: "check.spec.ts:7:3", Depth: 1, StartMs: 400, DurationMs: 390, Error: "expect(locator).toBeVisible() failed"},
	}
	big := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now.Add(time.Second))
	big.Screenshot = append([]byte{0xff, 0xd8, 0xff}, make([]byte, wire.MaxScreenshotBytes)...)
	notImage := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now.Add(2*time.Second))
	notImage.Screenshot = []byte("<html>")
	a.report(good, big, notImage)

	type row struct {
		shot    []byte
		details map[string]any
	}
	read := func(job string) row {
		var r row
		var raw []byte
		if err := h.st.Pool().QueryRow(context.Background(), `SELECT screenshot, details FROM check_results WHERE job_id = $1`, job).
			Scan(&r.shot, &raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &r.details); err != nil {
			t.Fatal(err)
		}
		return r
	}
	g := read(good.JobId)
	if !bytes.Equal(g.shot, jpeg) {
		t.Errorf("screenshot stored as %d bytes, want the %d sent", len(g.shot), len(jpeg))
	}
	tm := g.details["timings"].(map[string]any)
	if tm["dom_content_loaded_ms"] != 120.5 || tm["load_ms"] != 180.25 {
		t.Errorf("timings %v", tm)
	}
	steps, _ := g.details["steps"].([]any)
	if len(steps) != 2 {
		t.Fatalf("steps %v", g.details["steps"])
	}
	if s := steps[1].(map[string]any); s["title"] != "checkout > pay" || s["location"] != "check.spec.ts:7:3" || s["depth"] != 1.0 ||
		s["passed"] != false || s["error"] != "expect(locator).toBeVisible() failed" || s["duration_ms"] != 390.0 {
		t.Errorf("step %v", s)
	}
	for _, job := range []string{big.JobId, notImage.JobId} {
		r := read(job)
		if r.shot != nil || r.details["screenshot_dropped"] == nil {
			t.Errorf("job %s: screenshot of %d bytes kept, dropped because %v", job, len(r.shot), r.details["screenshot_dropped"])
		}
	}
}
