package pwscript

import (
	_ "embed"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// expectJS builds the script's expect around the runtime's matchers (see the file).
//
//go:embed expect.js
var expectJS string

// expectAPI wraps base, the runtime's expect, in expect.js: expect.soft, expect.poll,
// expect.configure, expect.extend, asymmetric matchers and .resolves/.rejects.
func (r *run) expectAPI(base *goja.Object) goja.Value {
	v, err := r.vm.RunScript("expect.js", expectJS)
	if err != nil {
		panic(fmt.Sprintf("expect.js: %v", err))
	}
	build, _ := goja.AssertFunction(v)
	hooks := r.vm.NewObject()
	for k, f := range map[string]any{
		// softFail records a failure of expect.soft: the test goes on and fails at its end.
		"softFail": func(call goja.FunctionCall) goja.Value {
			if tr := r.cur; tr != nil {
				f := r.failureOfValue(call.Argument(0))
				tr.soft = append(tr.soft, f)
			}
			return goja.Undefined()
		},
		"equals": func(call goja.FunctionCall) goja.Value {
			return r.vm.ToValue(r.equals(call.Argument(0), call.Argument(1), false))
		},
		"format": func(call goja.FunctionCall) goja.Value { return r.vm.ToValue(r.format(call.Argument(0))) },
		// withTimeout runs fn with the default timeout of web-first matchers set to ms.
		"withTimeout": func(call goja.FunctionCall) goja.Value {
			prev := r.opts.ExpectTimeout
			r.opts.ExpectTimeout = time.Duration(call.Argument(0).ToFloat() * float64(time.Millisecond))
			defer func() { r.opts.ExpectTimeout = prev }()
			fn, _ := goja.AssertFunction(call.Argument(1))
			v, err := fn(goja.Undefined())
			if err != nil {
				panic(err)
			}
			return v
		},
		"defaultTimeout": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(r.opts.ExpectTimeout.Milliseconds()) },
		// error makes an assertion error at the script's place where site (an Error made at
		// the call) was made.
		"error": func(call goja.FunctionCall) goja.Value {
			return r.throwable(&scriptError{message: call.Argument(0).String(), where: r.siteOf(call.Argument(1)), cause: CauseScript})
		},
		// retitle makes err (an assertion error) again with suffix added to its message, at
		// site's place.
		"retitle": func(call goja.FunctionCall) goja.Value {
			f := r.failureOfValue(call.Argument(0))
			where := f.Location
			if where == "" {
				where = r.siteOf(call.Argument(2))
			}
			return r.throwable(&scriptError{message: f.Message + call.Argument(1).String(), where: where, cause: f.Cause})
		},
	} {
		must(hooks.Set(k, f))
	}
	out, err := build(goja.Undefined(), base, hooks)
	if err != nil {
		panic(fmt.Sprintf("expect.js: %v", err))
	}
	return out
}

// siteOf is the place in the user's script an Error made by expect.js was made at.
func (r *run) siteOf(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			return r.stackSite(st.String())
		}
	}
	return r.callSite()
}

// softFailure is the failure a test's soft assertions add up to, or nil.
func softFailure(soft []*Failure) *Failure {
	if len(soft) == 0 {
		return nil
	}
	f := *soft[0]
	if len(soft) > 1 {
		f.Message = fmt.Sprintf("%d soft assertions failed; the first: %s", len(soft), f.Message)
		for _, s := range soft[1:] {
			f.Message += "\n\n" + s.Message
			if s.Location != "" {
				f.Message += " (at " + s.Location + ")"
			}
		}
	}
	return &f
}
