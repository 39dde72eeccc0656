package pwscript

import (
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// suite is a test.describe block (the root is the file).
type suite struct {
	title   string
	parent  *suite
	items   []any // *suite or *testCase, in declaration order
	hooks   map[string][]*hook
	only    bool
	skip    *string // skipped, with the reason
	fail    bool    // test.fail(): every test is expected to fail
	serial  bool
	timeout time.Duration
	use     []*goja.Object // test.use() options, in order (use.go)
}

// testCase is a declared test.
type testCase struct {
	fixtures *fixtureSet // of test.extend, when declared through an extended test
	title    string
	fn       goja.Callable
	parent   *suite
	where    string
	only     bool
	skip     *string
	fail     bool
	timeout  time.Duration
}

type hook struct {
	kind, title, where string
	fn                 goja.Callable
}

func (s *suite) titlePath() []string {
	if s == nil {
		return nil
	}
	p := s.parent.titlePath()
	if s.title != "" {
		p = append(p, s.title)
	}
	return p
}

func (t *testCase) titlePath() []string { return append(t.parent.titlePath(), t.title) }

func (t *testCase) fullTitle() string { return strings.Join(t.titlePath(), " › ") }

func (s *suite) allTests() []*testCase {
	var out []*testCase
	for _, it := range s.items {
		switch it := it.(type) {
		case *testCase:
			out = append(out, it)
		case *suite:
			out = append(out, it.allTests()...)
		}
	}
	return out
}

func (s *suite) hasOnly() bool {
	if s.only {
		return true
	}
	for _, it := range s.items {
		switch it := it.(type) {
		case *testCase:
			if it.only {
				return true
			}
		case *suite:
			if it.hasOnly() {
				return true
			}
		}
	}
	return false
}

// testFunction builds `test` and its members.
func (r *run) testFunction() *goja.Object { return r.testFunctionOf(nil) }

// testFunctionOf builds a test function whose tests get the fixtures of fs (test.extend).
func (r *run) testFunctionOf(fs *fixtureSet) *goja.Object {
	vm := r.vm
	declare := func(mod string) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			name := "test"
			if mod != "" {
				name += "." + mod
			}
			if mod != "" && mod != "only" && !isDeclaration(call) {
				r.modifier(mod, call)
				return goja.Undefined()
			}
			t := r.declareTest(name, call)
			t.fixtures = fs
			switch mod {
			case "only":
				t.only = true
			case "skip", "fixme":
				reason := ""
				t.skip = &reason
			case "fail":
				t.fail = true
			}
			return goja.Undefined()
		}
	}
	target := vm.ToValue(declare("")).(*goja.Object)
	members := map[string]any{
		"only": declare("only"), "skip": declare("skip"), "fixme": declare("fixme"),
		"fail": declare("fail"), "slow": declare("slow"),
		"describe":   r.describeFunction(),
		"beforeAll":  r.hookFunction("beforeAll"),
		"beforeEach": r.hookFunction("beforeEach"),
		"afterEach":  r.hookFunction("afterEach"),
		"afterAll":   r.hookFunction("afterAll"),
		"step":       r.stepFunction,
		"info":       func(goja.FunctionCall) goja.Value { return r.testInfo() },
		"setTimeout": func(call goja.FunctionCall) goja.Value {
			d := time.Duration(call.Argument(0).ToFloat() * float64(time.Millisecond))
			switch {
			case r.declaring != nil:
				r.declaring.timeout = d
			case r.cur != nil:
				r.cur.setTimeout(d)
			}
			return goja.Undefined()
		},
		"expect": r.expectFunction(),
		"use":    r.use,
		"extend": r.extend(fs),
	}
	for k, v := range members {
		must(target.Set(k, v))
	}
	return r.strict("test", target)
}

// isDeclaration tells test.skip('title', fn) (a declaration) from test.skip(condition, reason)
// and test.skip() (modifiers).
func isDeclaration(call goja.FunctionCall) bool {
	if _, ok := call.Argument(0).Export().(string); !ok {
		return false
	}
	for _, a := range call.Arguments[1:] {
		if _, ok := goja.AssertFunction(a); ok {
			return true
		}
	}
	return false
}

// declareTest handles test(title, [details], body).
func (r *run) declareTest(name string, call goja.FunctionCall) *testCase {
	if r.declaring == nil {
		panic(r.typeError("%s() can only be called at the top level of the file or in a test.describe() callback, not inside a test or hook", name))
	}
	title := r.argString(call, 0, name, "title")
	fnArg := 1
	if _, ok := goja.AssertFunction(call.Argument(1)); !ok && len(call.Arguments) > 2 {
		fnArg = 2 // test(title, { tag, annotation }, body)
	}
	t := &testCase{title: title, fn: r.argFunc(call, fnArg, name, "body"), parent: r.declaring, where: r.callSite()}
	r.declaring.items = append(r.declaring.items, t)
	return t
}

