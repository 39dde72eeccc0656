package pwscript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// evaluateExpression reads evaluate's (pageFunction, arg): a function called with the
// argument, or an expression.
func (r *run) evaluateExpression(call goja.FunctionCall, method string) string {
	fn := call.Argument(0)
	if _, isFn := goja.AssertFunction(fn); isFn {
		arg, err := r.toJSON(call.Argument(1))
		if err != nil {
			panic(r.typeError("%s: the argument cannot be serialized: %v", method, err))
		}
		if arg == nil {
			arg = json.RawMessage("undefined")
		}
		return "(" + fn.String() + ")(" + string(arg) + ")"
	}
	if _, ok := fn.Export().(string); !ok {
		panic(r.typeError("%s: expected a function or a string, got %s", method, describeType(fn)))
	}
	return fn.String()
}

// waitForSelectorFunc is waitForSelector(selector, { state, timeout }) from root (the page
// or a frame); it resolves to an ElementHandle, or null for the hidden and detached states.
// Puppeteer's { visible, hidden } are read as the states they mean, and { strict } is
// accepted, so that scripts written for either run.
func (r *run) waitForSelectorFunc(root *locator) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		sel := r.argString(call, 0, "waitForSelector", "selector")
		l := root.with("locator("+jsQuote(sel)+")", r.parseSelector(sel)...).with("first()", selStep{Kind: "nth", Index: 0})
		opts := r.options(r.argObject(call, 1, "waitForSelector"), "waitForSelector", "state", "timeout", "visible", "hidden", "strict")
		waitOpts := r.vm.NewObject()
		state := "visible"
		if v, ok := opts["state"]; ok {
			state = v.String()
		} else if v, ok := opts["hidden"]; ok && v.ToBoolean() {
			state = "hidden"
		}
		must(waitOpts.Set("state", state))
		if v, ok := opts["timeout"]; ok {
			must(waitOpts.Set("timeout", v))
		}
		obj := r.locatorObject(l)
		waitFor, _ := goja.AssertFunction(obj.Get("waitFor"))
		p, err := waitFor(obj, waitOpts)
		if err != nil {
			panic(err)
		}
		then, _ := goja.AssertFunction(p.(*goja.Object).Get("then"))
		out, err := then(p, r.vm.ToValue(func(goja.FunctionCall) goja.Value {
			if state == "hidden" || state == "detached" {
				return goja.Null()
			}
			return r.elementHandle(l)
		}))
		if err != nil {
			panic(err)
		}
		return out
	}
}

// elementHandle is the ElementHandle subset of page.$ and friends. It is a locator fixed to
// the element's place (the n-th match of its selector), resolved again by each call: the
// same element while the page does not reorder what the selector matches.
func (r *run) elementHandle(l *locator) *goja.Object {
	obj := r.locatorObject(l)
	m := map[string]any{}
	for _, k := range []string{"click", "dblclick", "fill", "press", "type", "hover", "check", "uncheck", "focus",
		"textContent", "innerText", "innerHTML", "getAttribute", "inputValue", "isVisible", "isHidden", "isChecked",
		"isEnabled", "isDisabled", "isEditable", "evaluate", "boundingBox", "selectOption", "scrollIntoViewIfNeeded",
		"setInputFiles", "selectText", "dispatchEvent"} {
		m[k] = obj.Get(k)
	}
	r.addHandleQueries(m, l)
	m["contentFrame"] = func(goja.FunctionCall) goja.Value { return r.resolved(goja.Null()) }
	m["dispose"] = func(goja.FunctionCall) goja.Value { return r.resolved(goja.Undefined()) }
	m["asElement"] = func(call goja.FunctionCall) goja.Value { return call.This }
	return r.object("elementHandle", m)
}

