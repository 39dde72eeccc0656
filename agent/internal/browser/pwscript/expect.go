package pwscript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// expectFunction builds `expect`.
func (r *run) expectFunction() *goja.Object {
	fn := func(call goja.FunctionCall) goja.Value {
		custom := ""
		if s, ok := call.Argument(1).Export().(string); ok {
			custom = s
		}
		return r.expectation(call.Argument(0), custom)
	}
	target := r.vm.ToValue(fn).(*goja.Object)
	if r.expectObj == nil {
		// One expect per run, so that expect.extend's matchers are everyone's.
		r.expectObj = r.expectAPI(r.strict("expect", target)).(*goja.Object)
	}
	return r.expectObj
}

// expectation is what expect(value) returns: the web-first matchers when value is a locator
// or the page, and the value matchers always; `.not` negates.
func (r *run) expectation(v goja.Value, custom string) goja.Value {
	build := func(negated bool) map[string]any {
		m := map[string]any{}
		r.addValueMatchers(m, v, custom, negated)
		if o, ok := v.(*goja.Object); ok {
			if l, ok := r.locators[o]; ok {
				r.addLocatorMatchers(m, l, custom, negated)
			} else if o == r.pageObj {
				r.addPageMatchers(m, custom, negated)
			} else if a := r.apiResponseOf(o); a != nil {
				r.addResponseMatchers(m, a, custom, negated)
			}
		}
		return m
	}
	notM := build(true)
	m := build(false)
	m["not"] = r.object("expect(received).not", notM)
	return r.object("expect(received)", m)
}

// webCheck looks once: whether the matcher holds, what was received (for the message). A
// check that found no element returns received "": the matcher then holds neither way, as
// in Playwright (expect(missing).not.toHaveText('x') fails too).
type webCheck func(ctx context.Context) (pass bool, received string, err error)

// notFound is what a matcher for which a missing element is an answer (toBeVisible,
// toBeHidden) received.
const notFound = "<element(s) not found>"

// matcherSpec describes a web-first matcher for its message.
type matcherSpec struct {
	subject  string // "locator" or "page"
	loc      *locator
	name     string // "toHaveText"
	args     string // "expected" or ""
	expected string // `"Welcome"`, `visible`; "" when the matcher has no expected line
	custom   string
	negated  bool
}

func (s matcherSpec) header() string {
	not := ""
	if s.negated {
		not = "not."
	}
	h := fmt.Sprintf("expect(%s).%s%s(%s) failed", s.subject, not, s.name, s.args)
	if s.custom != "" {
		h = s.custom + "\n\n" + h
	}
	return h
}

