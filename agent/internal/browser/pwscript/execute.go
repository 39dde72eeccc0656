package pwscript

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// testRun is the state of the test (with its hooks) in progress.
type testRun struct {
	test       *testCase
	ctx        context.Context // the browser operations' context, ending at the test's deadline
	cancels    []context.CancelFunc
	start      time.Time
	deadline   time.Time
	timeout    time.Duration // the test's time as messages name it: test.setTimeout's, or runTime
	runTime    time.Duration // the run's configured timeout (Options.TestTimeout), which messages name
	limit      time.Time     // the run's deadline for tests
	parent     context.Context
	root       *stepRec
	step       *stepRec // where new steps go: the innermost test.step running, or root
	expectFail bool
	failure    *Failure
	soft       []*Failure // failures of expect.soft, in order (expectapi.go)
	finished   bool
}

func (t *testRun) setTimeout(d time.Duration) {
	t.timeout = d
	if d <= 0 {
		d = t.limit.Sub(t.start) // 0 means no timeout of the test's own
		t.timeout = t.runTime
	}
	t.deadline = t.start.Add(d)
	if t.deadline.After(t.limit) {
		t.deadline = t.limit
	}
	ctx, cancel := context.WithDeadline(t.parent, t.deadline)
	t.ctx = ctx
	t.cancels = append(t.cancels, cancel)
}

func (t *testRun) end() {
	t.finished = true
	for _, c := range t.cancels {
		c()
	}
}

// runTests runs the selected tests in order and fills rep.
func (r *run) runTests(rep *Report) {
	refused := ""
	defer func() {
		r.discardPreparedContext()
		if u := r.closeTestPage(); refused == "" {
			refused = u
		}
		// Whatever the tests made of it, a page reaching for the agent's files (or another
		// non-web URL) fails the run (the agent's browser refused the load).
		if refused != "" {
			rep.Refuse(NotAllowed(refused))
		}
	}()

	focus := r.root.hasOnly()
	tests := r.root.allTests()
	lastRunnable := map[*suite]*testCase{}
	var runnable []*testCase
	for _, t := range tests {
		if focus && !t.focused() {
			continue
		}
		runnable = append(runnable, t)
		if t.skipReason() == nil {
			for s := t.parent; s != nil; s = s.parent {
				lastRunnable[s] = t
			}
		}
	}
	beforeAllRan := map[*suite]bool{}
	broken := map[*suite]*Failure{} // a beforeAll failed, or a serial suite's test did
	for i, t := range runnable {
		if reason := t.skipReason(); reason != nil {
			rep.Tests = append(rep.Tests, TestReport{Title: t.fullTitle(), Status: StatusSkipped})
			continue
		}
		if b := t.brokenBy(broken); b != nil {
			rep.Tests = append(rep.Tests, TestReport{Title: t.fullTitle(), Status: StatusSkipped, Error: "not run: " + oneLine(b.Message)})
			continue
		}
		// A fresh browser context and page for each test (context.go).
		if u := r.closeTestPage(); refused == "" {
			refused = u
		}
		co, err := r.contextOptions(t.parent.useChain())
		switch {
		case err != nil:
		case r.base.RequestOnly:
			// No browser (a multistep check): test.use still sets baseURL, timeouts, headers.
			r.opts, r.useOpts = r.testOptions(co), co
		default:
			err = r.openTestPage(r.pageTab == nil, i < len(runnable)-1, co)
		}
		if err != nil {
			rep.Failure = &Failure{Message: "the browser page could not be prepared: " + err.Error(), Cause: CauseBrowser}
			return
		}
		tr := r.newTestRun(t)
		r.cur = tr
		r.unhandled = nil
		fixtures, teardown, ff := r.setupFixtures(tr, r.fixtures())
		if ff != nil {
			r.fail(tr, ff)
		}

		ancestors := t.ancestors() // outermost first
		for _, s := range ancestors {
			if beforeAllRan[s] || tr.failure != nil {
				continue
			}
			beforeAllRan[s] = true
			for _, h := range s.hooks["beforeAll"] {
				if r.runHook(tr, h, fixtures) {
					broken[s] = tr.failure
					break
				}
			}
		}
		for _, s := range ancestors {
			for _, h := range s.hooks["beforeEach"] {
				if tr.failure == nil {
					r.runHook(tr, h, fixtures)
				}
			}
		}
		skipped := false
		if tr.failure == nil {
			skipped = r.runBody(tr, fixtures)
		}
		if tr.failure != nil && tr.failure.Cause != causeSkip && !tr.expectFail && rep.Failure == nil && rep.Screenshot == nil {
			rep.Screenshot = r.screenshot()
		}
		for i := len(ancestors) - 1; i >= 0; i-- {
			for _, h := range ancestors[i].hooks["afterEach"] {
				r.runHook(tr, h, fixtures)
			}
		}
		if teardown != nil {
			// Test-scoped fixtures end after the afterEach hooks, as in Playwright.
			if f, _ := r.invoke(tr, teardown); f != nil {
				r.fail(tr, f)
			}
		}
		for i := len(ancestors) - 1; i >= 0; i-- {
			s := ancestors[i]
			if lastRunnable[s] == t && beforeAllRan[s] {
				for _, h := range s.hooks["afterAll"] {
					r.runHook(tr, h, fixtures)
				}
			}
		}
		if t == runnable[len(runnable)-1] {
			if f := r.finishWorkerFixtures(tr); f != nil {
				r.fail(tr, f)
			}
		}
		tr.end()
		r.cur = nil
		tres := r.testReport(tr, skipped)
		tres.Annotations = r.annotationsOf(tr)
		rep.Tests = append(rep.Tests, tres)
		if tres.Status == StatusFailed || tres.Status == StatusTimedOut {
			if rep.Failure == nil {
				rep.Failure = tr.failure
			}
			for s := t.parent; s != nil; s = s.parent {
				if s.serial && broken[s] == nil {
					broken[s] = tr.failure
				}
			}
		}
	}
	rep.Passed = rep.Failure == nil && len(rep.Tests) > 0
	if rep.Failure == nil && len(rep.Tests) == 0 {
		rep.Failure = &Failure{Message: "No tests found: every test is filtered out", Cause: CauseScript}
	}
}