// addHandleQueries adds $, $$, $eval and $$eval searching inside l (the page's root or an
// element handle).
func (r *run) addHandleQueries(m map[string]any, l *locator) {
	sub := func(call goja.FunctionCall, method string) *locator {
		sel := r.argString(call, 0, method, "selector")
		return l.with("locator("+jsQuote(sel)+")", r.parseSelector(sel)...)
	}
	m["$"] = func(call goja.FunctionCall) goja.Value {
		found := sub(call, "$")
		return r.async("$("+found.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			n, err := r.countNow(ctx, found, "$")
			if err != nil || n == 0 {
				return jsonResult("null"), err
			}
			return jsResult(func() goja.Value { return r.elementHandle(found.with("first()", selStep{Kind: "nth", Index: 0})) }), nil
		})
	}
	m["$$"] = func(call goja.FunctionCall) goja.Value {
		found := sub(call, "$$")
		return r.async("$$("+found.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			n, err := r.countNow(ctx, found, "$$")
			if err != nil {
				return nil, err
			}
			return jsResult(func() goja.Value {
				items := make([]any, n)
				for i := range n {
					items[i] = r.elementHandle(found.with(fmt.Sprintf("nth(%d)", i), selStep{Kind: "nth", Index: i}))
				}
				return r.vm.NewArray(items...)
			}), nil
		})
	}
	m["$eval"] = func(call goja.FunctionCall) goja.Value {
		found := sub(call, "$eval").with("first()", selStep{Kind: "nth", Index: 0})
		src, arg := r.userFunction(call, 1, "$eval")
		return r.async("$eval("+found.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			res, err := r.queryNow(ctx, found, "element", userEvaluate(src), arg, "$eval")
			if err != nil {
				return nil, err
			}
			if res.N == 0 {
				return nil, opErr(CauseScript, "$eval: Failed to find element matching selector %s", found.desc)
			}
			return jsonResult(res.V), nil
		})
	}
	m["$$eval"] = func(call goja.FunctionCall) goja.Value {
		found := sub(call, "$$eval")
		src, arg := r.userFunction(call, 1, "$$eval")
		return r.async("$$eval("+found.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			res, err := r.queryNow(ctx, found, "elements", userEvaluateAll(src), arg, "$$eval")
			if err != nil {
				return nil, err
			}
			return jsonResult(res.V), nil
		})
	}
}

// userFunction reads a script function (at i) and its argument (at i+1) for the page.
func (r *run) userFunction(call goja.FunctionCall, i int, method string) (string, json.RawMessage) {
	r.argFunc(call, i, method, "pageFunction")
	arg, err := r.toJSON(call.Argument(i + 1))
	if err != nil {
		panic(r.typeError("%s: the argument cannot be serialized: %v", method, err))
	}
	return call.Argument(i).String(), arg
}

// countNow counts the matches of l once, trying again across a navigation.
func (r *run) countNow(ctx context.Context, l *locator, method string) (int, error) {
	res, err := r.queryNow(ctx, l, "count", engineCall, nil, method)
	if err != nil {
		return 0, err
	}
	return res.N, nil
}

// engineCall is the function declaration that runs the engine as it is.
var engineCall = "async function(spec, ...ax) { return await (" + engineJS + ")(spec, ...ax) }"

// userEvaluateAll wraps a script's function for $$eval: it is called with all the elements.
func userEvaluateAll(userFn string) string {
	engine := strings.Replace(engineJS, "case 'count':", "case 'elements':\n      out.els = els;\n      break;\n    case 'count':", 1)
	return "async function(spec, ...ax) { const r = await (" + engine + ")(spec, ...ax); const els = r.els || []; delete r.els;" +
		" r.v = await (" + userFn + ")(els, spec.ua); return r }"
}

// queryNow runs fn (the engine or a wrapper of it) once on l's matches, trying again across
// a navigation.
func (r *run) queryNow(ctx context.Context, l *locator, op, fn string, userArg json.RawMessage, method string) (*queryResult, error) {
	for {
		res, err := r.browser.queryWith(ctx, l, op, nil, fn, userArg)
		if transient(err) {
			if err := sleep(ctx, pollDelays[1]); err != nil {
				return nil, err
			}
			continue
		}
		return res, pageError(method, err)
	}
}