// modifier handles test.skip/fixme/fail/slow called as modifiers: with no argument, with a
// condition and a description, or with a callback of the fixtures. In a describe block (or
// at the top level) it applies to every test of the block; in a test or hook, to that test.
func (r *run) modifier(mod string, call goja.FunctionCall) {
	apply := true
	reason := ""
	if len(call.Arguments) > 0 {
		cond := call.Argument(0)
		if f, ok := goja.AssertFunction(cond); ok {
			v, err := f(goja.Undefined(), r.conditionFixtures())
			if err != nil {
				panic(err)
			}
			cond = v
		}
		apply = cond.ToBoolean()
		if len(call.Arguments) > 1 {
			reason = call.Argument(1).String()
		}
	}
	if !apply || mod == "slow" {
		return // slow triples Playwright's per-test timeout; here the check's timeout bounds the run
	}
	switch {
	case r.declaring != nil:
		switch mod {
		case "skip", "fixme":
			r.declaring.skip = &reason
		case "fail":
			r.declaring.fail = true
		}
	case r.cur != nil:
		switch mod {
		case "skip", "fixme":
			sig := r.vm.NewObject()
			must(sig.Set("message", "skipped: "+reason))
			r.skips[sig] = reason
			panic(sig)
		case "fail":
			r.cur.expectFail = true
		}
	}
}

// conditionFixtures is what a modifier's callback gets: the worker fixtures of this runtime.
func (r *run) conditionFixtures() goja.Value {
	return r.object("fixtures", map[string]any{
		"browserName": "chromium", "headless": true, "isMobile": false, "channel": goja.Undefined(),
	})
}

// describeFunction builds test.describe and its members.
func (r *run) describeFunction() *goja.Object {
	describe := func(mode string) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			if r.declaring == nil {
				panic(r.typeError("test.describe() can only be called at the top level of the file or in another test.describe() callback"))
			}
			title, fnArg := "", 0
			if _, ok := goja.AssertFunction(call.Argument(0)); !ok {
				title = r.argString(call, 0, "test.describe", "title")
				fnArg = 1
				if _, ok := goja.AssertFunction(call.Argument(1)); !ok && len(call.Arguments) > 2 {
					fnArg = 2 // describe(title, { tag }, callback)
				}
			}
			fn := r.argFunc(call, fnArg, "test.describe", "callback")
			s := &suite{title: title, parent: r.declaring}
			switch mode {
			case "only":
				s.only = true
			case "skip", "fixme":
				reason := ""
				s.skip = &reason
			case "serial":
				s.serial = true
			case "serial.only":
				s.serial, s.only = true, true
			case "parallel.only":
				s.only = true
			}
			r.declaring.items = append(r.declaring.items, s)
			prev := r.declaring
			r.declaring = s
			_, err := fn(goja.Undefined())
			r.declaring = prev
			if err != nil {
				panic(err)
			}
			return goja.Undefined()
		}
	}
	target := r.vm.ToValue(describe("")).(*goja.Object)
	mk := func(name string, members map[string]any) *goja.Object {
		o := r.vm.ToValue(describe(name)).(*goja.Object)
		for k, v := range members {
			must(o.Set(k, v))
		}
		return r.strict("test.describe."+name, o)
	}
	for k, v := range map[string]any{
		"only": describe("only"), "skip": describe("skip"), "fixme": describe("fixme"),
		"serial":   mk("serial", map[string]any{"only": describe("serial.only")}),
		"parallel": mk("parallel", map[string]any{"only": describe("parallel.only")}),
		"configure": func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 0, "test.describe.configure"), "test.describe.configure", "mode", "timeout", "retries")
			if r.declaring == nil {
				panic(r.typeError("test.describe.configure() can only be called at the top level of the file or in a test.describe() callback"))
			}
			if m, ok := opts["mode"]; ok && m.String() == "serial" {
				r.declaring.serial = true
			}
			if t, ok := opts["timeout"]; ok {
				r.declaring.timeout = time.Duration(t.ToFloat() * float64(time.Millisecond))
			}
			if n, ok := opts["retries"]; ok && n.ToInteger() != 0 {
				panic(r.notSupported("test.describe.configure({ retries }) — a check's test runs once per attempt"))
			}
			return goja.Undefined()
		},
	} {
		must(target.Set(k, v))
	}
	return r.strict("test.describe", target)
}

// hookFunction builds test.beforeAll and the other hooks: hook([title], fn).
func (r *run) hookFunction(kind string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		if r.declaring == nil {
			panic(r.typeError("test.%s() can only be called at the top level of the file or in a test.describe() callback", kind))
		}
		title, fnArg := kind+" hook", 0
		if s, ok := call.Argument(0).Export().(string); ok {
			title, fnArg = s, 1
		}
		h := &hook{kind: kind, title: title, where: r.callSite(), fn: r.argFunc(call, fnArg, "test."+kind, "callback")}
		if r.declaring.hooks == nil {
			r.declaring.hooks = map[string][]*hook{}
		}
		r.declaring.hooks[kind] = append(r.declaring.hooks[kind], h)
		return goja.Undefined()
	}
}

func (r *run) fixtureError(name string) string {
	if r.opts.RequestOnly {
		return requestOnlyFixtureError(name)
	}
	if ref, ok := browserscript.RefusedObject(name); ok {
		return ref.Message()
	}
	return fmt.Sprintf("not supported: the %s fixture — a browser check test gets { page } (one page in a fresh browser context)", name)
}
