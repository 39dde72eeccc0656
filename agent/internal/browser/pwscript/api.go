package pwscript

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// scriptError is an error the runtime throws into the script: an API call that failed, an
// assertion, an unsupported member. The runtime keeps one per JS error object it makes, so a
// test that fails with it is reported with its cause and the place of the call.
type scriptError struct {
	message string
	where   string // "login.spec.ts:12:5", the call that failed
	cause   Cause
	step    *stepRec // the API call's step, when it has one
}

// passThrough lists the members JavaScript machinery probes on any object (await looks for
// then, JSON.stringify for toJSON, esbuild's interop for __esModule): absent, never an error.
var passThrough = map[string]bool{
	"then": true, "toJSON": true, "__esModule": true, "asymmetricMatch": true,
	"$$typeof": true, "nodeType": true, "constructor": true, "inspect": true,
}

// properties are Playwright members that are objects, not methods, so their message has no "()".
var properties = map[string]bool{
	"keyboard": true, "mouse": true, "touchscreen": true, "request": true, "clock": true,
	"coverage": true, "accessibility": true, "not": true, "resolves": true, "rejects": true,
}

// object returns a JS object with the given members whose other members throw
// "not supported: <name>.<member>()", so that a script using more of Playwright than the
// runtime implements fails with that message rather than with "undefined is not a function".
func (r *run) object(name string, members map[string]any) *goja.Object {
	target := r.vm.NewObject()
	for k, v := range members {
		if err := target.Set(k, v); err != nil {
			panic(err)
		}
	}
	return r.strict(name, target)
}

// strict wraps target in a proxy whose unknown members throw "not supported".
func (r *run) strict(name string, target *goja.Object) *goja.Object {
	return r.strictWith(target, func(prop string) string {
		if ref, ok := browserscript.RefusedMember(refusalObject(name), prop); ok {
			return ref.Message()
		}
		return notSupportedMessage(member(name, prop))
	})
}

// refusalObject names a runtime object as browserscript's refusal list does.
func refusalObject(name string) string {
	if strings.HasPrefix(name, "expect(") {
		return "expect(…)"
	}
	return name
}

// strictWith wraps target in a proxy whose unknown members (but the passThrough ones)
// throw an error with the message unknown gives.
func (r *run) strictWith(target *goja.Object, unknown func(prop string) string) *goja.Object {
	p := r.vm.NewProxy(target, &goja.ProxyTrapConfig{
		Get: func(t *goja.Object, prop string, receiver goja.Value) goja.Value {
			if v := t.Get(prop); v != nil {
				return v
			}
			if passThrough[prop] {
				return goja.Undefined()
			}
			panic(r.throwable(&scriptError{message: unknown(prop), where: r.callSite(), cause: CauseScript}))
		},
	})
	return r.vm.ToValue(p).(*goja.Object)
}

func member(name, prop string) string {
	if properties[prop] {
		return name + "." + prop
	}
	return name + "." + prop + "()"
}

// notSupported returns the error thrown for a feature outside the supported subset.
func (r *run) notSupported(what string) *goja.Object {
	return r.throwable(&scriptError{message: notSupportedMessage(what), where: r.callSite(), cause: CauseScript})
}

func notSupportedMessage(what string) string {
	return "not supported: " + what + " (see the supported subset of Playwright Test in the documentation)"
}

// throwable makes the JS Error object for e and remembers e behind it.
func (r *run) throwable(e *scriptError) *goja.Object {
	e.message = r.redact(e.message)
	obj, err := r.vm.New(r.vm.Get("Error"), r.vm.ToValue(e.message))
	if err != nil {
		panic(err)
	}
	if e.cause == CauseTimeout {
		_ = obj.Set("name", "TimeoutError")
	}
	r.errs[obj] = e
	return obj
}

// typeError throws a TypeError for a call with bad arguments ("page.goto: url: expected a string").
func (r *run) typeError(format string, args ...any) *goja.Object {
	return r.throwable(&scriptError{message: fmt.Sprintf(format, args...), where: r.callSite(), cause: CauseScript})
}

// callSite is the position in the user's script of the innermost frame that is in it: the
// call of the API function now running.
func (r *run) callSite() string {
	for _, f := range r.vm.CaptureCallStack(0, nil) {
		if pos := f.Position(); pos.Filename == r.prog.Filename && pos.Line > 0 {
			return fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
		}
	}
	return ""
}

// stackSite finds the first position in the user's script in a JS stack string.
func (r *run) stackSite(stack string) string {
	for _, line := range strings.Split(stack, "\n") {
		i := strings.Index(line, r.prog.Filename+":")
		if i < 0 {
			continue
		}
		rest := line[i:]
		end := strings.IndexAny(rest, "()\t ")
		if end >= 0 {
			rest = rest[:end]
		}
		return rest
	}
	return ""
}

// argString returns argument i as a string, or throws a TypeError naming fn and what.
func (r *run) argString(call goja.FunctionCall, i int, fn, what string) string {
	v := call.Argument(i)
	s, ok := v.Export().(string)
	if !ok {
		panic(r.typeError("%s: %s: expected a string, got %s", fn, what, describeType(v)))
	}
	return s
}

// argFunc returns argument i as a function, or throws.
func (r *run) argFunc(call goja.FunctionCall, i int, fn, what string) goja.Callable {
	f, ok := goja.AssertFunction(call.Argument(i))
	if !ok {
		panic(r.typeError("%s: %s: expected a function, got %s", fn, what, describeType(call.Argument(i))))
	}
	return f
}

// argObject returns argument i as an object, nil when it is undefined or null, or throws.
func (r *run) argObject(call goja.FunctionCall, i int, fn string) *goja.Object {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		panic(r.typeError("%s: options: expected an object, got %s", fn, describeType(v)))
	}
	return o
}

// options reads the named members of an options object; any other member is not supported,
// so a script relying on an option the runtime ignores learns it.
func (r *run) options(o *goja.Object, fn string, known ...string) map[string]goja.Value {
	out := map[string]goja.Value{}
	if o == nil {
		return out
	}
	for _, k := range o.Keys() {
		v := o.Get(k)
		if goja.IsUndefined(v) {
			continue
		}
		ok := false
		for _, kn := range known {
			if kn == k {
				ok = true
			}
		}
		if !ok {
			panic(r.notSupported(fmt.Sprintf("%s({ %s })", fn, k)))
		}
		out[k] = v
	}
	return out
}

func describeType(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); isFn {
			return "function"
		}
		return "object"
	}
	return fmt.Sprintf("%T", v.Export())
}