// addPageExtras adds the page members of this file and of mouse, context and emulation.
func (r *run) addPageExtras(m map[string]any) {
	bp := r.browser
	media := &mediaState{}
	r.addHandleQueries(m, &locator{})
	m["waitForSelector"] = r.waitForSelectorFunc(&locator{})
	m["setContent"] = func(call goja.FunctionCall) goja.Value {
		html := r.argString(call, 0, "page.setContent", "html")
		opts := r.options(r.argObject(call, 1, "page.setContent"), "page.setContent", "timeout", "waitUntil")
		state := r.waitUntil(opts, "page.setContent")
		b := r.actionBudget(opts)
		ready := "document.readyState === 'complete'"
		if state == "DOMContentLoaded" || state == "commit" {
			ready = "document.readyState !== 'loading'"
		}
		return r.async("page.setContent()", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			// The content replaces the main frame's document in place: the page keeps its URL,
			// and what the content loads passes the same guard as any other load.
			if _, err := chromedp.Call(ctx, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: bp.mainFrameID(), HTML: html}); err != nil {
				return nil, timedOut(ctx, err, "page.setContent", b, own)
			}
			err := poll(ctx, func() (bool, error) {
				v, err := bp.evaluate(ctx, ready)
				if transient(err) {
					return false, nil
				}
				return string(v) == "true", err
			})
			if state == "networkIdle" && err == nil {
				err = sleep(ctx, 500*time.Millisecond) // networkidle: no request for 500ms, as Playwright's
			}
			return nil, timedOut(ctx, err, "page.setContent", b, own)
		})
	}
	m["waitForFunction"] = func(call goja.FunctionCall) goja.Value {
		expr := r.evaluateExpression(call, "page.waitForFunction")
		opts := r.options(r.argObject(call, 2, "page.waitForFunction"), "page.waitForFunction", "timeout", "polling")
		every := 16 * time.Millisecond // "raf": about a frame
		if v, ok := opts["polling"]; ok {
			if _, isNum := v.Export().(string); !isNum {
				every = time.Duration(v.ToFloat() * float64(time.Millisecond))
			} else if v.String() != "raf" {
				panic(r.typeError("page.waitForFunction: polling: expected \"raf\" or a number of milliseconds"))
			}
		}
		b := r.actionBudget(opts)
		return r.async("page.waitForFunction()", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			for {
				v, err := bp.evaluate(ctx, expr)
				var pe *pageException
				switch {
				case errors.As(err, &pe):
					return nil, opErr(CauseScript, "page.waitForFunction: %s", pe.text)
				case err == nil && truthyJSON(v):
					return jsResult(func() goja.Value { return r.jsHandle(v) }), nil
				case err != nil && !transient(err):
					return nil, timedOut(ctx, err, "page.waitForFunction", b, own)
				}
				if err := sleep(ctx, every); err != nil {
					return nil, timedOut(ctx, err, "page.waitForFunction", b, own)
				}
			}
		})
	}
	m["addInitScript"] = func(call goja.FunctionCall) goja.Value {
		var src string
		if o, ok := call.Argument(0).(*goja.Object); ok && o.ClassName() == "Object" {
			c := o.Get("content")
			if c == nil || goja.IsUndefined(c) {
				panic(r.notSupported("page.addInitScript({ path }) — scripts have no file system; pass the script or { content }"))
			}
			src = c.String()
		} else {
			src = r.evaluateExpression(call, "page.addInitScript")
		}
		return r.async("page.addInitScript()", "pw:api", func(ctx context.Context) (any, error) {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
			return nil, pageError("page.addInitScript", err)
		})
	}
	m["emulateMedia"] = func(call goja.FunctionCall) goja.Value {
		opts := r.options(r.argObject(call, 0, "page.emulateMedia"), "page.emulateMedia", "media", "colorScheme", "reducedMotion", "forcedColors", "contrast")
		p := emulation.SetEmulatedMediaParams{}
		media.update(opts)
		p.Media, p.Features = media.params()
		return r.async("page.emulateMedia()", "pw:api", func(ctx context.Context) (any, error) {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, p)
			return nil, pageError("page.emulateMedia", err)
		})
	}
	m["mouse"] = r.mouseObject()
	m["clock"] = r.clockObject()
}

// mediaState is what page.emulateMedia set so far: each call changes only what it names.
type mediaState struct{ media, colorScheme, reducedMotion, forcedColors, contrast string }

func (s *mediaState) update(opts map[string]goja.Value) {
	for k, dst := range map[string]*string{"media": &s.media, "colorScheme": &s.colorScheme, "reducedMotion": &s.reducedMotion, "forcedColors": &s.forcedColors, "contrast": &s.contrast} {
		if v, ok := opts[k]; ok {
			if goja.IsNull(v) {
				*dst = ""
			} else {
				*dst = v.String()
			}
		}
	}
}

func (s *mediaState) params() (string, []*emulation.MediaFeature) {
	var f []*emulation.MediaFeature
	for name, v := range map[string]string{"prefers-color-scheme": s.colorScheme, "prefers-reduced-motion": s.reducedMotion, "forced-colors": s.forcedColors, "prefers-contrast": s.contrast} {
		if v != "" {
			f = append(f, &emulation.MediaFeature{Name: name, Value: v})
		}
	}
	return s.media, f
}

// jsHandle is the JSHandle of waitForFunction's value: its jsonValue.
func (r *run) jsHandle(v json.RawMessage) *goja.Object {
	return r.object("jsHandle", map[string]any{
		"jsonValue": func(goja.FunctionCall) goja.Value { return r.resolved(r.toJS(jsonResult(v))) },
		"dispose":   func(goja.FunctionCall) goja.Value { return r.resolved(goja.Undefined()) },
	})
}

func truthyJSON(v json.RawMessage) bool {
	switch string(v) {
	case "", "null", "false", "0", `""`, `"NaN"`, `"-0"`:
		return false
	}
	return true
}