// webFirst runs a web-first assertion: check is retried until it passes (or, negated, fails)
// or the timeout passes.
func (r *run) webFirst(spec matcherSpec, opts map[string]goja.Value, check webCheck) goja.Value {
	b := r.expectBudget(opts)
	subject := "page"
	if spec.loc != nil {
		subject = spec.loc.desc
	}
	not := ""
	if spec.negated {
		not = "not."
	}
	title := fmt.Sprintf("expect(%s).%s%s()", subject, not, spec.name)
	return r.async(title, "expect", func(ctx context.Context) (any, error) {
		ctx, cancel, own := b.bound(ctx)
		defer cancel()
		received := ""
		err := poll(ctx, func() (bool, error) {
			pass, rec, err := check(ctx)
			if transient(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			received = rec
			return rec != "" && pass != spec.negated, nil
		})
		if err == nil {
			return nil, nil
		}
		var msg strings.Builder
		msg.WriteString(spec.header())
		msg.WriteString("\n\n")
		if spec.loc != nil {
			fmt.Fprintf(&msg, "Locator: %s\n", spec.loc.desc)
		}
		var oe *opError
		if errors.As(err, &oe) && ctx.Err() == nil {
			fmt.Fprintf(&msg, "Error: %s", oe.msg)
			return nil, opErr(oe.cause, "%s", msg.String())
		}
		if ctx.Err() == nil {
			return nil, pageError(title, err)
		}
		if spec.expected != "" {
			if spec.negated {
				fmt.Fprintf(&msg, "Expected: not %s\n", spec.expected)
			} else {
				fmt.Fprintf(&msg, "Expected: %s\n", spec.expected)
			}
		}
		if received != "" && received != notFound {
			fmt.Fprintf(&msg, "Received: %s\n", received)
		}
		if own {
			fmt.Fprintf(&msg, "Timeout: %dms\n", b.own.Milliseconds())
		} else {
			fmt.Fprintf(&msg, "%s\n", b.exceeded(false))
		}
		if received == "" || received == notFound {
			msg.WriteString("Error: element(s) not found\n")
		}
		negation := ""
		if spec.negated {
			negation = "not "
		}
		// Playwright's call log names the matcher here and the locator on the next line.
		fmt.Fprintf(&msg, "\nCall log:\n  - Expect \"%s%s\" with timeout %dms", negation, spec.name, b.own.Milliseconds())
		if spec.loc != nil {
			fmt.Fprintf(&msg, "\n  - waiting for %s", spec.loc.desc)
		}
		return nil, opErr(CauseAssertion, "%s", msg.String())
	})
}

// readOne reads a property of the single element l matches: found is false when it matches
// none; several is a strict mode violation.
func (r *run) readOne(ctx context.Context, l *locator, arg map[string]string) (found bool, v json.RawMessage, err error) {
	res, err := r.browser.query(ctx, l, "read", arg, "", nil)
	if err != nil {
		var pe *pageException
		if errors.As(err, &pe) {
			return false, nil, opErr(CauseScript, "%s", pe.text)
		}
		return false, nil, err
	}
	if res.N > 1 {
		return false, nil, opErr(CauseAssertion, "%s", strictViolation(l, res))
	}
	return res.N == 1, res.V, nil
}

// addLocatorMatchers adds the web-first matchers of expect(locator).
func (r *run) addLocatorMatchers(m map[string]any, l *locator, custom string, negated bool) {
	spec := func(name, args, expected string) matcherSpec {
		return matcherSpec{subject: "locator", loc: l, name: name, args: args, expected: expected, custom: custom, negated: negated}
	}
	r.addAriaMatchers(m, l, custom, negated)
	state := func(name, kind, yes, no string, want bool) {
		m[name] = func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 0, name), "expect(locator)."+name, "timeout", "visible", "checked", "editable", "enabled", "attached")
			w := want
			for _, k := range []string{"visible", "checked", "editable", "enabled", "attached"} {
				if v, ok := opts[k]; ok {
					w = v.ToBoolean() == want
				}
			}
			expected := yes
			if !w {
				expected = no
			}
			return r.webFirst(spec(name, "", expected), opts, func(ctx context.Context) (bool, string, error) {
				found, v, err := r.readOne(ctx, l, map[string]string{"k": kind})
				if err != nil {
					return false, "", err
				}
				if !found {
					if kind == "visible" {
						return !w, notFound, nil // no element is hidden, and not visible
					}
					return false, "", nil
				}
				var b bool
				_ = json.Unmarshal(v, &b)
				rec := no
				if b {
					rec = yes
				}
				return b == w, rec, nil
			})
		}
	}
	state("toBeVisible", "visible", "visible", "hidden", true)
	state("toBeHidden", "visible", "visible", "hidden", false)
	state("toBeEnabled", "enabled", "enabled", "disabled", true)
	state("toBeDisabled", "enabled", "enabled", "disabled", false)
	state("toBeChecked", "checked", "checked", "unchecked", true)
	state("toBeEditable", "editable", "editable", "readonly", true)
	state("toBeFocused", "focused", "focused", "inactive", true)
	m["toBeAttached"] = func(call goja.FunctionCall) goja.Value {
		opts := r.options(r.argObject(call, 0, "toBeAttached"), "expect(locator).toBeAttached", "timeout", "attached")
		want := opts["attached"] == nil || opts["attached"].ToBoolean()
		expected := map[bool]string{true: "attached", false: "detached"}[want]
		return r.webFirst(spec("toBeAttached", "", expected), opts, func(ctx context.Context) (bool, string, error) {
			res, err := r.browser.query(ctx, l, "count", nil, "", nil)
			if err != nil {
				return false, "", err
			}
			if res.N > 1 {
				return false, "", opErr(CauseAssertion, "%s", strictViolation(l, &queryResult{N: res.N}))
			}
			return (res.N == 1) == want, map[bool]string{true: "attached", false: "detached"}[res.N == 1], nil
		})
	}
	m["toHaveCount"] = func(call goja.FunctionCall) goja.Value {
		want := int(call.Argument(0).ToInteger())
		opts := r.options(r.argObject(call, 1, "toHaveCount"), "expect(locator).toHaveCount", "timeout")
		return r.webFirst(spec("toHaveCount", "expected", fmt.Sprint(want)), opts, func(ctx context.Context) (bool, string, error) {
			res, err := r.browser.query(ctx, l, "count", nil, "", nil)
			if err != nil {
				return false, "", err
			}
			return res.N == want, fmt.Sprint(res.N), nil
		})
	}
	text := func(name string, substring bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 1, name), "expect(locator)."+name, "timeout", "useInnerText", "ignoreCase")
			kind := "textContent"
			if v, ok := opts["useInnerText"]; ok && v.ToBoolean() {
				kind = "innerText"
			}
			ignoreCase := opts["ignoreCase"] != nil && opts["ignoreCase"].ToBoolean()
			if arr, ok := call.Argument(0).(*goja.Object); ok && arr.ClassName() == "Array" {
				var want []*textMatch
				var shown []string
				for _, k := range arr.Keys() {
					tm := r.textArg(arr.Get(k), "expect(locator)."+name)
					want = append(want, tm)
					shown = append(shown, tm.expected())
				}
				return r.webFirst(spec(name, "expected", "["+strings.Join(shown, ", ")+"]"), opts, func(ctx context.Context) (bool, string, error) {
					res, err := r.browser.query(ctx, l, "all", map[string]string{"k": kind}, "", nil)
					if err != nil {
						return false, "", err
					}
					var got []string
					_ = json.Unmarshal(res.V, &got)
					rec := make([]string, len(got))
					for i, g := range got {
						rec[i] = quote(g)
					}
					received := "[" + strings.Join(rec, ", ") + "]"
					if len(got) != len(want) {
						return false, received, nil
					}
					for i := range got {
						if !want[i].expectText(got[i], substring, ignoreCase) {
							return false, received, nil
						}
					}
					return true, received, nil
				})
			}
			tm := r.textArg(call.Argument(0), "expect(locator)."+name)
			return r.webFirst(spec(name, "expected", tm.expected()), opts, func(ctx context.Context) (bool, string, error) {
				found, v, err := r.readOne(ctx, l, map[string]string{"k": kind})
				if err != nil || !found {
					return false, "", err
				}
				var got string
				_ = json.Unmarshal(v, &got)
				return tm.expectText(got, substring, ignoreCase), quote(got), nil
			})
		}
	}
	m["toHaveText"] = text("toHaveText", false)
	m["toContainText"] = text("toContainText", true)
	value := func(name string, arg func(call goja.FunctionCall) (map[string]string, *textMatch, int)) {
		m[name] = func(call goja.FunctionCall) goja.Value {
			read, tm, optsAt := arg(call)
			opts := r.options(r.argObject(call, optsAt, name), "expect(locator)."+name, "timeout", "ignoreCase")
			ignoreCase := opts["ignoreCase"] != nil && opts["ignoreCase"].ToBoolean()
			expected := "present"
			if tm != nil {
				expected = tm.expected()
			}
			return r.webFirst(spec(name, "expected", expected), opts, func(ctx context.Context) (bool, string, error) {
				found, v, err := r.readOne(ctx, l, read)
				if err != nil || !found {
					return false, "", err
				}
				var got *string
				_ = json.Unmarshal(v, &got)
				if got == nil {
					return false, "null", nil
				}
				if tm == nil {
					return true, "present", nil
				}
				return tm.expectValue(*got, ignoreCase), quote(*got), nil
			})
		}
	}
	value("toHaveValue", func(call goja.FunctionCall) (map[string]string, *textMatch, int) {
		return map[string]string{"k": "inputValue"}, r.textArg(call.Argument(0), "toHaveValue"), 1
	})
	value("toHaveAttribute", func(call goja.FunctionCall) (map[string]string, *textMatch, int) {
		name := r.argString(call, 0, "toHaveAttribute", "name")
		if goja.IsUndefined(call.Argument(1)) {
			return map[string]string{"k": "attr", "name": name}, nil, 1
		}
		if _, isOpts := call.Argument(1).(*goja.Object); isOpts && !r.isRegExp(call.Argument(1)) {
			return map[string]string{"k": "attr", "name": name}, nil, 1
		}
		return map[string]string{"k": "attr", "name": name}, r.textArg(call.Argument(1), "toHaveAttribute"), 2
	})
	value("toHaveId", func(call goja.FunctionCall) (map[string]string, *textMatch, int) {
		return map[string]string{"k": "attr", "name": "id"}, r.textArg(call.Argument(0), "toHaveId"), 1
	})
	value("toHaveClass", func(call goja.FunctionCall) (map[string]string, *textMatch, int) {
		return map[string]string{"k": "attr", "name": "class"}, r.textArg(call.Argument(0), "toHaveClass"), 1
	})
}

