package browser

import (
	"context"
	"strings"
	"testing"
	"time"
)

const head = "import { test, expect } from '@playwright/test';\n"

func runScript(t *testing.T, b *Browser, script string, timeout time.Duration) *ScriptRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	run, err := b.RunScript(ctx, ScriptRequest{Source: script})
	if err != nil {
		t.Fatalf("RunScript: %v", err)
	}
	return run
}

// One allocation far past the worker's memory cap kills the worker at once (before the
// script's heap limit can notice): the run ends with the cap in its message, and the browser
// serves the next run.
func TestScriptWorkerMemoryCap(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{WorkerMemory: 128 << 20})
	start := time.Now()
	run := runScript(t, b, head+"test('hog', async () => { const a = new Array(5e7).fill(0); expect(a.length).toBe(1); });\n", 20*time.Second)
	if run.Report != nil || run.Problem != ProblemMemory || !strings.Contains(run.Message, "more than the 128 MiB of memory") {
		t.Fatalf("run: problem %q, message %q, report %+v", run.Problem, run.Message, run.Report)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %s to hit the cap", took)
	}
	run = runScript(t, b, head+"test('fine', async () => { expect(1 + 1).toBe(2); });\n", 20*time.Second)
	if run.Report == nil || !run.Report.Passed {
		t.Fatalf("the next run: %+v", run)
	}
}

// A script stuck in its file's top level, before any test runs, still ends within the check's
// timeout.
func TestScriptTopLevelLoopEndsInTime(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{})
	start := time.Now()
	run := runScript(t, b, head+"for (;;) {}\ntest('never declared', async () => {});\n", 2*time.Second)
	took := time.Since(start)
	if run.Report == nil && run.Problem != ProblemTimeout {
		t.Fatalf("run: problem %q, message %q", run.Problem, run.Message)
	}
	// The run is stopped by its deadline, not left to loop: it ends within a few timeouts even
	// on a loaded machine (a run left to loop never ends). How promptly it ends is not timed
	// here: a bound near 2 s measures the machine.
	if took > 10*time.Second {
		t.Errorf("the run took %s: its 2s timeout did not stop it", took)
	}
	t.Logf("ended after %s: %s%s", took.Round(time.Millisecond), run.Message, summaryOf(run))
}

// A worker that ignores its deadline (here a stand-in that only sleeps) is killed when the
// deadline passes, and the run says so.
func TestScriptWorkerThatHangsIsKilled(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{WorkerCommand: []string{"/bin/sh", "-c", "cat >/dev/null; exec sleep 60"}})
	start := time.Now()
	run := runScript(t, b, head+"test('x', async () => {});\n", 1500*time.Millisecond)
	took := time.Since(start)
	if run.Problem != ProblemTimeout || !strings.Contains(run.Message, "did not finish within the check's timeout") {
		t.Fatalf("run: problem %q, message %q", run.Problem, run.Message)
	}
	// Killed at its 1.5 s deadline, not left to its 60 s sleep; the bound is far from both, so
	// a loaded machine does not cross it.
	if took > 20*time.Second {
		t.Errorf("the run took %s: the worker was not killed at its 1.5s timeout", took)
	}
}