// testParent is the context a test's operations run under: its page's tab, or the run's
// context when there is no browser (a multistep check).
func (r *run) testParent() context.Context {
	if r.pageTab != nil {
		return r.pageTab
	}
	return r.tab
}

func (r *run) newTestRun(t *testCase) *testRun {
	tr := &testRun{test: t, start: time.Now(), limit: r.testDeadline, runTime: r.budget(), parent: r.testParent(), root: &stepRec{}}
	tr.step = tr.root
	timeout := t.timeout
	for s := t.parent; s != nil && timeout == 0; s = s.parent {
		timeout = s.timeout
	}
	tr.setTimeout(timeout)
	for s := t.parent; s != nil; s = s.parent {
		tr.expectFail = tr.expectFail || s.fail
	}
	tr.expectFail = tr.expectFail || t.fail
	return tr
}

func (t *testCase) ancestors() []*suite {
	var out []*suite
	for s := t.parent; s != nil; s = s.parent {
		out = append(out, s)
	}
	slices.Reverse(out)
	return out
}

func (t *testCase) focused() bool {
	if t.only {
		return true
	}
	for s := t.parent; s != nil; s = s.parent {
		if s.only {
			return true
		}
	}
	return false
}

func (t *testCase) skipReason() *string {
	if t.skip != nil {
		return t.skip
	}
	for s := t.parent; s != nil; s = s.parent {
		if s.skip != nil {
			return s.skip
		}
	}
	return nil
}

