package pwscript

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/dop251/goja"
)

// pointArg is what the engine's point operation checks before an input event.
type pointArg struct {
	Enabled bool      `json:"enabled"`
	Force   bool      `json:"force"`
	Pos     *position `json:"pos,omitempty"`
}

type position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// opFunc is an operation's work, run off the loop.
type opFunc func(ctx context.Context) (any, error)

// addActions adds the actions and reads of a locator.
func (r *run) addActions(m map[string]any, l *locator) {
	// op builds a method: prep runs on the loop (reading arguments), its result off it.
	op := func(name string, prep func(call goja.FunctionCall, method string) opFunc) func(goja.FunctionCall) goja.Value {
		method := "locator." + name
		return func(call goja.FunctionCall) goja.Value {
			return r.async(method+"("+l.desc+")", "pw:api", prep(call, method))
		}
	}
	m["click"] = op("click", func(call goja.FunctionCall, method string) opFunc {
		return r.clickOp(l, method, r.options(r.argObject(call, 0, method), method, "button", "clickCount", "delay", "force", "modifiers", "position", "timeout", "trial", "noWaitAfter"), 1)
	})
	m["dblclick"] = op("dblclick", func(call goja.FunctionCall, method string) opFunc {
		return r.clickOp(l, method, r.options(r.argObject(call, 0, method), method, "button", "delay", "force", "modifiers", "position", "timeout", "trial", "noWaitAfter"), 2)
	})
	m["hover"] = op("hover", func(call goja.FunctionCall, method string) opFunc {
		opts := r.options(r.argObject(call, 0, method), method, "force", "modifiers", "position", "timeout", "trial", "noWaitAfter")
		b := r.actionBudget(opts)
		arg := pointArg{Force: opts["force"] != nil && opts["force"].ToBoolean(), Pos: r.positionOpt(opts)}
		trial := opts["trial"] != nil && opts["trial"].ToBoolean()
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			res, err := r.resolveOne(ctx, b, own, l, method, "point", arg, "", nil)
			if err != nil || trial {
				return nil, err
			}
			var pt position
			_ = json.Unmarshal(res.V, &pt)
			return nil, timedOut(ctx, r.browser.mouseMove(ctx, pt.X, pt.Y), method, b, own)
		}
	})
	fill := func(call goja.FunctionCall, method string, value string, opts map[string]goja.Value) opFunc {
		b := r.actionBudget(opts)
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			res, err := r.resolveOne(ctx, b, own, l, method, "fill", value, "", nil)
			if err != nil {
				return nil, err
			}
			var how string
			_ = json.Unmarshal(res.V, &how)
			if how != "type" {
				return nil, nil
			}
			if value == "" {
				err = r.browser.pressKey(ctx, "Delete")
			} else {
				err = r.browser.insertText(ctx, value)
			}
			return nil, timedOut(ctx, err, method, b, own)
		}
	}
	m["fill"] = op("fill", func(call goja.FunctionCall, method string) opFunc {
		value := r.argString(call, 0, method, "value")
		return fill(call, method, value, r.options(r.argObject(call, 1, method), method, "force", "timeout", "noWaitAfter"))
	})
	m["clear"] = op("clear", func(call goja.FunctionCall, method string) opFunc {
		return fill(call, method, "", r.options(r.argObject(call, 0, method), method, "force", "timeout", "noWaitAfter"))
	})
	keys := func(call goja.FunctionCall, method string, sequential bool) opFunc {
		text := r.argString(call, 0, method, "key")
		opts := r.options(r.argObject(call, 1, method), method, "delay", "timeout", "noWaitAfter")
		b := r.actionBudget(opts)
		delay := time.Duration(0)
		if d, ok := opts["delay"]; ok {
			delay = time.Duration(d.ToFloat() * float64(time.Millisecond))
		}
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			if _, err := r.resolveOne(ctx, b, own, l, method, "focus", nil, "", nil); err != nil {
				return nil, err
			}
			before := r.browser.navState()
			var err error
			if sequential {
				err = r.browser.typeText(ctx, text, func() error { return sleep(ctx, delay) })
			} else {
				err = r.browser.pressKey(ctx, text)
			}
			if err == nil {
				err = r.browser.settleNavigation(ctx, before)
			}
			return nil, timedOut(ctx, err, method, b, own)
		}
	}
	m["press"] = op("press", func(call goja.FunctionCall, method string) opFunc { return keys(call, method, false) })
	m["pressSequentially"] = op("pressSequentially", func(call goja.FunctionCall, method string) opFunc { return keys(call, method, true) })
	m["type"] = op("type", func(call goja.FunctionCall, method string) opFunc { return keys(call, method, true) })
	setChecked := func(method string, want bool, opts map[string]goja.Value) opFunc {
		click := r.clickOp(l, method, opts, 1)
		b := r.actionBudget(opts)
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			state := func() (bool, error) {
				res, err := r.resolveOne(ctx, b, own, l, method, "read", map[string]string{"k": "checked"}, "", nil)
				if err != nil {
					return false, err
				}
				var v bool
				_ = json.Unmarshal(res.V, &v)
				return v, nil
			}
			v, err := state()
			if err != nil || v == want {
				return nil, err
			}
			if _, err := click(ctx); err != nil {
				return nil, err
			}
			if v, err = state(); err != nil {
				return nil, err
			}
			if v != want {
				return nil, opErr(CauseAssertion, "%s: Clicking the checkbox did not change its state", method)
			}
			return nil, nil
		}
	}
	checkOpts := []string{"force", "position", "timeout", "trial", "noWaitAfter"}
	m["check"] = op("check", func(call goja.FunctionCall, method string) opFunc {
		return setChecked(method, true, r.options(r.argObject(call, 0, method), method, checkOpts...))
	})
	m["uncheck"] = op("uncheck", func(call goja.FunctionCall, method string) opFunc {
		return setChecked(method, false, r.options(r.argObject(call, 0, method), method, checkOpts...))
	})
	m["setChecked"] = op("setChecked", func(call goja.FunctionCall, method string) opFunc {
		return setChecked(method, call.Argument(0).ToBoolean(), r.options(r.argObject(call, 1, method), method, checkOpts...))
	})
	m["selectOption"] = op("selectOption", func(call goja.FunctionCall, method string) opFunc {
		wanted := r.selectValues(call.Argument(0), method)
		b := r.actionBudget(r.options(r.argObject(call, 1, method), method, "force", "timeout", "noWaitAfter"))
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			res, err := r.resolveOne(ctx, b, own, l, method, "select", wanted, "", nil)
			if err != nil {
				return nil, err
			}
			return jsonResult(res.V), nil
		}
	})
	simple := func(name, engineOp string, arg func(call goja.FunctionCall) any, optsAt int) {
		m[name] = op(name, func(call goja.FunctionCall, method string) opFunc {
			var a any
			if arg != nil {
				a = arg(call)
			}
			b := r.actionBudget(r.options(r.argObject(call, optsAt, method), method, "timeout"))
			return func(ctx context.Context) (any, error) {
				ctx, cancel, own := b.bound(ctx)
				defer cancel()
				_, err := r.resolveOne(ctx, b, own, l, method, engineOp, a, "", nil)
				return nil, err
			}
		})
	}
	simple("focus", "focus", nil, 0)
	simple("blur", "blur", nil, 0)
	simple("scrollIntoViewIfNeeded", "scroll", nil, 0)
	simple("dispatchEvent", "dispatch", func(call goja.FunctionCall) any { return r.argString(call, 0, "locator.dispatchEvent", "type") }, 2)
	r.addReads(m, l, op)
}

