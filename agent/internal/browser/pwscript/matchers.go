package pwscript

import (
	"fmt"
	"math"
	"strings"

	"github.com/dop251/goja"
)

// valueMatcher checks a received value: whether it passes, and the lines of its message
// after the header (given whether the assertion was negated).
type valueMatcher func(received goja.Value, args []goja.Value) (pass bool, details func(negated bool) string)

// addValueMatchers adds the synchronous, Jest-style matchers of expect(value).
func (r *run) addValueMatchers(m map[string]any, received goja.Value, custom string, negated bool) {
	add := func(name, args, comment string, check valueMatcher) {
		m[name] = func(call goja.FunctionCall) goja.Value {
			pass, details := check(received, call.Arguments)
			if pass != negated {
				return goja.Undefined()
			}
			not := ""
			if negated {
				not = "not."
			}
			header := fmt.Sprintf("expect(received).%s%s(%s)", not, name, args)
			if comment != "" {
				header += " // " + comment
			}
			if custom != "" {
				header = custom + "\n\n" + header
			}
			panic(r.throwable(&scriptError{message: header + "\n\n" + details(negated), where: r.callSite(), cause: CauseAssertion}))
		}
	}
	expRec := func(expected, got goja.Value) func(bool) string {
		return func(negated bool) string {
			if negated {
				return "Expected: not " + r.format(expected)
			}
			return "Expected: " + r.format(expected) + "\nReceived: " + r.format(got)
		}
	}
	recOnly := func(got goja.Value) func(bool) string {
		return func(bool) string { return "Received: " + r.format(got) }
	}
	arg := func(args []goja.Value, i int) goja.Value {
		if i < len(args) {
			return args[i]
		}
		return goja.Undefined()
	}
	add("toBe", "expected", "Object.is equality", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		return v.SameAs(arg(a, 0)), expRec(arg(a, 0), v)
	})
	add("toEqual", "expected", "deep equality", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		return r.equals(v, arg(a, 0), false), expRec(arg(a, 0), v)
	})
	add("toStrictEqual", "expected", "deep equality", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		return r.equals(v, arg(a, 0), true), expRec(arg(a, 0), v)
	})
	truthy := func(v goja.Value) bool { return v != nil && v.ToBoolean() }
	add("toBeTruthy", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) { return truthy(v), recOnly(v) })
	add("toBeFalsy", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) { return !truthy(v), recOnly(v) })
	add("toBeNull", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) { return goja.IsNull(v), recOnly(v) })
	add("toBeUndefined", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) { return goja.IsUndefined(v), recOnly(v) })
	add("toBeDefined", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) { return !goja.IsUndefined(v), recOnly(v) })
	add("toBeNaN", "", "", func(v goja.Value, _ []goja.Value) (bool, func(bool) string) {
		f, ok := v.Export().(float64)
		return ok && math.IsNaN(f), recOnly(v)
	})
	compare := func(name, op string, ok func(a, b float64) bool) {
		add(name, "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
			e := arg(a, 0)
			pass := isNumber(v) && isNumber(e) && ok(v.ToFloat(), e.ToFloat())
			return pass, func(negated bool) string {
				not := ""
				if negated {
					not = "not "
				}
				return fmt.Sprintf("Expected: %s%s %s\nReceived: %s", not, op, r.format(e), r.format(v))
			}
		})
	}
	compare("toBeGreaterThan", ">", func(a, b float64) bool { return a > b })
	compare("toBeGreaterThanOrEqual", ">=", func(a, b float64) bool { return a >= b })
	compare("toBeLessThan", "<", func(a, b float64) bool { return a < b })
	compare("toBeLessThanOrEqual", "<=", func(a, b float64) bool { return a <= b })
	add("toBeCloseTo", "expected, precision", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		digits := 2.0
		if p := arg(a, 1); !goja.IsUndefined(p) {
			digits = p.ToFloat()
		}
		pass := isNumber(v) && math.Abs(v.ToFloat()-arg(a, 0).ToFloat()) < math.Pow(10, -digits)/2
		return pass, expRec(arg(a, 0), v)
	})
	add("toContain", "expected", "indexOf", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		e := arg(a, 0)
		if s, ok := v.Export().(string); ok {
			return strings.Contains(s, e.String()), expRec(e, v)
		}
		for _, item := range r.items(v) {
			if item.StrictEquals(e) {
				return true, expRec(e, v)
			}
		}
		return false, expRec(e, v)
	})
	add("toContainEqual", "expected", "deep equality", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		for _, item := range r.items(v) {
			if r.equals(item, arg(a, 0), false) {
				return true, expRec(arg(a, 0), v)
			}
		}
		return false, expRec(arg(a, 0), v)
	})
	add("toHaveLength", "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		var length goja.Value = goja.Undefined()
		if o, ok := v.(*goja.Object); ok {
			length = o.Get("length")
		} else if s, ok := v.Export().(string); ok {
			length = r.vm.ToValue(len([]rune(s)))
		}
		return length != nil && length.SameAs(arg(a, 0)), func(negated bool) string {
			if negated {
				return "Expected length: not " + r.format(arg(a, 0))
			}
			return "Expected length: " + r.format(arg(a, 0)) + "\nReceived length: " + r.format(length) + "\nReceived: " + r.format(v)
		}
	})
	add("toMatch", "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		s, ok := v.Export().(string)
		e := arg(a, 0)
		pass := false
		if ok {
			if re, isRe := r.regexpOf(e); isRe {
				pass = re.testRegexp(s, false)
			} else {
				pass = strings.Contains(s, e.String())
			}
		}
		return pass, func(negated bool) string {
			label := "Expected substring: "
			if r.isRegExp(e) {
				label = "Expected pattern: "
			}
			if negated {
				return label + "not " + r.format(e) + "\nReceived string: " + r.format(v)
			}
			return label + r.format(e) + "\nReceived string: " + r.format(v)
		}
	})
	add("toHaveProperty", "path", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		path := r.propertyPath(arg(a, 0))
		cur, found := v, true
		for _, p := range path {
			o, ok := cur.(*goja.Object)
			if !ok || o.Get(p) == nil {
				found = false
				break
			}
			cur = o.Get(p)
		}
		pass := found && (len(a) < 2 || r.equals(cur, a[1], false))
		return pass, func(negated bool) string {
			s := "Expected path: " + quote(strings.Join(path, "."))
			if len(a) > 1 {
				s += "\nExpected value: " + r.format(a[1])
			}
			if found {
				s += "\nReceived value: " + r.format(cur)
			} else {
				s += "\nReceived path: not found"
			}
			return s
		}
	})
	add("toBeInstanceOf", "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		ctor, ok := arg(a, 0).(*goja.Object)
		pass := false
		if o, isObj := v.(*goja.Object); ok && isObj {
			pass = r.vm.InstanceOf(o, ctor)
		}
		return pass, func(bool) string {
			return "Expected constructor: " + r.format(arg(a, 0)) + "\nReceived value: " + r.format(v)
		}
	})
	add("toMatchObject", "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		return r.matchesObject(v, arg(a, 0)), expRec(arg(a, 0), v)
	})
	add("toThrow", "expected", "", func(v goja.Value, a []goja.Value) (bool, func(bool) string) {
		fn, ok := goja.AssertFunction(v)
		if !ok {
			panic(r.typeError("expect(received).toThrow(): received value must be a function"))
		}
		_, err := fn(goja.Undefined())
		var thrown goja.Value
		if ex, ok := err.(*goja.Exception); ok {
			thrown = ex.Value()
		} else if err != nil {
			panic(err) // an interrupt
		}
		pass := thrown != nil
		msg := ""
		if thrown != nil {
			if o, ok := thrown.(*goja.Object); ok && o.Get("message") != nil {
				msg = o.Get("message").String()
			} else {
				msg = thrown.String()
			}
		}
		if pass && len(a) > 0 && !goja.IsUndefined(a[0]) {
			e := a[0]
			switch {
			case r.isRegExp(e):
				re, _ := r.regexpOf(e)
				pass = re.testRegexp(msg, false)
			case e.ExportType() != nil && e.ExportType().Kind().String() == "string":
				pass = strings.Contains(msg, e.String())
			default:
				if ctor, ok := e.(*goja.Object); ok {
					if _, isFn := goja.AssertFunction(ctor); isFn {
						to, isObj := thrown.(*goja.Object)
						pass = isObj && r.vm.InstanceOf(to, ctor)
					} else {
						pass = msg == ctor.Get("message").String()
					}
				}
			}
		}
		return pass, func(negated bool) string {
			s := ""
			if len(a) > 0 {
				s = "Expected: " + r.format(a[0]) + "\n"
			}
			if thrown == nil {
				return s + "Received function did not throw"
			}
			return s + "Received message: " + quote(msg)
		}
	})
	m["toThrowError"] = m["toThrow"]
	for _, name := range []string{"resolves", "rejects"} {
		m[name] = func(goja.FunctionCall) goja.Value {
			panic(r.notSupported("expect(…)." + name + " — await the promise first"))
		}
	}
}

