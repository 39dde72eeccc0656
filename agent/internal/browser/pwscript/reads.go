package pwscript

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"
)

// addReads adds the locator methods that read the page.
func (r *run) addReads(m map[string]any, l *locator, op func(string, func(goja.FunctionCall, string) opFunc) func(goja.FunctionCall) goja.Value) {
	// waited reads wait (up to the action timeout) for the single element, as Playwright's do.
	waited := func(name, kind string, convert func(json.RawMessage) any) {
		m[name] = op(name, func(call goja.FunctionCall, method string) opFunc {
			arg := map[string]string{"k": kind}
			optsAt := 0
			if kind == "attr" {
				arg["name"] = r.argString(call, 0, method, "name")
				optsAt = 1
			}
			b := r.actionBudget(r.options(r.argObject(call, optsAt, method), method, "timeout"))
			return func(ctx context.Context) (any, error) {
				ctx, cancel, own := b.bound(ctx)
				defer cancel()
				res, err := r.resolveOne(ctx, b, own, l, method, "read", arg, "", nil)
				if err != nil {
					return nil, err
				}
				return convert(res.V), nil
			}
		})
	}
	raw := func(v json.RawMessage) any {
		if len(v) == 0 {
			return jsonResult("null")
		}
		return jsonResult(v)
	}
	not := func(v json.RawMessage) any {
		var b bool
		_ = json.Unmarshal(v, &b)
		return !b
	}
	waited("textContent", "textContent", raw)
	waited("innerText", "innerText", raw)
	waited("innerHTML", "innerHTML", raw)
	waited("inputValue", "inputValue", raw)
	waited("getAttribute", "attr", raw)
	waited("boundingBox", "box", raw)
	waited("isEnabled", "enabled", raw)
	waited("isDisabled", "enabled", not)
	waited("isChecked", "checked", raw)
	waited("isEditable", "editable", raw)

	// immediate reads look once.
	once := func(name string, prep func(call goja.FunctionCall, method string) (string, any, func(*queryResult) (any, error))) {
		m[name] = op(name, func(call goja.FunctionCall, method string) opFunc {
			engineOp, arg, convert := prep(call, method)
			return func(ctx context.Context) (any, error) {
				for {
					res, err := r.browser.query(ctx, l, engineOp, arg, "", nil)
					if transient(err) {
						if err := sleep(ctx, pollDelays[1]); err != nil {
							return nil, err
						}
						continue
					}
					if err != nil {
						return nil, pageError(method, err)
					}
					return convert(res)
				}
			}
		})
	}
	once("count", func(goja.FunctionCall, string) (string, any, func(*queryResult) (any, error)) {
		return "count", nil, func(res *queryResult) (any, error) { return res.N, nil }
	})
	visible := func(want bool) func(goja.FunctionCall, string) (string, any, func(*queryResult) (any, error)) {
		return func(_ goja.FunctionCall, method string) (string, any, func(*queryResult) (any, error)) {
			return "read", map[string]string{"k": "visible"}, func(res *queryResult) (any, error) {
				switch {
				case res.N > 1:
					return nil, opErr(CauseAssertion, "%s: Error: %s", method, strictViolation(l, res))
				case res.N == 0:
					return !want, nil
				}
				var v bool
				_ = json.Unmarshal(res.V, &v)
				return v == want, nil
			}
		}
	}
	once("isVisible", visible(true))
	once("isHidden", visible(false))
	all := func(kind string) func(goja.FunctionCall, string) (string, any, func(*queryResult) (any, error)) {
		return func(goja.FunctionCall, string) (string, any, func(*queryResult) (any, error)) {
			return "all", map[string]string{"k": kind}, func(res *queryResult) (any, error) { return jsonResult(res.V), nil }
		}
	}
	once("allTextContents", all("textContent"))
	once("allInnerTexts", all("innerText"))
	once("all", func(goja.FunctionCall, string) (string, any, func(*queryResult) (any, error)) {
		return "count", nil, func(res *queryResult) (any, error) {
			n := res.N
			return jsResult(func() goja.Value {
				items := make([]any, n)
				for i := range n {
					items[i] = r.locatorObject(l.with(fmt.Sprintf("nth(%d)", i), selStep{Kind: "nth", Index: i}))
				}
				return r.vm.NewArray(items...)
			}), nil
		}
	})

	m["waitFor"] = op("waitFor", func(call goja.FunctionCall, method string) opFunc {
		opts := r.options(r.argObject(call, 0, method), method, "state", "timeout")
		state := "visible"
		if s, ok := opts["state"]; ok {
			state = s.String()
		}
		switch state {
		case "attached", "detached", "visible", "hidden":
		default:
			panic(r.typeError("%s: state: expected attached, detached, visible or hidden, got %q", method, state))
		}
		b := r.actionBudget(opts)
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			log := &callLog{}
			log.add(fmt.Sprintf("waiting for %s to be %s", l.desc, state))
			err := poll(ctx, func() (bool, error) {
				res, err := r.browser.query(ctx, l, "read", map[string]string{"k": "visible"}, "", nil)
				if transient(err) {
					return false, nil
				}
				if err != nil {
					return false, pageError(method, err)
				}
				if res.N > 1 && state != "detached" {
					return false, opErr(CauseAssertion, "%s: Error: %s", method, strictViolation(l, res))
				}
				var vis bool
				_ = json.Unmarshal(res.V, &vis)
				switch state {
				case "attached":
					return res.N >= 1, nil
				case "detached":
					return res.N == 0, nil
				case "visible":
					return res.N == 1 && vis, nil
				default:
					return res.N == 0 || !vis, nil
				}
			})
			if err != nil && ctx.Err() != nil {
				return nil, opErr(CauseTimeout, "%s: %s%s", method, b.exceeded(own), log)
			}
			return nil, err
		}
	})

	m["evaluate"] = op("evaluate", func(call goja.FunctionCall, method string) opFunc {
		r.argFunc(call, 0, method, "pageFunction")
		src := functionSource(call.Argument(0))
		arg, err := r.toJSON(call.Argument(1))
		if err != nil {
			panic(r.typeError("%s: the argument cannot be serialized: %v", method, err))
		}
		b := r.actionBudget(r.options(r.argObject(call, 2, method), method, "timeout"))
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			res, err := r.resolveOne(ctx, b, own, l, method, "element", nil, src, arg)
			if err != nil {
				return nil, err
			}
			return jsonResult(res.V), nil
		}
	})
}
