package pwscript

import (
	"fmt"
	"strings"
	"time"

	"github.com/vantagehq/vantage/pkg/redact"
)

// Report is the outcome of one run.
type Report struct {
	// Passed is true when every test that ran passed (or failed as test.fail expected) and at
	// least one test ran or was skipped on purpose.
	Passed bool
	// Tests lists the tests in declaration order, with their steps.
	Tests []TestReport
	// Failure is the first failure of the run, nil when it passed.
	Failure *Failure
	// Screenshot is a JPEG of the page when the first failure happened (at most
	// Options.ScreenshotMaxBytes); nil when the run passed or no page could be captured.
	Screenshot []byte
	// Summary is one line for the check's result_summary.
	Summary string
	// Artifacts are the files the run kept (screenshots taken with a path, testInfo.attach()),
	// within Options.ArtifactMaxBytes and ArtifactMaxCount; text ones have secrets redacted.
	Artifacts []Artifact `json:",omitempty"`
	// ArtifactsDropped says, a line each, which artifacts the caps dropped.
	ArtifactsDropped []string `json:",omitempty"`
	// Console holds the script's console output (capped), secrets redacted.
	Console []string
	// Duration is the time the whole run took.
	Duration time.Duration
}

// TestReport is one test's outcome.
type TestReport struct {
	// Title is the test's title path: describe titles and the test title joined by " › ".
	Title    string
	Status   Status
	Duration time.Duration
	// Steps are the hooks, test.step blocks and API calls of the test, nested as they ran.
	Steps []StepReport
	// Error is the failure message of a failed test.
	Error string
	// Annotations are what the test pushed to testInfo.annotations.
	Annotations []Annotation `json:",omitempty"`
}

// Status is a test's outcome, with Playwright's names.
type Status string

// The statuses of a test.
const (
	StatusPassed   Status = "passed"
	StatusFailed   Status = "failed"
	StatusTimedOut Status = "timedOut"
	StatusSkipped  Status = "skipped"
)

// StepReport is one step of a test: a hook, a test.step block, or an API call such as
// `locator.click(getByRole('button'))` or `expect(locator).toHaveText`.
type StepReport struct {
	Title    string
	Category string // "hook", "test.step", "pw:api" or "expect"
	Duration time.Duration
	// Location is where the step is in the user's script ("login.spec.ts:12:5").
	Location string
	// Error is the step's failure message, "" when it passed.
	Error string
	Steps []StepReport
}

// Failure describes why a run failed.
type Failure struct {
	// Message is Playwright-style: what failed, expected and received values, the strict-mode
	// matches, what a timeout was waiting for.
	Message string
	// Location is where in the user's script the failure happened ("login.spec.ts:12:5"),
	// "" when unknown.
	Location string
	// Step is the title path of the failing test and step ("checkout › pay › locator.click(…)").
	Step string
	// Cause classifies the failure, for the result's failure source.
	Cause Cause

	stepPath []string // the steps below the test, while the failure is being recorded
}

// Cause says whose fault a failure is.
type Cause string

// The causes of a failure.
const (
	// CauseAssertion: an expect() failed — the target does not behave as the script expects.
	CauseAssertion Cause = "assertion"
	// CauseTimeout: an action, navigation, assertion or the whole test ran out of time.
	CauseTimeout Cause = "timeout"
	// CauseNavigation: a navigation failed (DNS, connection refused, TLS…).
	CauseNavigation Cause = "navigation"
	// CauseScript: the script is at fault — a syntax error, an exception it threw, an
	// unsupported API or module, a bad argument.
	CauseScript Cause = "script"
	// CauseBrowser: the browser failed (the tab crashed or the connection to it was lost);
	// the agent's fault, not the target's.
	CauseBrowser Cause = "browser"
)

// stepRec is a step while the test runs.
type stepRec struct {
	title, category, where string
	start                  time.Time
	end                    time.Time
	err                    string
	parent                 *stepRec
	children               []*stepRec
}

func (s *stepRec) report(now time.Time) StepReport {
	end := s.end
	if end.IsZero() {
		end = now
	}
	out := StepReport{Title: s.title, Category: s.category, Duration: end.Sub(s.start), Location: s.where, Error: s.err}
	for _, c := range s.children {
		out.Steps = append(out.Steps, c.report(now))
	}
	return out
}

// path is the step's title path below the test.
func (s *stepRec) path() []string {
	if s == nil || s.category == "" {
		return nil
	}
	return append(s.parent.path(), s.title)
}

// summarize writes the one-line summary of a report.
func summarize(rep *Report) string {
	counts := map[Status]int{}
	for _, t := range rep.Tests {
		counts[t.Status]++
	}
	if rep.Failure == nil {
		parts := []string{plural(counts[StatusPassed], "test") + " passed"}
		if n := counts[StatusSkipped]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d skipped", n))
		}
		return strings.Join(parts, ", ") + fmt.Sprintf(" in %s", rep.Duration.Round(time.Millisecond))
	}
	f := rep.Failure
	var b strings.Builder
	if f.Step != "" {
		b.WriteString(f.Step)
		b.WriteString(": ")
	}
	b.WriteString(oneLine(f.Message))
	if f.Location != "" {
		fmt.Fprintf(&b, " (at %s)", f.Location)
	}
	return truncate(b.String(), maxSummary)
}

// maxSummary caps the summary line.
const maxSummary = 1000

// oneLine folds a multi-line message: blank lines go, the call log is left out, the rest is
// joined with " — " ("expect(locator).toHaveText(expected) failed — Locator: … — Expected: …").
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "Call log:" {
			break
		}
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " — ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// redactor returns a function replacing every secret, in every encoding a report can hold
// it in (pkg/redact).
func redactor(secrets []string) func(string) string { return redact.New(secrets).String }

// redactReport applies redact to every text of the report (a last pass: messages are
// redacted when made, but a step title or console line built elsewhere must not leak either).
func redactReport(rep *Report, redact func(string) string) {
	rep.Summary = redact(rep.Summary)
	for i := range rep.Console {
		rep.Console[i] = redact(rep.Console[i])
	}
	if f := rep.Failure; f != nil {
		f.Message, f.Step = redact(f.Message), redact(f.Step)
	}
	var steps func([]StepReport)
	steps = func(ss []StepReport) {
		for i := range ss {
			ss[i].Title, ss[i].Error = redact(ss[i].Title), redact(ss[i].Error)
			steps(ss[i].Steps)
		}
	}
	for i := range rep.Tests {
		t := &rep.Tests[i]
		t.Title, t.Error = redact(t.Title), redact(t.Error)
		steps(t.Steps)
		for j := range t.Annotations {
			t.Annotations[j].Type, t.Annotations[j].Description = redact(t.Annotations[j].Type), redact(t.Annotations[j].Description)
		}
	}
	redactArtifacts(rep, redact)
}