func isNumber(v goja.Value) bool {
	switch v.Export().(type) {
	case int64, float64:
		return true
	}
	return false
}

// items lists the elements of an array (or of any iterable's Array.from).
func (r *run) items(v goja.Value) []goja.Value {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	if o.ClassName() != "Array" {
		from, _ := goja.AssertFunction(r.vm.Get("Array").(*goja.Object).Get("from"))
		a, err := from(goja.Undefined(), o)
		if err != nil {
			return nil
		}
		o = a.(*goja.Object)
	}
	var out []goja.Value
	for _, k := range o.Keys() {
		out = append(out, o.Get(k))
	}
	return out
}

// propertyPath reads toHaveProperty's path: "a.b[0]" or ["a", "b"].
func (r *run) propertyPath(v goja.Value) []string {
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Array" {
		var out []string
		for _, it := range r.items(o) {
			out = append(out, it.String())
		}
		return out
	}
	s := strings.NewReplacer("[", ".", "]", "").Replace(v.String())
	return strings.Split(s, ".")
}

// matchesObject is toMatchObject: every property of expected is in v, recursively.
func (r *run) matchesObject(v, expected goja.Value) bool {
	eo, ok := expected.(*goja.Object)
	vo, vok := v.(*goja.Object)
	if !ok || !vok {
		return r.equals(v, expected, false)
	}
	if eo.ClassName() == "Array" {
		ei, vi := r.items(eo), r.items(vo)
		if len(ei) != len(vi) {
			return false
		}
		for i := range ei {
			if !r.matchesObject(vi[i], ei[i]) {
				return false
			}
		}
		return true
	}
	for _, k := range eo.Keys() {
		got := vo.Get(k)
		if got == nil || !r.matchesObject(got, eo.Get(k)) {
			return false
		}
	}
	return true
}
