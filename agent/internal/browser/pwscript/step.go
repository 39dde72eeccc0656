package pwscript

import (
	"errors"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// beginStep starts a step under the current step of tr.
func (r *run) beginStep(tr *testRun, title, category, where string) *stepRec {
	s := &stepRec{title: r.redact(title), category: category, where: where, start: time.Now()}
	if tr != nil {
		s.parent = tr.step
		tr.step.children = append(tr.step.children, s)
	}
	return s
}

func (r *run) endStep(s *stepRec, errMsg string) {
	if s == nil || !s.end.IsZero() {
		return
	}
	s.end = time.Now()
	if errMsg != "" {
		s.err = r.redact(strings.SplitN(errMsg, "\n", 2)[0])
	}
}

// stepFunction is test.step(title, body[, options]): it runs body as a step of the test and
// returns what body returns.
func (r *run) stepFunction(call goja.FunctionCall) goja.Value {
	tr := r.cur
	if tr == nil {
		panic(r.typeError("test.step() can only be called while a test is running"))
	}
	title := r.argString(call, 0, "test.step", "title")
	body := r.argFunc(call, 1, "test.step", "body")
	r.options(r.argObject(call, 2, "test.step"), "test.step", "box", "timeout")
	step := r.beginStep(tr, title, "test.step", r.callSite())
	prev := tr.step
	tr.step = step
	v, err := body(goja.Undefined())
	if err != nil {
		tr.step = prev
		var ex *goja.Exception
		if errors.As(err, &ex) {
			r.endStep(step, r.failureOfValue(ex.Value()).Message)
		}
		panic(err)
	}
	p, resolve, reject := r.vm.NewPromise()
	r.then(v, func(res goja.Value) {
		tr.step = prev
		r.endStep(step, "")
		must(resolve(res))
	}, func(reason goja.Value) {
		tr.step = prev
		r.endStep(step, r.failureOfValue(reason).Message)
		if f := r.failureOfValue(reason); f != nil {
			if e, ok := reason.(*goja.Object); ok && r.errs[e] == nil {
				// An exception of the script inside a step: report the step's path with it.
				r.errs[e] = &scriptError{message: f.Message, where: f.Location, cause: f.Cause, step: step}
			}
		}
		must(reject(reason))
	})
	return r.vm.ToValue(p)
}

// then calls onFulfilled or onRejected when v (a promise or a value) settles.
func (r *run) then(v goja.Value, onFulfilled, onRejected func(goja.Value)) {
	promise := r.vm.Get("Promise").(*goja.Object)
	resolveFn, _ := goja.AssertFunction(promise.Get("resolve"))
	pv, err := resolveFn(promise, v)
	must(err)
	thenFn, _ := goja.AssertFunction(pv.(*goja.Object).Get("then"))
	wrap := func(f func(goja.Value)) goja.Value {
		return r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
			f(c.Argument(0))
			return goja.Undefined()
		})
	}
	_, err = thenFn(pv, wrap(onFulfilled), wrap(onRejected))
	must(err)
}
