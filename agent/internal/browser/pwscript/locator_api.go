package pwscript

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// locatorObject returns the script's object for l. Every locator method resolves l anew.
func (r *run) locatorObject(l *locator) *goja.Object {
	m := map[string]any{}
	r.addLocatorBuilders(m, l)
	nth := func(i int, desc string) *goja.Object {
		return r.locatorObject(l.with(desc, selStep{Kind: "nth", Index: i}))
	}
	m["first"] = func(goja.FunctionCall) goja.Value { return nth(0, "first()") }
	m["last"] = func(goja.FunctionCall) goja.Value { return nth(-1, "last()") }
	m["nth"] = func(call goja.FunctionCall) goja.Value {
		i := int(call.Argument(0).ToInteger())
		return nth(i, fmt.Sprintf("nth(%d)", i))
	}
	m["filter"] = func(call goja.FunctionCall) goja.Value {
		step, desc := r.filterStep(r.argObject(call, 0, "locator.filter"), "locator.filter", true)
		return r.locatorObject(l.with("filter("+desc+")", step))
	}
	m["and"] = func(call goja.FunctionCall) goja.Value {
		o := r.locatorArg(call.Argument(0), "locator.and")
		return r.locatorObject(l.with("and("+o.desc+")", selStep{Kind: "and", Other: o.steps}))
	}
	m["or"] = func(call goja.FunctionCall) goja.Value {
		o := r.locatorArg(call.Argument(0), "locator.or")
		return r.locatorObject(l.with("or("+o.desc+")", selStep{Kind: "or", Other: o.steps}))
	}
	m["toString"] = func(goja.FunctionCall) goja.Value { return r.vm.ToValue(l.desc) }
	m["page"] = func(goja.FunctionCall) goja.Value { return r.pageObj }
	m["contentFrame"] = func(goja.FunctionCall) goja.Value { return r.frameLocatorObject(l) }
	r.addActions(m, l)
	r.addLocatorExtras(m, l)
	r.addAria(m, l)
	r.addLocatorScreenshot(m, l)
	obj := r.object("locator", m)
	r.locators[obj] = l
	return obj
}

// locatorArg returns the locator behind a script value, or throws.
func (r *run) locatorArg(v goja.Value, fn string) *locator {
	if o, ok := v.(*goja.Object); ok {
		if l, ok := r.locators[o]; ok {
			return l
		}
	}
	panic(r.typeError("%s: expected a locator, got %s", fn, describeType(v)))
}

