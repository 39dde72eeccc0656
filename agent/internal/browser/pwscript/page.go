package pwscript

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// pageObject builds the script's `page`.
func (r *run) pageObject() *goja.Object {
	root := &locator{}
	m := map[string]any{}
	r.addLocatorBuilders(m, root)
	bp := r.browser

	m["url"] = func(goja.FunctionCall) goja.Value { return r.vm.ToValue(bp.currentURL()) }
	m["request"] = r.apiRequestContext(browserJar{tab: bp.ctx})
	m["isClosed"] = func(goja.FunctionCall) goja.Value { return r.vm.ToValue(false) }
	m["viewportSize"] = func(goja.FunctionCall) goja.Value {
		w, h := bp.viewport()
		return r.vm.ToValue(map[string]any{"width": w, "height": h})
	}
	m["goto"] = func(call goja.FunctionCall) goja.Value {
		target := r.argString(call, 0, "page.goto", "url")
		opts := r.options(r.argObject(call, 1, "page.goto"), "page.goto", "waitUntil", "timeout", "referer")
		state := r.waitUntil(opts, "page.goto")
		b := r.navigationBudget(opts)
		return r.async("page.goto("+jsQuote(target)+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			return r.navigate(ctx, b, own, r.resolveURL(target), state)
		})
	}
	history := func(name string, delta int) func(goja.FunctionCall) goja.Value {
		method := "page." + name
		return func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 0, method), method, "waitUntil", "timeout")
			state := r.waitUntil(opts, method)
			b := r.navigationBudget(opts)
			return r.async(method+"()", "pw:api", func(ctx context.Context) (any, error) {
				ctx, cancel, own := b.bound(ctx)
				defer cancel()
				before := bp.navState()
				if delta == 0 {
					if _, err := chromedp.Call(ctx, page.Reload, page.ReloadParams{}); err != nil {
						return nil, timedOut(ctx, err, method, b, own)
					}
				} else {
					h, err := chromedp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
					if err != nil {
						return nil, timedOut(ctx, err, method, b, own)
					}
					i := int(h.CurrentIndex) + delta
					if i < 0 || i >= len(h.Entries) {
						return jsonResult("null"), nil
					}
					if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[i].ID}); err != nil {
						return nil, timedOut(ctx, err, method, b, own)
					}
				}
				err := bp.waitState(ctx, func() bool { return bp.committed > before.committed })
				if err == nil {
					err = bp.waitLifecycle(ctx, "", state)
				}
				if err != nil {
					return nil, timedOut(ctx, err, method, b, own)
				}
				return r.responseResult(bp.response(bp.currentLoader())), nil
			})
		}
	}
	m["reload"] = history("reload", 0)
	m["goBack"] = history("goBack", -1)
	m["goForward"] = history("goForward", 1)
	m["title"] = func(goja.FunctionCall) goja.Value {
		return r.async("page.title()", "pw:api", func(ctx context.Context) (any, error) {
			// A document that just committed may not have parsed its <title> yet: wait for it
			// while the document is still loading.
			return r.evaluateRetrying(ctx, "page.title", "document.title || document.readyState !== 'loading' ? document.title : null")
		})
	}
	m["content"] = func(goja.FunctionCall) goja.Value {
		return r.async("page.content()", "pw:api", func(ctx context.Context) (any, error) {
			return r.evaluateRetrying(ctx, "page.content", `(() => { let s = ''; if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype); if (document.documentElement) s += document.documentElement.outerHTML; return s })()`)
		})
	}
	m["waitForTimeout"] = func(call goja.FunctionCall) goja.Value {
		ms := call.Argument(0).ToFloat()
		return r.async(fmt.Sprintf("page.waitForTimeout(%v)", ms), "pw:api", func(ctx context.Context) (any, error) {
			return nil, sleep(ctx, time.Duration(ms*float64(time.Millisecond)))
		})
	}
	m["waitForLoadState"] = func(call goja.FunctionCall) goja.Value {
		stateArg := "load"
		if s, ok := call.Argument(0).Export().(string); ok {
			stateArg = s
		}
		state, ok := lifecycleName(stateArg)
		if !ok || stateArg == "commit" {
			panic(r.typeError("page.waitForLoadState: state: expected load, domcontentloaded or networkidle, got %q", stateArg))
		}
		b := r.actionBudget(r.options(r.argObject(call, 1, "page.waitForLoadState"), "page.waitForLoadState", "timeout"))
		return r.async("page.waitForLoadState("+jsQuote(stateArg)+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			return nil, timedOut(ctx, bp.waitLifecycle(ctx, "", state), "page.waitForLoadState", b, own)
		})
	}
	m["waitForURL"] = func(call goja.FunctionCall) goja.Value {
		match := r.urlMatcher(call.Argument(0), "page.waitForURL", true)
		opts := r.options(r.argObject(call, 1, "page.waitForURL"), "page.waitForURL", "timeout", "waitUntil")
		state := r.waitUntil(opts, "page.waitForURL")
		b := r.actionBudget(opts)
		return r.async("page.waitForURL("+match.String()+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			err := bp.waitState(ctx, func() bool { return match.matchesText(bp.url) })
			if err == nil {
				err = bp.waitLifecycle(ctx, "", state)
			}
			if err != nil && ctx.Err() != nil {
				return nil, opErr(CauseTimeout, "page.waitForURL: %s\n=========================== logs ===========================\nwaiting for navigation to %s until %q\n  current URL: %q", b.exceeded(own), match, state, bp.currentURL())
			}
			return nil, err
		})
	}
	m["evaluate"] = func(call goja.FunctionCall) goja.Value {
		expr := call.Argument(0).String()
		if _, isFn := goja.AssertFunction(call.Argument(0)); isFn {
			expr = functionSource(call.Argument(0))
			arg, err := r.toJSON(call.Argument(1))
			if err != nil {
				panic(r.typeError("page.evaluate: the argument cannot be serialized: %v", err))
			}
			if arg == nil {
				arg = json.RawMessage("undefined")
			}
			expr = "(" + expr + ")(" + string(arg) + ")"
		} else if _, ok := call.Argument(0).Export().(string); !ok {
			panic(r.typeError("page.evaluate: expected a function or a string, got %s", describeType(call.Argument(0))))
		}
		return r.async("page.evaluate()", "pw:api", func(ctx context.Context) (any, error) {
			return r.evaluateRetrying(ctx, "page.evaluate", expr)
		})
	}
	m["screenshot"] = func(call goja.FunctionCall) goja.Value {
		opts := r.options(r.argObject(call, 0, "page.screenshot"), "page.screenshot", "fullPage", "type", "quality", "timeout", "path", "animations", "caret", "scale")
		full := opts["fullPage"] != nil && opts["fullPage"].ToBoolean()
		format, quality, name := r.screenshotFormat(opts, "page.screenshot")
		b := r.actionBudget(opts)
		return r.async("page.screenshot()", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			img, err := bp.capture(ctx, format, quality, full, 1)
			if err != nil {
				return nil, timedOut(ctx, err, "page.screenshot", b, own)
			}
			return r.screenshotResult(img, name, format), nil
		})
	}
	m["setViewportSize"] = func(call goja.FunctionCall) goja.Value {
		var size struct{ Width, Height int64 }
		if o := r.argObject(call, 0, "page.setViewportSize"); o != nil && o.Get("width") != nil && o.Get("height") != nil {
			size.Width, size.Height = o.Get("width").ToInteger(), o.Get("height").ToInteger()
		}
		if size.Width <= 0 || size.Height <= 0 {
			panic(r.typeError("page.setViewportSize: expected { width, height }"))
		}
		return r.async(fmt.Sprintf("page.setViewportSize({ width: %d, height: %d })", size.Width, size.Height), "pw:api", func(ctx context.Context) (any, error) {
			return nil, pageError("page.setViewportSize", bp.setViewport(ctx, size.Width, size.Height))
		})
	}
	m["keyboard"] = r.keyboardObject()

	// The selector shortcuts act on the first match, as Playwright's page.click(selector) does.
	for _, name := range []string{"click", "dblclick", "fill", "press", "type", "check", "uncheck", "hover", "selectOption", "focus",
		"textContent", "innerText", "innerHTML", "getAttribute", "inputValue", "isVisible", "isHidden", "isChecked", "isEnabled", "isDisabled", "isEditable"} {
		m[name] = func(call goja.FunctionCall) goja.Value {
			sel := r.argString(call, 0, "page."+name, "selector")
			l := root.with("locator("+jsQuote(sel)+")", r.parseSelector(sel)...)
			l = l.with("first()", selStep{Kind: "nth", Index: 0})
			obj := r.locatorObject(l)
			fn, _ := goja.AssertFunction(obj.Get(name))
			v, err := fn(obj, call.Arguments[1:]...)
			if err != nil {
				panic(err)
			}
			return v
		}
	}
	r.addPageEvents(m)
	r.addRoutes(m)
	r.addFrames(m)
	r.addPageExtras(m)
	r.addExpose(m)
	r.addLocatorHandlers(m)
	return r.object("page", m)
}

