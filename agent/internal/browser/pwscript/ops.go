package pwscript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/dop251/goja"
)

// opError is how a browser operation fails: a Playwright-style message that already names the
// call ("locator.click: Timeout 5000ms exceeded.…") and its cause.
type opError struct {
	msg   string
	cause Cause
}

func (e *opError) Error() string { return e.msg }

func opErr(cause Cause, format string, args ...any) *opError {
	return &opError{msg: fmt.Sprintf(format, args...), cause: cause}
}

// jsResult is an operation result that must be built on the loop (a JS object).
type jsResult func() goja.Value

// jsonResult is an operation result to be parsed as JSON on the loop.
type jsonResult []byte

// bytesResult becomes a Uint8Array (screenshot bytes).
type bytesResult []byte

// async starts a browser operation: fn runs on its own goroutine with the test's context and
// the returned promise settles with its result on the loop. what names the call in the
// test's steps and in timeout messages; category is "pw:api" or "expect".
func (r *run) async(what, category string, fn func(ctx context.Context) (any, error)) goja.Value {
	tr := r.cur
	if tr == nil {
		panic(r.typeError("%s can only be called while a test or hook is running", what))
	}
	where := r.callSite()
	step := r.beginStep(tr, what, category, where)
	p, resolve, reject := r.vm.NewPromise()
	ctx := tr.ctx
	id := r.loop.begin(what, where)
	go func() {
		v, err := protect(func() (any, error) { return fn(ctx) })
		if err == nil && ctx.Err() != nil && errors.Is(r.tab.Err(), context.Canceled) {
			err = ctx.Err()
		}
		r.loop.post(func() error {
			r.loop.done(id)
			if tr.finished {
				return nil // the test is over; nobody awaits this any more
			}
			if err != nil {
				se := r.opFailure(err, what, where, tr)
				se.step = step.parent // the failure's path is the test.step the call was made in
				r.endStep(step, se.message)
				return reject(r.throwable(se))
			}
			r.endStep(step, "")
			return resolve(r.toJS(v))
		})
	}()
	return r.vm.ToValue(p)
}

// protect runs fn, turning a panic into an error so that a bug in an operation fails the
// test rather than the agent.
func protect(fn func() (any, error)) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = opErr(CauseBrowser, "internal error in the script runtime: %v\n%s", p, debug.Stack())
		}
	}()
	return fn()
}

// opFailure turns an operation's error into the error thrown into the script.
func (r *run) opFailure(err error, what, where string, tr *testRun) *scriptError {
	var oe *opError
	switch {
	case errors.As(err, &oe):
		return &scriptError{message: oe.msg, where: where, cause: oe.cause}
	case errors.Is(r.tab.Err(), context.Canceled):
		return &scriptError{message: what + ": the run was canceled: the browser tab was closed or the agent is stopping", where: where, cause: CauseBrowser}
	case errors.Is(err, context.DeadlineExceeded):
		return &scriptError{message: fmt.Sprintf("%s: Test timeout of %dms exceeded.", what, tr.timeout.Milliseconds()), where: where, cause: CauseTimeout}
	default:
		return &scriptError{message: fmt.Sprintf("%s: %v", what, err), where: where, cause: CauseBrowser}
	}
}

// toJS converts an operation's result on the loop.
func (r *run) toJS(v any) goja.Value {
	switch v := v.(type) {
	case nil:
		return goja.Undefined()
	case jsResult:
		return v()
	case jsonResult:
		if len(v) == 0 {
			return goja.Undefined()
		}
		out, err := r.jsonParse(goja.Undefined(), r.vm.ToValue(string(v)))
		if err != nil {
			return goja.Undefined()
		}
		return out
	case bytesResult:
		arr, err := r.vm.New(r.vm.Get("Uint8Array"), r.vm.ToValue(r.vm.NewArrayBuffer(v)))
		must(err)
		return arr
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return r.vm.NewArray(out...)
	default:
		return r.vm.ToValue(v)
	}
}

// toJSON serializes a script value for the page (page.evaluate's argument).
func (r *run) toJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	stringify, _ := goja.AssertFunction(r.vm.Get("JSON").(*goja.Object).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(s) {
		return nil, nil
	}
	return json.RawMessage(s.String()), nil
}
