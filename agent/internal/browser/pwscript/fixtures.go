package pwscript

import (
	_ "embed"
	"fmt"

	"github.com/dop251/goja"
)

// fixturesJS sets up and tears down the fixtures of test.extend() (see the file).
//
//go:embed fixtures.js
var fixturesJS string

// fixtureSet is the fixtures a test function declares: those of test.extend({ … }) calls,
// each on the test function it extends (nil for the module's own test).
type fixtureSet struct {
	parent *fixtureSet
	defs   []fixtureDef
}

// fixtureDef is one fixture of test.extend: a function ({ …fixtures }, use, testInfo) or a
// value; [value, { option: true }] is an option test.use can set, { scope: 'worker' } one
// set up once per run.
type fixtureDef struct {
	name  string
	value goja.Value
	opts  goja.Value
}

// chain is the set's definitions, the base's first.
func (fs *fixtureSet) chain() []fixtureDef {
	if fs == nil {
		return nil
	}
	return append(fs.parent.chain(), fs.defs...)
}

// extend handles test.extend({ name: fixture | [fixture, options] }).
func (r *run) extend(fs *fixtureSet) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		o := r.argObject(call, 0, "test.extend")
		if o == nil {
			panic(r.typeError("test.extend: fixtures: expected an object, got %s", describeType(call.Argument(0))))
		}
		next := &fixtureSet{parent: fs}
		for _, name := range o.Keys() {
			v := o.Get(name)
			def := fixtureDef{name: name, value: v, opts: goja.Undefined()}
			if arr, ok := v.(*goja.Object); ok && arr.ClassName() == "Array" {
				def.value, def.opts = arr.Get("0"), arr.Get("1")
				if def.opts == nil {
					def.opts = goja.Undefined()
				}
			}
			next.defs = append(next.defs, def)
			r.fixtureNames[name] = true
		}
		return r.testFunctionOf(next)
	}
}

// fixtureRuntime is fixtures.js, evaluated once per run.
func (r *run) fixtureRuntime() *goja.Object {
	if r.fixtureRT == nil {
		v, err := r.vm.RunScript("fixtures.js", fixturesJS)
		if err != nil {
			panic(fmt.Sprintf("fixtures.js: %v", err))
		}
		r.fixtureRT = v.(*goja.Object)
	}
	return r.fixtureRT
}

// setupFixtures sets up the fixtures of t's test function on top of the built-in ones; it
// returns the fixtures the test and its hooks get, and the teardown to invoke after them.
// A fixture that fails to set up fails the test.
func (r *run) setupFixtures(tr *testRun, builtins goja.Value) (goja.Value, goja.Callable, *Failure) {
	defs := tr.test.fixtures.chain()
	if len(defs) == 0 {
		return builtins, nil, nil
	}
	list := r.vm.NewArray()
	for i, d := range defs {
		must(list.Set(fmt.Sprint(i), r.vm.NewArray(d.name, d.value, d.opts)))
	}
	options := r.vm.NewObject()
	for _, o := range tr.test.parent.useChain() {
		for _, k := range o.Keys() {
			if r.fixtureNames[k] {
				must(options.Set(k, o.Get(k)))
			}
		}
	}
	setup, _ := goja.AssertFunction(r.fixtureRuntime().Get("setup"))
	var out *goja.Object
	capture := r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		out = call.Argument(0).(*goja.Object)
		return goja.Undefined()
	})
	body := r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		p, err := setup(goja.Undefined(), list, options, builtins, r.testInfo())
		if err != nil {
			panic(err)
		}
		then, _ := goja.AssertFunction(p.(*goja.Object).Get("then"))
		v, err := then(p, capture)
		if err != nil {
			panic(err)
		}
		return v
	})
	fn, _ := goja.AssertFunction(body)
	if f, _ := r.invoke(tr, fn); f != nil {
		return builtins, nil, f
	}
	teardown, _ := goja.AssertFunction(out.Get("teardown"))
	return out.Get("fixtures"), teardown, nil
}

// finishWorkerFixtures tears down the worker-scoped fixtures after the last test.
func (r *run) finishWorkerFixtures(tr *testRun) *Failure {
	if r.fixtureRT == nil {
		return nil
	}
	fn, _ := goja.AssertFunction(r.fixtureRT.Get("finishWorker"))
	f, _ := r.invoke(tr, fn)
	return f
}
