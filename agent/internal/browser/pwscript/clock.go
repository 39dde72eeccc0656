package pwscript

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

//go:embed clock.js
var clockJS string

// clockObject is page.clock: each call runs in the current document and is kept as an init
// script, so that documents loaded later replay the calls in order, as Playwright's clock
// does.
func (r *run) clockObject() *goja.Object {
	call := func(method, expr string) goja.Value {
		src := clockJS + ";window.__pwscriptClock." + expr
		return r.async("clock."+method+"()", "pw:api", func(ctx context.Context) (any, error) {
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
				return nil, pageError("clock."+method, err)
			}
			_, err := r.evaluateRetrying(ctx, "clock."+method, src)
			return nil, err
		})
	}
	timeArg := func(c goja.FunctionCall, method string) string {
		return strconv.FormatInt(r.clockTime(c.Argument(0), "clock."+method), 10)
	}
	ticksArg := func(c goja.FunctionCall, method string) string {
		return strconv.FormatInt(r.clockTicks(c.Argument(0), "clock."+method), 10)
	}
	return r.object("page.clock", map[string]any{
		"install": func(c goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(c, 0, "clock.install"), "clock.install", "time")
			arg := ""
			if v, ok := opts["time"]; ok {
				arg = strconv.FormatInt(r.clockTime(v, "clock.install"), 10)
			}
			return call("install", "install("+arg+")")
		},
		"fastForward": func(c goja.FunctionCall) goja.Value {
			return call("fastForward", "fastForward("+ticksArg(c, "fastForward")+")")
		},
		"runFor":  func(c goja.FunctionCall) goja.Value { return call("runFor", "runFor("+ticksArg(c, "runFor")+")") },
		"pauseAt": func(c goja.FunctionCall) goja.Value { return call("pauseAt", "pauseAt("+timeArg(c, "pauseAt")+")") },
		"resume":  func(goja.FunctionCall) goja.Value { return call("resume", "resume()") },
		"setFixedTime": func(c goja.FunctionCall) goja.Value {
			return call("setFixedTime", "setFixedTime("+timeArg(c, "setFixedTime")+")")
		},
		"setSystemTime": func(c goja.FunctionCall) goja.Value {
			return call("setSystemTime", "setSystemTime("+timeArg(c, "setSystemTime")+")")
		},
	})
}

// clockTime reads a time: milliseconds since the epoch, a Date or a date string.
func (r *run) clockTime(v goja.Value, method string) int64 {
	switch x := v.Export().(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		d, err := r.vm.New(r.vm.Get("Date"), v)
		if err == nil {
			if ms := d.Get("getTime"); ms != nil {
				f, _ := goja.AssertFunction(ms)
				t, err := f(d)
				if err == nil && !isNaN(t.ToFloat()) {
					return t.ToInteger()
				}
			}
		}
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Date" {
		f, _ := goja.AssertFunction(o.Get("getTime"))
		t, err := f(o)
		if err == nil {
			return t.ToInteger()
		}
	}
	panic(r.typeError("%s: expected a number of milliseconds, a Date or a date string, got %s", method, describeType(v)))
}

func isNaN(f float64) bool { return f != f }

// clockTicks reads a duration: milliseconds, or "mm:ss" / "hh:mm:ss".
func (r *run) clockTicks(v goja.Value, method string) int64 {
	if s, ok := v.Export().(string); ok {
		var ms int64
		for _, part := range strings.Split(s, ":") {
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil || len(strings.Split(s, ":")) > 3 {
				panic(r.typeError("%s: expected milliseconds or \"mm:ss\", got %q", method, s))
			}
			ms = ms*60 + n
		}
		return ms * 1000
	}
	if f := v.ToFloat(); !isNaN(f) && f >= 0 {
		return int64(f)
	}
	panic(r.typeError("%s: expected milliseconds or \"mm:ss\", got %s", method, fmt.Sprint(v)))
}