func (t *testCase) brokenBy(broken map[*suite]*Failure) *Failure {
	for s := t.parent; s != nil; s = s.parent {
		if f := broken[s]; f != nil {
			return f
		}
	}
	return nil
}

// fixtures is the first argument of a test body and hook: { page, request } and the worker
// fixtures; the other Playwright fixtures fail with a message naming them. request is the
// test's own APIRequestContext (cookies of its own), as in Playwright.
func (r *run) fixtures() goja.Value {
	target := r.vm.NewObject()
	for k, v := range map[string]any{
		"page": r.pageObj, "context": r.contextObj, "browserName": "chromium", "headless": true, "isMobile": false,
		"baseURL": r.baseURLValue(), "channel": goja.Undefined(), "request": r.apiRequestContext(nil),
	} {
		if k == "page" && r.opts.RequestOnly {
			continue
		}
		must(target.Set(k, v))
	}
	return r.strictWith(target, r.fixtureError)
}

// runHook runs a hook as a step of tr; it reports whether it failed.
func (r *run) runHook(tr *testRun, h *hook, fixtures goja.Value) bool {
	if time.Now().After(tr.deadline) {
		return false
	}
	step := r.beginStep(tr, h.title, "hook", h.where)
	prev := tr.step
	tr.step = step
	f, skip := r.invoke(tr, h.fn, fixtures, r.testInfo())
	tr.step = prev
	switch {
	case skip != nil:
		r.endStep(step, "")
		if tr.failure == nil {
			tr.failure = &Failure{Message: "skipped: " + *skip, Cause: causeSkip}
		}
		return false
	case f != nil:
		r.endStep(step, f.Message)
		r.fail(tr, f)
		return true
	}
	r.endStep(step, "")
	return false
}

// causeSkip marks a test skipped from inside (test.skip() in a hook or body); never reported.
const causeSkip Cause = "skip"

// runBody runs the test's body; it reports whether the test skipped itself.
func (r *run) runBody(tr *testRun, fixtures goja.Value) bool {
	f, skip := r.invoke(tr, tr.test.fn, fixtures, r.testInfo())
	if skip != nil {
		return true
	}
	if f == nil && len(r.unhandled) > 0 {
		f = r.failureOfValue(r.unhandled[0].Result())
		f.Message = "Unhandled promise rejection: " + f.Message
	}
	if f != nil {
		r.fail(tr, f)
	}
	if f := softFailure(tr.soft); f != nil {
		// The test went on past its soft failures; it fails with them at its end.
		r.fail(tr, f)
	}
	return false
}

// fail records the first failure of tr, with the title path of the test and step.
func (r *run) fail(tr *testRun, f *Failure) {
	if tr.failure != nil && tr.failure.Cause != causeSkip {
		return
	}
	if f.Step == "" {
		f.Step = strings.Join(append(tr.test.titlePath(), f.stepPath...), " › ")
	}
	asTestTimeout(tr, f)
	tr.failure = f
}

// invoke calls fn and, when it returns a promise, runs the loop until the promise settles or
// the test's time is up. It returns the failure, or the reason when the test skipped itself.
func (r *run) invoke(tr *testRun, fn goja.Callable, args ...goja.Value) (*Failure, *string) {
	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			if reason, ok := r.skipSignal(ex.Value()); ok {
				return nil, &reason
			}
		}
		return r.failureOf(err, tr), nil
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithDeadline(r.tab, tr.deadline.Add(graceAfterDeadline))
	defer cancel()
	err = r.loop.wait(ctx, p)
	r.forget(p)
	switch {
	case err == nil && p.State() == goja.PromiseStateRejected:
		if reason, ok := r.skipSignal(p.Result()); ok {
			return nil, &reason
		}
		return r.failureOfValue(p.Result()), nil
	case err == nil:
		return nil, nil
	case errors.Is(err, errStalled):
		return &Failure{
			Message: fmt.Sprintf("Test timeout: the test awaits a promise that can never settle — no browser operation and no timer is pending%s", r.lastCall(tr)),
			Cause:   CauseScript,
		}, nil
	case errors.Is(err, context.DeadlineExceeded):
		return r.timeoutFailure(tr), nil
	case errors.Is(err, context.Canceled):
		return &Failure{Message: "the run was canceled: the browser tab was closed or the agent is stopping", Cause: CauseBrowser}, nil
	default:
		return r.failureOf(err, tr), nil
	}
}

