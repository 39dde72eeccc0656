package pwscript

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// budget is how long an operation may wait: its own timeout (the call's { timeout }, or the
// default for its kind), or else the test's deadline, as in Playwright.
type budget struct {
	own      time.Duration // 0: until the test's deadline
	testTime time.Duration // the test's whole time, for "Test timeout of Nms exceeded."
}

// actionBudget is the budget of an action or navigation.
func (r *run) actionBudget(opts map[string]goja.Value) budget {
	b := budget{own: r.opts.ActionTimeout, testTime: r.testTime()}
	if v, ok := opts["timeout"]; ok {
		b.own = time.Duration(v.ToFloat() * float64(time.Millisecond))
	}
	return b
}

// expectBudget is the budget of a web-first assertion.
func (r *run) expectBudget(opts map[string]goja.Value) budget {
	b := budget{own: r.opts.ExpectTimeout, testTime: r.testTime()}
	if v, ok := opts["timeout"]; ok {
		b.own = time.Duration(v.ToFloat() * float64(time.Millisecond))
	}
	return b
}

func (r *run) testTime() time.Duration {
	if r.cur == nil {
		return r.budget()
	}
	return r.cur.timeout
}

// bound derives the operation's context from the test's; it tells which deadline applies,
// so that the message can say which was exceeded.
func (b budget) bound(parent context.Context) (context.Context, context.CancelFunc, bool) {
	if b.own > 0 {
		if d, ok := parent.Deadline(); !ok || time.Now().Add(b.own).Before(d) {
			ctx, cancel := context.WithTimeout(parent, b.own)
			return ctx, cancel, true
		}
	}
	ctx, cancel := context.WithCancel(parent)
	return ctx, cancel, false
}

// exceeded is Playwright's timeout sentence.
func (b budget) exceeded(own bool) string {
	if own {
		return fmt.Sprintf("Timeout %dms exceeded.", b.own.Milliseconds())
	}
	return fmt.Sprintf("Test timeout of %dms exceeded.", b.testTime.Milliseconds())
}

// pollDelays are the pauses between tries of a waiting operation.
var pollDelays = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}

// poll calls try until it is done or fails, or ctx ends (returning ctx's error).
func poll(ctx context.Context, try func() (bool, error)) error {
	for i := 1; ; i++ {
		done, err := try()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || done {
			return err
		}
		t := time.NewTimer(pollDelays[min(i, len(pollDelays)-1)])
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// callLog is what a waiting operation did, for its timeout message.
type callLog struct {
	lines []string
}

func (c *callLog) add(line string) {
	if n := len(c.lines); n > 0 && c.lines[n-1] == line {
		return
	}
	c.lines = append(c.lines, line)
}

func (c *callLog) String() string {
	if len(c.lines) == 0 {
		return ""
	}
	return "\nCall log:\n  - " + strings.Join(c.lines, "\n  - ")
}

// strictViolation is Playwright's message for a locator that matched several elements
// where one was needed.
func strictViolation(l *locator, res *queryResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "strict mode violation: %s resolved to %d elements:", l.desc, res.N)
	for i, p := range res.P {
		fmt.Fprintf(&b, "\n    %d) %s", i+1, p)
	}
	if res.N > len(res.P) {
		fmt.Fprintf(&b, "\n    ...")
	}
	return b.String()
}

// resolveOne waits until loc matches exactly one element on which op succeeds (the engine
// reports nothing to wait for), and returns the engine's answer. method names the call in
// messages ("locator.click"); ctx is bounded by b (own tells which deadline applies).
func (r *run) resolveOne(ctx context.Context, b budget, own bool, l *locator, method, op string, arg any, userFn string, userArg []byte) (*queryResult, error) {
	log := &callLog{}
	log.add("waiting for " + l.desc)
	var out *queryResult
	err := poll(ctx, func() (bool, error) {
		if err := r.runLocatorHandlers(ctx); err != nil {
			return false, err
		}
		res, err := r.browser.query(ctx, l, op, arg, userFn, userArg)
		switch {
		case transient(err):
			return false, nil
		case err != nil:
			return false, pageError(method, err)
		case res.N > 1:
			return false, opErr(CauseAssertion, "%s: Error: %s%s", method, strictViolation(l, res), log)
		case res.N == 0:
			return false, nil
		case res.W != "":
			log.add("  - " + res.W)
			return false, nil
		}
		out = res
		return true, nil
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return nil, opErr(CauseTimeout, "%s: %s%s", method, b.exceeded(own), log)
	}
	return out, err
}

// timedOut maps an error of a step after the element was found (an input event, the wait for
// a navigation) to the operation's timeout message when its deadline passed.
func timedOut(ctx context.Context, err error, method string, b budget, own bool) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return opErr(CauseTimeout, "%s: %s", method, b.exceeded(own))
	}
	return pageError(method, err)
}

// pageError is an operation failing on an error from the page or CDP.
func pageError(method string, err error) error {
	if err == nil {
		return nil
	}
	var pe *pageException
	if errors.As(err, &pe) {
		return opErr(CauseScript, "%s: %s", method, pe.text)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return opErr(CauseBrowser, "%s: %v", method, err)
}