// addLocatorBuilders adds locator() and the getBy… methods, shared by page and locator: on
// a locator they search inside its elements.
func (r *run) addLocatorBuilders(m map[string]any, l *locator) {
	m["locator"] = func(call goja.FunctionCall) goja.Value {
		var child *locator
		if s, ok := call.Argument(0).Export().(string); ok {
			child = l.with("locator("+jsQuote(s)+")", r.parseSelector(s)...)
		} else {
			inner := r.locatorArg(call.Argument(0), "locator.locator")
			child = l.with("locator("+inner.desc+")", inner.steps...)
		}
		if o := r.argObject(call, 1, "locator"); o != nil {
			step, desc := r.filterStep(o, "locator", false)
			child = child.with("filter("+desc+")", step)
		}
		return r.locatorObject(child)
	}
	m["getByRole"] = func(call goja.FunctionCall) goja.Value {
		role := r.argString(call, 0, "getByRole", "role")
		opts := r.options(r.argObject(call, 1, "getByRole"), "getByRole", "name", "exact", "checked", "disabled", "expanded", "includeHidden", "level", "pressed", "selected")
		q := &axQuery{role: role, states: map[string]string{}}
		var parts []string
		for _, k := range []string{"checked", "disabled", "expanded", "includeHidden", "level", "name", "exact", "pressed", "selected"} {
			v, ok := opts[k]
			if !ok {
				continue
			}
			switch k {
			case "name":
				q.name = r.textArg(v, "getByRole")
				parts = append(parts, "name: "+q.name.String())
				continue
			case "exact":
				if q.name != nil && !q.name.isRe && v.ToBoolean() {
					q.name.Exact = true
					parts = append(parts, "exact: true")
				}
				continue
			case "includeHidden":
				q.includeHidden = v.ToBoolean()
			case "level":
				q.level = int(v.ToInteger())
			default:
				q.states[k] = fmt.Sprint(v.ToBoolean())
			}
			parts = append(parts, fmt.Sprintf("%s: %v", k, v.Export()))
		}
		desc := "getByRole(" + jsQuote(role)
		if len(parts) > 0 {
			desc += ", { " + strings.Join(parts, ", ") + " }"
		}
		return r.locatorObject(l.with(desc+")", selStep{Kind: "ax", ax: q}))
	}
	text := func(name string, build func(*textMatch) selStep) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			tm := r.textArg(call.Argument(0), name)
			opts := r.options(r.argObject(call, 1, name), name, "exact")
			suffix := r.exactOption(tm, opts)
			return r.locatorObject(l.with(name+"("+tm.String()+suffix+")", build(tm)))
		}
	}
	m["getByText"] = text("getByText", func(tm *textMatch) selStep { return selStep{Kind: "text", Match: tm} })
	m["getByLabel"] = text("getByLabel", func(tm *textMatch) selStep { return selStep{Kind: "ax", ax: &axQuery{label: true, name: tm}} })
	for name, attr := range map[string]string{"getByPlaceholder": "placeholder", "getByAltText": "alt", "getByTitle": "title"} {
		m[name] = text(name, func(tm *textMatch) selStep { return selStep{Kind: "attr", Attr: attr, Match: tm} })
	}
	m["getByTestId"] = func(call goja.FunctionCall) goja.Value {
		tm := r.textArg(call.Argument(0), "getByTestId")
		desc := "getByTestId(" + tm.String() + ")"
		if tm.isRe {
			return r.locatorObject(l.with(desc, selStep{Kind: "attr", Attr: r.opts.TestIDAttribute, Match: tm}))
		}
		return r.locatorObject(l.with(desc, selStep{Kind: "testid", Sel: tm.S}))
	}
	m["frameLocator"] = func(call goja.FunctionCall) goja.Value {
		sel := r.argString(call, 0, "frameLocator", "selector")
		return r.frameLocatorObject(l.with("locator("+jsQuote(sel)+")", r.parseSelector(sel)...))
	}
}

// filterStep reads filter options { hasText, hasNotText, has, hasNot, visible }.
func (r *run) filterStep(o *goja.Object, fn string, visible bool) (selStep, string) {
	known := []string{"hasText", "hasNotText", "has", "hasNot"}
	if visible {
		known = append(known, "visible")
	}
	opts := r.options(o, fn, known...)
	step := selStep{Kind: "filter"}
	var parts []string
	for _, k := range []string{"hasText", "hasNotText", "has", "hasNot", "visible"} {
		v, ok := opts[k]
		if !ok {
			continue
		}
		switch k {
		case "hasText":
			step.HasText = r.textArg(v, fn)
			parts = append(parts, "hasText: "+step.HasText.String())
		case "hasNotText":
			step.NoText = r.textArg(v, fn)
			parts = append(parts, "hasNotText: "+step.NoText.String())
		case "has":
			inner := r.locatorArg(v, fn)
			step.Has = inner.steps
			parts = append(parts, "has: "+inner.desc)
		case "hasNot":
			inner := r.locatorArg(v, fn)
			step.HasNot = inner.steps
			parts = append(parts, "hasNot: "+inner.desc)
		case "visible":
			b := v.ToBoolean()
			step.Visible = &b
			parts = append(parts, fmt.Sprintf("visible: %v", b))
		}
	}
	return step, "{ " + strings.Join(parts, ", ") + " }"
}