// timeoutFailure describes a test whose time ran out with operations still pending.
func (r *run) timeoutFailure(tr *testRun) *Failure {
	f := &Failure{Cause: CauseTimeout}
	var b strings.Builder
	fmt.Fprintf(&b, "Test timeout of %dms exceeded.", tr.timeout.Milliseconds())
	var ops []*pendingOp
	for _, op := range r.loop.ops {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b *pendingOp) int { return strings.Compare(a.where, b.where) })
	if len(ops) > 0 {
		b.WriteString("\nWaiting for:")
		for _, op := range ops {
			fmt.Fprintf(&b, "\n  - %s at %s", op.what, op.where)
			if f.Location == "" {
				f.Location = op.where
			}
		}
	}
	if timers := r.loop.timerDescriptions(); len(timers) > 0 {
		b.WriteString("\nPending timers:")
		for _, t := range timers {
			fmt.Fprintf(&b, "\n  - %s", t)
			if f.Location == "" {
				if i := strings.LastIndex(t, " at "); i >= 0 {
					f.Location = t[i+4:]
				}
			}
		}
	}
	if len(ops) == 0 && len(r.loop.timerDescriptions()) == 0 {
		b.WriteString(r.lastCall(tr))
	}
	f.Message = b.String()
	return f
}

// lastCall names the last step the test began, for a test stuck without operations.
func (r *run) lastCall(tr *testRun) string {
	var last *stepRec
	var walk func(s *stepRec)
	walk = func(s *stepRec) {
		for _, c := range s.children {
			if last == nil || !c.start.Before(last.start) {
				last = c
			}
			walk(c)
		}
	}
	walk(tr.root)
	if last == nil {
		return " (the test made no call yet)"
	}
	return fmt.Sprintf(" (the last call was %s at %s)", last.title, last.where)
}

func (r *run) skipSignal(v goja.Value) (string, bool) {
	if o, ok := v.(*goja.Object); ok {
		reason, ok := r.skips[o]
		return reason, ok
	}
	return "", false
}

// forget drops p from the unhandled rejections: the runner handles it.
func (r *run) forget(p *goja.Promise) {
	r.unhandled = slices.DeleteFunc(r.unhandled, func(u *goja.Promise) bool { return u == p })
}

// testReport turns a finished testRun into its report.
func (r *run) testReport(tr *testRun, skipped bool) TestReport {
	now := time.Now()
	out := TestReport{Title: tr.test.fullTitle(), Duration: now.Sub(tr.start)}
	for _, s := range tr.root.children {
		out.Steps = append(out.Steps, s.report(now))
	}
	f := tr.failure
	switch {
	case skipped || (f != nil && f.Cause == causeSkip):
		out.Status = StatusSkipped
		tr.failure = nil
	case f != nil && tr.expectFail:
		out.Status = StatusPassed // failed as test.fail() expected
		tr.failure = nil
	case f == nil && tr.expectFail:
		out.Status = StatusFailed
		tr.failure = &Failure{Message: "Expected to fail, but passed.", Location: tr.test.where, Step: tr.test.fullTitle(), Cause: CauseAssertion}
		out.Error = tr.failure.Message
	case f != nil && f.Cause == CauseTimeout && strings.HasPrefix(f.Message, "Test timeout"):
		out.Status = StatusTimedOut
		out.Error = f.Message
	case f != nil:
		out.Status = StatusFailed
		out.Error = f.Message
	default:
		out.Status = StatusPassed
	}
	return out
}