// waitUntil reads the waitUntil option.
func (r *run) waitUntil(opts map[string]goja.Value, method string) string {
	w := ""
	if v, ok := opts["waitUntil"]; ok {
		w = v.String()
	}
	state, ok := lifecycleName(w)
	if !ok {
		panic(r.typeError("%s: waitUntil: expected load, domcontentloaded, networkidle or commit, got %q", method, w))
	}
	return state
}

// navigate is page.goto: navigate the main frame and wait for the lifecycle state.
func (r *run) navigate(ctx context.Context, b budget, own bool, target, state string) (any, error) {
	bp := r.browser
	u, err := url.Parse(target)
	if err != nil || !u.IsAbs() {
		return nil, opErr(CauseScript, "page.goto: Protocol error (Page.navigate): Cannot navigate to invalid URL\nCall log:\n  - navigating to %q, waiting until %q", target, state)
	}
	if _, ok := AllowedURL(target); !ok {
		return nil, opErr(CauseScript, "page.goto: %s", NotAllowed(target))
	}
	res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: target})
	if err != nil {
		if ctx.Err() != nil {
			return nil, opErr(CauseTimeout, "page.goto: %s\nCall log:\n  - navigating to %q, waiting until %q", b.exceeded(own), target, state)
		}
		return nil, pageError("page.goto", err)
	}
	if res.ErrorText != "" {
		return nil, opErr(CauseNavigation, "page.goto: %s at %s\nCall log:\n  - navigating to %q, waiting until %q", res.ErrorText, target, target, state)
	}
	if res.LoaderID == "" {
		return jsonResult("null"), nil // a same-document navigation has no response
	}
	if err := bp.waitLifecycle(ctx, res.LoaderID, state); err != nil {
		if ctx.Err() != nil {
			return nil, opErr(CauseTimeout, "page.goto: %s\nCall log:\n  - navigating to %q, waiting until %q", b.exceeded(own), target, state)
		}
		return nil, pageError("page.goto", err)
	}
	return r.navigationResponse(res.LoaderID), nil
}

