package pwscript

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// Console output is kept up to these limits.
const (
	maxConsoleLines = 100
	maxConsoleLine  = 1000
)

// install defines the script's globals: require (of TestModule only), module/exports,
// process.env, console and timers. There is no fs, net, child_process or Buffer: those names
// are simply undefined, and require() of any module but TestModule fails.
func (r *run) install() {
	vm := r.vm
	jsonObj := vm.Get("JSON").(*goja.Object)
	r.jsonParse, _ = goja.AssertFunction(jsonObj.Get("parse"))

	exports := vm.NewObject()
	module := vm.NewObject()
	must(module.Set("exports", exports))
	must(vm.Set("module", module))
	must(vm.Set("exports", exports))

	testModule := r.testModule()
	must(vm.Set("require", func(call goja.FunctionCall) goja.Value {
		name := call.Argument(0).String()
		if name == browserscript.TestModule {
			return testModule
		}
		panic(r.throwable(&scriptError{message: browserscript.RefusedModule(name).Message(), where: r.callSite(), cause: CauseScript}))
	}))

	env := vm.NewObject()
	for _, k := range slices.Sorted(maps.Keys(r.opts.Env)) {
		must(env.Set(k, r.opts.Env[k]))
	}
	must(vm.Set("process", r.object("process", map[string]any{"env": env})))

	logf := func(level string) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			if len(r.console) >= maxConsoleLines {
				return goja.Undefined()
			}
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				if s, ok := a.Export().(string); ok {
					parts[i] = s
				} else {
					parts[i] = r.format(a)
				}
			}
			r.console = append(r.console, truncate(r.redact(level+": "+strings.Join(parts, " ")), maxConsoleLine))
			return goja.Undefined()
		}
	}
	must(vm.Set("console", r.object("console", map[string]any{
		"log": logf("log"), "info": logf("info"), "warn": logf("warn"), "error": logf("error"), "debug": logf("debug"),
	})))

	must(vm.Set("setTimeout", r.setTimer(false)))
	must(vm.Set("setInterval", r.setTimer(true)))
	clearTimer := func(call goja.FunctionCall) goja.Value {
		r.loop.clearTimer(call.Argument(0).ToInteger())
		return goja.Undefined()
	}
	must(vm.Set("clearTimeout", clearTimer))
	must(vm.Set("clearInterval", clearTimer))

	vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		switch op {
		case goja.PromiseRejectionReject:
			r.unhandled = append(r.unhandled, p)
		case goja.PromiseRejectionHandle:
			for i, u := range r.unhandled {
				if u == p {
					r.unhandled = append(r.unhandled[:i], r.unhandled[i+1:]...)
					break
				}
			}
		}
	})
}

func (r *run) setTimer(repeat bool) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		fn := r.argFunc(call, 0, "setTimeout", "callback")
		d := time.Duration(call.Argument(1).ToFloat() * float64(time.Millisecond))
		if d < 0 {
			d = 0
		}
		r.timerSeq++
		t := &timer{id: r.timerSeq, at: time.Now().Add(d), fn: fn, where: "setTimeout(…, " + fmt.Sprint(d.Milliseconds()) + ") at " + r.callSite()}
		if repeat {
			t.every = max(d, time.Millisecond)
			t.where = "setInterval" + strings.TrimPrefix(t.where, "setTimeout")
		}
		if len(call.Arguments) > 2 {
			t.args = call.Arguments[2:]
		}
		r.loop.addTimer(t)
		return r.vm.ToValue(t.id)
	}
}

// testModule is what require('@playwright/test') returns.
func (r *run) testModule() goja.Value {
	target := r.vm.NewObject()
	testFn := r.testFunction()
	must(target.Set("test", testFn))
	must(target.Set("expect", r.expectFunction()))
	// `import test from '@playwright/test'` gets test, as in Playwright.
	must(target.Set("default", testFn))
	must(target.Set("__esModule", true))
	return r.strictWith(target, func(prop string) string {
		if ref, ok := browserscript.RefusedObject(prop); ok {
			return ref.Message()
		}
		return fmt.Sprintf("not supported: import { %s } from '%s' — the supported exports are test and expect", prop, browserscript.TestModule)
	})
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