// mouseObject is page.mouse: trusted mouse events at viewport coordinates.
func (r *run) mouseObject() *goja.Object {
	bp := r.browser
	type mouse struct {
		x, y    float64
		buttons int64
	}
	state := &mouse{}
	buttonOpt := func(opts map[string]goja.Value) input.MouseButton {
		if v, ok := opts["button"]; ok {
			return input.MouseButton(v.String())
		}
		return input.MouseButtonLeft
	}
	bits := map[input.MouseButton]int64{input.MouseButtonLeft: 1, input.MouseButtonRight: 2, input.MouseButtonMiddle: 4}
	send := func(what string, events ...input.DispatchMouseEventParams) goja.Value {
		return r.async("mouse."+what, "pw:api", func(ctx context.Context) (any, error) {
			before := bp.navState()
			for _, e := range events {
				if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, e); err != nil {
					return nil, pageError("mouse."+what, err)
				}
			}
			return nil, pageError("mouse."+what, bp.settleNavigation(ctx, before))
		})
	}
	click := func(call goja.FunctionCall, name string, count int) goja.Value {
		x, y := call.Argument(0).ToFloat(), call.Argument(1).ToFloat()
		opts := r.options(r.argObject(call, 2, "mouse."+name), "mouse."+name, "button", "clickCount", "delay")
		b := buttonOpt(opts)
		if v, ok := opts["clickCount"]; ok {
			count = int(v.ToInteger())
		}
		state.x, state.y = x, y
		evs := []input.DispatchMouseEventParams{{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}}
		for i := 1; i <= count; i++ {
			evs = append(evs,
				input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: b, Buttons: bits[b], ClickCount: int64(i)},
				input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: b, ClickCount: int64(i)})
		}
		return send(fmt.Sprintf("%s(%v, %v)", name, x, y), evs...)
	}
	return r.object("page.mouse", map[string]any{
		"move": func(call goja.FunctionCall) goja.Value {
			x, y := call.Argument(0).ToFloat(), call.Argument(1).ToFloat()
			opts := r.options(r.argObject(call, 2, "mouse.move"), "mouse.move", "steps")
			steps := 1
			if v, ok := opts["steps"]; ok && v.ToInteger() > 1 {
				steps = int(v.ToInteger())
			}
			var evs []input.DispatchMouseEventParams
			for i := 1; i <= steps; i++ {
				px := state.x + (x-state.x)*float64(i)/float64(steps)
				py := state.y + (y-state.y)*float64(i)/float64(steps)
				evs = append(evs, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: px, Y: py, Buttons: state.buttons})
			}
			state.x, state.y = x, y
			return send(fmt.Sprintf("move(%v, %v)", x, y), evs...)
		},
		"down": func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 0, "mouse.down"), "mouse.down", "button", "clickCount")
			b := buttonOpt(opts)
			count := int64(1)
			if v, ok := opts["clickCount"]; ok {
				count = v.ToInteger()
			}
			state.buttons |= bits[b]
			return send("down()", input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: state.x, Y: state.y, Button: b, Buttons: state.buttons, ClickCount: count})
		},
		"up": func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 0, "mouse.up"), "mouse.up", "button", "clickCount")
			b := buttonOpt(opts)
			count := int64(1)
			if v, ok := opts["clickCount"]; ok {
				count = v.ToInteger()
			}
			state.buttons &^= bits[b]
			return send("up()", input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: state.x, Y: state.y, Button: b, Buttons: state.buttons, ClickCount: count})
		},
		"click":    func(call goja.FunctionCall) goja.Value { return click(call, "click", 1) },
		"dblclick": func(call goja.FunctionCall) goja.Value { return click(call, "dblclick", 2) },
		"wheel": func(call goja.FunctionCall) goja.Value {
			dx, dy := call.Argument(0).ToFloat(), call.Argument(1).ToFloat()
			// cdproto leaves out a zero delta, which Chromium requires: sent as it is here.
			wheel := struct {
				Type   input.DispatchMouseEventType `json:"type"`
				X      float64                      `json:"x"`
				Y      float64                      `json:"y"`
				DeltaX float64                      `json:"deltaX"`
				DeltaY float64                      `json:"deltaY"`
			}{input.DispatchMouseEventTypeMouseWheel, state.x, state.y, dx, dy}
			return r.async(fmt.Sprintf("mouse.wheel(%v, %v)", dx, dy), "pw:api", func(ctx context.Context) (any, error) {
				_, err := chromedp.Call(ctx, cdp.Command[any, json.RawMessage]{Method: input.CommandDispatchMouseEvent}, any(wheel))
				return nil, pageError("mouse.wheel", err)
			})
		},
	})
}

func (bp *browserPage) mainFrameID() cdp.FrameID {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.mainFrame
}