// clickOp clicks the element count times after the actionability checks, then waits for a
// navigation the click started to commit.
func (r *run) clickOp(l *locator, method string, opts map[string]goja.Value, count int) opFunc {
	b := r.actionBudget(opts)
	arg := pointArg{Enabled: true, Force: opts["force"] != nil && opts["force"].ToBoolean(), Pos: r.positionOpt(opts)}
	button := input.MouseButtonLeft
	if v, ok := opts["button"]; ok {
		button = input.MouseButton(v.String())
	}
	if v, ok := opts["clickCount"]; ok {
		count = int(v.ToInteger())
	}
	var mods int64
	if v, ok := opts["modifiers"]; ok {
		var names []string
		_ = r.vm.ExportTo(v, &names)
		for _, n := range names {
			mods |= modifierBits[n]
		}
	}
	trial := opts["trial"] != nil && opts["trial"].ToBoolean()
	return func(ctx context.Context) (any, error) {
		ctx, cancel, own := b.bound(ctx)
		defer cancel()
		var pt position
		// Move the mouse to the element first: hover effects can move it (a menu that closes
		// when the mouse leaves it), so the point is taken again until it holds still.
		for attempt := 0; ; attempt++ {
			res, err := r.resolveOne(ctx, b, own, l, method, "point", arg, "", nil)
			if err != nil || trial {
				return nil, err
			}
			var p position
			_ = json.Unmarshal(res.V, &p)
			if attempt > 0 && (math.Abs(p.X-pt.X) < 1 && math.Abs(p.Y-pt.Y) < 1 || attempt == 3) {
				pt = p
				break
			}
			pt = p
			if err := r.browser.mouseMove(ctx, pt.X, pt.Y); err != nil {
				return nil, timedOut(ctx, err, method, b, own)
			}
		}
		before := r.browser.navState()
		err := r.browser.mouseClick(ctx, pt.X, pt.Y, button, count, mods)
		if err == nil {
			err = r.browser.settleNavigation(ctx, before)
		}
		return nil, timedOut(ctx, err, method, b, own)
	}
}

func (r *run) positionOpt(opts map[string]goja.Value) *position {
	v, ok := opts["position"]
	if !ok {
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok || o.Get("x") == nil || o.Get("y") == nil {
		panic(r.typeError("position: expected { x, y }"))
	}
	return &position{X: o.Get("x").ToFloat(), Y: o.Get("y").ToFloat()}
}

// selectWanted is one option selectOption looks for.
type selectWanted struct {
	Value *string `json:"value,omitempty"`
	Label *string `json:"label,omitempty"`
	Index *int    `json:"index,omitempty"`
	Any   *string `json:"any,omitempty"` // a plain string: the value or the label
}

func (r *run) selectValues(v goja.Value, method string) []selectWanted {
	if goja.IsNull(v) || goja.IsUndefined(v) {
		return []selectWanted{}
	}
	one := func(v goja.Value) selectWanted {
		if s, ok := v.Export().(string); ok {
			return selectWanted{Any: &s}
		}
		o, ok := v.(*goja.Object)
		if !ok {
			panic(r.typeError("%s: expected a string, an { value, label, index } object or an array of them", method))
		}
		var w selectWanted
		if x := o.Get("value"); x != nil && !goja.IsUndefined(x) {
			s := x.String()
			w.Value = &s
		}
		if x := o.Get("label"); x != nil && !goja.IsUndefined(x) {
			s := x.String()
			w.Label = &s
		}
		if x := o.Get("index"); x != nil && !goja.IsUndefined(x) {
			i := int(x.ToInteger())
			w.Index = &i
		}
		return w
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Array" {
		var out []selectWanted
		for _, k := range o.Keys() {
			out = append(out, one(o.Get(k)))
		}
		return out
	}
	return []selectWanted{one(v)}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