func (r *run) isRegExp(v goja.Value) bool {
	_, ok := r.regexpOf(v)
	return ok
}

// addPageMatchers adds expect(page).toHaveTitle and toHaveURL.
func (r *run) addPageMatchers(m map[string]any, custom string, negated bool) {
	spec := func(name, expected string) matcherSpec {
		return matcherSpec{subject: "page", name: name, args: "expected", expected: expected, custom: custom, negated: negated}
	}
	m["toHaveTitle"] = func(call goja.FunctionCall) goja.Value {
		tm := r.textArg(call.Argument(0), "toHaveTitle")
		opts := r.options(r.argObject(call, 1, "toHaveTitle"), "expect(page).toHaveTitle", "timeout")
		return r.webFirst(spec("toHaveTitle", tm.expected()), opts, func(ctx context.Context) (bool, string, error) {
			v, err := r.browser.evaluate(ctx, "document.title")
			if err != nil {
				return false, "", err
			}
			var got string
			_ = json.Unmarshal(v, &got)
			return tm.expectText(got, false, false), quote(got), nil
		})
	}
	m["toHaveURL"] = func(call goja.FunctionCall) goja.Value {
		tm := r.urlMatcher(call.Argument(0), "expect(page).toHaveURL", false)
		opts := r.options(r.argObject(call, 1, "toHaveURL"), "expect(page).toHaveURL", "timeout", "ignoreCase")
		ignoreCase := opts["ignoreCase"] != nil && opts["ignoreCase"].ToBoolean()
		return r.webFirst(spec("toHaveURL", tm.expected()), opts, func(ctx context.Context) (bool, string, error) {
			got := r.browser.currentURL()
			return tm.expectValue(got, ignoreCase), quote(got), nil
		})
	}
}

