package pwscript

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// inputFile is one file of setInputFiles, made in the page from the script's bytes.
type inputFile struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	B64      string `json:"b64"`
}

// addLocatorExtras adds setInputFiles, selectText, dragTo and highlight.
func (r *run) addLocatorExtras(m map[string]any, l *locator) {
	op := func(name string, prep func(call goja.FunctionCall, method string) opFunc) func(goja.FunctionCall) goja.Value {
		method := "locator." + name
		return func(call goja.FunctionCall) goja.Value {
			return r.async(method+"("+l.desc+")", "pw:api", prep(call, method))
		}
	}
	m["setInputFiles"] = op("setInputFiles", func(call goja.FunctionCall, method string) opFunc {
		files := r.inputFiles(call.Argument(0), method)
		b := r.actionBudget(r.options(r.argObject(call, 1, method), method, "timeout", "noWaitAfter"))
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			_, err := r.resolveOne(ctx, b, own, l, method, "files", files, "", nil)
			return nil, err
		}
	})
	m["selectText"] = op("selectText", func(call goja.FunctionCall, method string) opFunc {
		b := r.actionBudget(r.options(r.argObject(call, 0, method), method, "timeout", "force"))
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			_, err := r.resolveOne(ctx, b, own, l, method, "selectText", nil, "", nil)
			return nil, err
		}
	})
	m["highlight"] = func(goja.FunctionCall) goja.Value { return r.resolved(goja.Undefined()) }
	m["dragTo"] = op("dragTo", func(call goja.FunctionCall, method string) opFunc {
		target := r.locatorArg(call.Argument(0), method)
		opts := r.options(r.argObject(call, 1, method), method, "force", "timeout", "trial", "sourcePosition", "targetPosition", "noWaitAfter", "steps")
		b := r.actionBudget(opts)
		force := opts["force"] != nil && opts["force"].ToBoolean()
		var srcPos, dstPos *position
		if v, ok := opts["sourcePosition"]; ok {
			srcPos = r.positionOpt(map[string]goja.Value{"position": v})
		}
		if v, ok := opts["targetPosition"]; ok {
			dstPos = r.positionOpt(map[string]goja.Value{"position": v})
		}
		return func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			src, err := r.resolveOne(ctx, b, own, l, method, "point", pointArg{Force: force, Pos: srcPos}, "", nil)
			if err != nil {
				return nil, err
			}
			var from position
			_ = json.Unmarshal(src.V, &from)
			return nil, timedOut(ctx, r.drag(ctx, b, own, method, from, target, pointArg{Force: force, Pos: dstPos}), method, b, own)
		}
	})
}

// drag presses the mouse at from, moves it onto target and releases it there. HTML5 drag and
// drop is intercepted (Input.setInterceptDrags) and replayed as drag events, as Playwright
// does in Chromium; a drag made of mouse events alone gets the mouse events.
func (r *run) drag(ctx context.Context, b budget, own bool, method string, from position, target *locator, arg pointArg) error {
	bp := r.browser
	if _, err := chromedp.Call(ctx, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: true}); err != nil {
		return err
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_, _ = chromedp.Call(c, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: false})
	}()
	for len(r.net.drags) > 0 {
		<-r.net.drags
	}
	mouse := func(t input.DispatchMouseEventType, p position, buttons int64) error {
		_, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: t, X: p.X, Y: p.Y, Button: input.MouseButtonLeft, Buttons: buttons, ClickCount: 1})
		return err
	}
	if err := bp.mouseMove(ctx, from.X, from.Y); err != nil {
		return err
	}
	if err := mouse(input.DispatchMouseEventTypeMousePressed, from, 1); err != nil {
		return err
	}
	if err := mouse(input.DispatchMouseEventTypeMouseMoved, position{from.X + 5, from.Y + 5}, 1); err != nil {
		return err
	}
	// The target is found (and checked) after the drag began, as the page may change then.
	res, err := r.resolveOne(ctx, b, own, target, method, "point", pointArg{Force: true, Pos: arg.Pos}, "", nil)
	if err != nil {
		return err
	}
	var to position
	_ = json.Unmarshal(res.V, &to)
	if err := mouse(input.DispatchMouseEventTypeMouseMoved, to, 1); err != nil {
		return err
	}
	select {
	case data := <-r.net.drags:
		for _, t := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: t, X: to.X, Y: to.Y, Data: data}); err != nil {
				return err
			}
		}
	case <-time.After(50 * time.Millisecond):
		// No HTML5 drag started: the page follows the mouse.
	}
	return mouse(input.DispatchMouseEventTypeMouseReleased, to, 0)
}

// inputFiles reads setInputFiles' argument: { name, mimeType, buffer } or an array of them
// (an empty array clears the input). Paths are refused: a script has no file system.
func (r *run) inputFiles(v goja.Value, method string) []inputFile {
	one := func(v goja.Value) inputFile {
		o, ok := v.(*goja.Object)
		if !ok {
			panic(r.notSupported(method + "() with a file path — scripts have no file system; pass { name, mimeType, buffer }"))
		}
		name, buf := o.Get("name"), o.Get("buffer")
		if name == nil || buf == nil || goja.IsUndefined(buf) {
			panic(r.typeError("%s: expected { name, mimeType, buffer }", method))
		}
		f := inputFile{Name: name.String(), B64: base64.StdEncoding.EncodeToString(r.bodyBytes(buf, method))}
		if mt := o.Get("mimeType"); mt != nil && !goja.IsUndefined(mt) {
			f.MimeType = mt.String()
		}
		return f
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Array" {
		out := []inputFile{}
		for _, k := range o.Keys() {
			out = append(out, one(o.Get(k)))
		}
		return out
	}
	return []inputFile{one(v)}
}