// responseResult is the Response of a navigation (null without one).
func (r *run) responseResult(resp *network.Response) any {
	if resp == nil {
		return jsonResult("null")
	}
	return jsResult(func() goja.Value {
		headers := map[string]any{}
		for k, v := range resp.Headers {
			headers[strings.ToLower(k)] = fmt.Sprint(v)
		}
		return r.object("response", map[string]any{
			"status": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.Status) },
			"ok": func(goja.FunctionCall) goja.Value {
				return r.vm.ToValue(resp.Status == 0 || resp.Status >= 200 && resp.Status <= 299)
			},
			"url":        func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.URL) },
			"statusText": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.StatusText) },
			"headers":    func(goja.FunctionCall) goja.Value { return r.vm.ToValue(headers) },
			"headerValue": func(call goja.FunctionCall) goja.Value {
				if v, ok := headers[strings.ToLower(call.Argument(0).String())]; ok {
					return r.vm.ToValue(v)
				}
				return goja.Null()
			},
		})
	})
}

// evaluateRetrying evaluates an expression, trying again while a navigation replaces the
// document under it.
func (r *run) evaluateRetrying(ctx context.Context, method, expr string) (any, error) {
	for {
		v, err := r.browser.evaluate(ctx, expr)
		if transient(err) {
			if err := sleep(ctx, pollDelays[1]); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			var pe *pageException
			if errors.As(err, &pe) {
				return nil, opErr(CauseScript, "%s: %s", method, pe.text)
			}
			return nil, err
		}
		if method == "page.title" && string(v) == "null" {
			if err := sleep(ctx, pollDelays[1]); err != nil {
				return nil, err
			}
			continue
		}
		return jsonResult(v), nil
	}
}

// urlMatcher reads a URL argument: a RegExp, or a string that is a glob pattern ("**/login")
// when glob is set and an exact URL otherwise.
func (r *run) urlMatcher(v goja.Value, method string, glob bool) *textMatch {
	if m, ok := r.regexpOf(v); ok {
		return m
	}
	s, ok := v.Export().(string)
	if !ok {
		panic(r.notSupported(method + "() with a predicate function — pass a string or a RegExp"))
	}
	if glob && strings.ContainsAny(s, "*?{") {
		return &textMatch{Re: globToRegexp(s), isRe: true, S: s}
	}
	return &textMatch{S: s, Exact: true}
}