// expected prints the match for an "Expected:" line.
func (m *textMatch) expected() string {
	if m.isRe && m.S == "" {
		return "/" + m.Re + "/" + m.Flags
	}
	return quote(m.S)
}

// expectText is toHaveText's (substring false) and toContainText's (true) comparison:
// strings compare with white space normalized, a RegExp is tested against the text.
func (m *textMatch) expectText(got string, substring, ignoreCase bool) bool {
	if m.isRe {
		return m.testRegexp(got, ignoreCase)
	}
	g, w := normalizeSpace(got), normalizeSpace(m.S)
	if ignoreCase {
		g, w = strings.ToLower(g), strings.ToLower(w)
	}
	if substring {
		return strings.Contains(g, w)
	}
	return g == w
}

// expectValue compares a value exactly (toHaveValue, toHaveAttribute, toHaveURL).
func (m *textMatch) expectValue(got string, ignoreCase bool) bool {
	if m.isRe {
		return m.testRegexp(got, ignoreCase)
	}
	if ignoreCase {
		return strings.EqualFold(got, m.S)
	}
	return got == m.S
}

func (m *textMatch) testRegexp(s string, ignoreCase bool) bool {
	c := *m
	if ignoreCase && !strings.Contains(c.Flags, "i") {
		c.Flags += "i"
	}
	re, err := c.regexp()
	if err != nil {
		return false
	}
	ok, _ := re.MatchString(s)
	return ok
}