// globToRegexp turns Playwright's URL glob into a regular expression: ** any characters,
// * any but '/', ? one character, {a,b} alternatives.
func globToRegexp(g string) string {
	var b strings.Builder
	b.WriteByte('^')
	inGroup := false
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteByte('.')
		case c == '{':
			b.WriteString("(?:")
			inGroup = true
		case c == '}' && inGroup:
			b.WriteByte(')')
			inGroup = false
		case c == ',' && inGroup:
			b.WriteByte('|')
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteByte('$')
	return b.String()
}

// keyboardObject is page.keyboard.
func (r *run) keyboardObject() *goja.Object {
	bp := r.browser
	return r.object("page.keyboard", map[string]any{
		"press": func(call goja.FunctionCall) goja.Value {
			key := r.argString(call, 0, "keyboard.press", "key")
			return r.async("keyboard.press("+jsQuote(key)+")", "pw:api", func(ctx context.Context) (any, error) {
				before := bp.navState()
				if err := bp.pressKey(ctx, key); err != nil {
					return nil, pageError("keyboard.press", err)
				}
				return nil, pageError("keyboard.press", bp.settleNavigation(ctx, before))
			})
		},
		"type": func(call goja.FunctionCall) goja.Value {
			text := r.argString(call, 0, "keyboard.type", "text")
			opts := r.options(r.argObject(call, 1, "keyboard.type"), "keyboard.type", "delay")
			delay := time.Duration(0)
			if d, ok := opts["delay"]; ok {
				delay = time.Duration(d.ToFloat() * float64(time.Millisecond))
			}
			return r.async("keyboard.type()", "pw:api", func(ctx context.Context) (any, error) {
				return nil, pageError("keyboard.type", bp.typeText(ctx, text, func() error { return sleep(ctx, delay) }))
			})
		},
		"insertText": func(call goja.FunctionCall) goja.Value {
			text := r.argString(call, 0, "keyboard.insertText", "text")
			return r.async("keyboard.insertText()", "pw:api", func(ctx context.Context) (any, error) {
				return nil, pageError("keyboard.insertText", bp.insertText(ctx, text))
			})
		},
	})
}

// viewport and setViewport are the page's size.
func (bp *browserPage) viewport() (int, int) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.opts.ViewportWidth, bp.opts.ViewportHeight
}

func (bp *browserPage) setViewport(ctx context.Context, w, h int64) error {
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: cmp.Or(bp.opts.deviceScaleFactor, 1), Mobile: bp.opts.mobile}); err != nil {
		return err
	}
	bp.mu.Lock()
	bp.opts.ViewportWidth, bp.opts.ViewportHeight = int(w), int(h)
	bp.mu.Unlock()
	return nil
}

func (bp *browserPage) currentLoader() cdp.LoaderID {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.loaderID
}

// capture takes a screenshot of the viewport (or the whole page), scaled by scale.
func (bp *browserPage) capture(ctx context.Context, format page.CaptureScreenshotFormat, quality int64, full bool, scale float64) ([]byte, error) {
	p := page.CaptureScreenshotParams{Format: format}
	if quality > 0 {
		p.Quality = &quality
	}
	w, h := bp.viewport()
	width, height := float64(w), float64(h)
	if full {
		m, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		width, height = m.CSSContentSize.Width, m.CSSContentSize.Height
		p.CaptureBeyondViewport = new(true)
	}
	if full || scale != 1 {
		p.Clip = &page.Viewport{X: 0, Y: 0, Width: width, Height: height, Scale: scale}
	}
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// screenshot is the failure screenshot: a JPEG of the viewport, made smaller until it fits
// the cap; nil if the page cannot be captured in the time left.
func (r *run) screenshot() []byte {
	if r.browser == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.pageTab, 2*time.Second)
	defer cancel()
	for _, try := range []struct {
		quality int64
		scale   float64
	}{{70, 1}, {40, 1}, {40, 0.5}, {30, 0.25}} {
		img, err := r.browser.capture(ctx, page.CaptureScreenshotFormatJpeg, try.quality, false, try.scale)
		for err != nil && ctx.Err() == nil {
			// A page in the middle of a navigation (to an error page, say) is not ready to be
			// captured for a moment.
			if sleep(ctx, 100*time.Millisecond) != nil {
				return nil
			}
			img, err = r.browser.capture(ctx, page.CaptureScreenshotFormatJpeg, try.quality, false, try.scale)
		}
		if err != nil {
			return nil
		}
		if len(img) <= r.opts.ScreenshotMaxBytes {
			return img
		}
	}
	return nil
}
