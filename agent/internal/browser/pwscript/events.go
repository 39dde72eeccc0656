package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// pageEvents is page.on and what it needs: the page's requests and frames, kept from CDP
// events on chromedp's reading goroutine, and the script's listeners and waiters, which are
// the loop's only.
type pageEvents struct {
	log    *netLog
	frames *frameTree
	routes *router

	listeners map[string][]*listener
	waiters   map[string][]*waiter
	drags     chan *input.DragData // HTML5 drags intercepted for locator.dragTo
	exposed   map[string]*exposed  // page.exposeFunction/exposeBinding, by name
	handlers  *locatorHandlers     // page.addLocatorHandler (handlers.go)
}

type listener struct {
	fn   goja.Value
	call goja.Callable
	once bool
}

// waiter is a waitForEvent (or waitForRequest/Response) in progress: match runs on the loop
// for each event; the first event it accepts goes to got.
type waiter struct {
	match func(v goja.Value, settle func(bool))
	got   chan goja.Value
	gone  atomic.Bool // the wait ended (timed out): drop it
}

// pageEventNames are the events page.on accepts. "close" and "crash" are accepted though a
// run's page closes only with the run (crash fires when the renderer dies).
var pageEventNames = map[string]bool{
	"request": true, "response": true, "requestfailed": true, "requestfinished": true,
	"console": true, "pageerror": true, "dialog": true, "load": true, "domcontentloaded": true,
	"close": true, "crash": true, "frameattached": true, "framenavigated": true, "framedetached": true,
}

// watchPage starts recording the page's requests and frames and delivering its events.
func (r *run) watchPage() error {
	bp := r.browser
	frames, err := newFrameTree(bp.ctx)
	if err != nil {
		return err
	}
	r.net = &pageEvents{log: newNetLog(), frames: frames, listeners: map[string][]*listener{}, waiters: map[string][]*waiter{}, drags: make(chan *input.DragData, 1), exposed: map[string]*exposed{}, handlers: &locatorHandlers{}}
	r.net.routes = &router{r: r}
	bp.childFrames = func() []cdp.FrameID { return frames.live()[1:] }
	bp.mainContext = frames.mainContext
	bp.framePath = frames.framePathOf
	return chromedp.Listen(bp.ctx, r.onPageEvent)
}

// onPageEvent runs on chromedp's reading goroutine: it records, then queues the script's
// part for the loop.
func (r *run) onPageEvent(ev any) {
	n := r.net
	emit := func(name string, arg func() goja.Value) {
		r.loop.enqueue(func() error { return r.emit(name, arg) })
	}
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		req, redirected := n.log.sent(ev)
		if redirected != nil {
			emit("response", func() goja.Value { return r.responseObject(redirected) })
			emit("requestfinished", func() goja.Value { return r.requestObject(redirected.req) })
		}
		emit("request", func() goja.Value { return r.requestObject(req) })
	case *network.EventResponseReceived:
		if resp := n.log.received(ev); resp != nil {
			emit("response", func() goja.Value { return r.responseObject(resp) })
		}
	case *network.EventLoadingFinished:
		if req := n.log.ended(ev.RequestID, ""); req != nil {
			emit("requestfinished", func() goja.Value { return r.requestObject(req) })
		}
	case *network.EventLoadingFailed:
		if req := n.log.ended(ev.RequestID, ev.ErrorText); req != nil {
			emit("requestfailed", func() goja.Value { return r.requestObject(req) })
		}
	case *runtime.EventConsoleAPICalled:
		emit("console", func() goja.Value { return r.consoleMessage(ev) })
	case *runtime.EventExceptionThrown:
		emit("pageerror", func() goja.Value {
			e, err := r.vm.New(r.vm.Get("Error"), r.vm.ToValue(strings.TrimPrefix(exceptionText(ev.ExceptionDetails), "Uncaught ")))
			must(err)
			return e
		})
	case *page.EventJavascriptDialogOpening:
		r.loop.enqueue(func() error { return r.onDialog(ev) })
	case *page.EventLoadEventFired:
		emit("load", func() goja.Value { return r.pageObj })
	case *page.EventDomContentEventFired:
		emit("domcontentloaded", func() goja.Value { return r.pageObj })
	case *inspector.EventTargetCrashed:
		emit("crash", func() goja.Value { return r.pageObj })
	case *page.EventFrameAttached:
		n.frames.attached(ev.FrameID, ev.ParentFrameID)
		emit("frameattached", func() goja.Value { return r.frameObject(ev.FrameID) })
	case *page.EventFrameNavigated:
		n.frames.navigated(ev.Frame)
		emit("framenavigated", func() goja.Value { return r.frameObject(ev.Frame.ID) })
	case *page.EventNavigatedWithinDocument:
		n.frames.navigatedWithin(ev.FrameID, ev.URL)
		emit("framenavigated", func() goja.Value { return r.frameObject(ev.FrameID) })
	case *runtime.EventBindingCalled:
		r.loop.enqueue(func() error { return r.onBinding(ev) })
	case *input.EventDragIntercepted:
		select {
		case n.drags <- ev.Data:
		default:
		}
	case *runtime.EventExecutionContextCreated:
		n.frames.contextCreated(ev.Context)
	case *page.EventFrameDetached:
		n.frames.detached(ev.FrameID)
		emit("framedetached", func() goja.Value { return r.frameObject(ev.FrameID) })
	}
	r.net.routes.onEvent(ev)
}

// emit calls the listeners of an event and offers it to the waiters, on the loop. arg is
// built only when someone wants it. A listener that throws fails the test, as an uncaught
// error in a Node.js event handler does.
func (r *run) emit(name string, arg func() goja.Value) error {
	n := r.net
	ls, ws := n.listeners[name], n.waiters[name]
	if len(ls) == 0 && len(ws) == 0 {
		return nil
	}
	v := arg()
	if v == nil {
		return nil
	}
	var keep []*listener
	for _, l := range ls {
		if !l.once {
			keep = append(keep, l)
		}
	}
	if len(keep) != len(ls) {
		n.listeners[name] = keep
		r.loop.listening -= len(ls) - len(keep)
	}
	r.setDialogListeners()
	for _, l := range ls {
		if _, err := l.call(r.pageObj, v); err != nil {
			return err
		}
	}
	live := ws[:0]
	for _, w := range ws {
		if !w.gone.Load() {
			live = append(live, w)
		}
	}
	n.waiters[name] = live
	for _, w := range append([]*waiter(nil), live...) {
		w.match(v, func(ok bool) {
			if ok && w.gone.CompareAndSwap(false, true) {
				w.got <- v
			}
		})
	}
	return nil
}

// addPageEvents adds on, once, off, removeListener, removeAllListeners and waitForEvent,
// waitForRequest and waitForResponse to the page's members.
func (r *run) addPageEvents(m map[string]any) {
	add := func(once bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			name := r.eventName(call, "page.on")
			fn := r.argFunc(call, 1, "page.on", "listener")
			r.net.listeners[name] = append(r.net.listeners[name], &listener{fn: call.Argument(1), call: fn, once: once})
			r.loop.listening++
			r.setDialogListeners()
			return r.pageObj
		}
	}
	m["on"] = add(false)
	m["addListener"] = m["on"]
	m["once"] = add(true)
	off := func(call goja.FunctionCall) goja.Value {
		name := r.eventName(call, "page.off")
		ls := r.net.listeners[name]
		for i, l := range ls {
			if l.fn.StrictEquals(call.Argument(1)) {
				r.net.listeners[name] = append(ls[:i:i], ls[i+1:]...)
				r.loop.listening--
				break
			}
		}
		r.setDialogListeners()
		return r.pageObj
	}
	m["off"] = off
	m["removeListener"] = off
	m["removeAllListeners"] = func(call goja.FunctionCall) goja.Value {
		names := []string{}
		if goja.IsUndefined(call.Argument(0)) {
			for k := range r.net.listeners {
				names = append(names, k)
			}
		} else {
			names = append(names, r.eventName(call, "page.removeAllListeners"))
		}
		for _, k := range names {
			r.loop.listening -= len(r.net.listeners[k])
			delete(r.net.listeners, k)
		}
		r.setDialogListeners()
		return r.resolved(goja.Undefined())
	}
	m["waitForEvent"] = func(call goja.FunctionCall) goja.Value {
		name := r.eventName(call, "page.waitForEvent")
		var pred goja.Value
		opts := map[string]goja.Value{}
		if _, ok := goja.AssertFunction(call.Argument(1)); ok {
			pred = call.Argument(1)
			opts = r.options(r.argObject(call, 2, "page.waitForEvent"), "page.waitForEvent", "timeout")
		} else if o := r.argObject(call, 1, "page.waitForEvent"); o != nil {
			opts = r.options(o, "page.waitForEvent", "predicate", "timeout")
			pred = opts["predicate"]
		}
		return r.waitForEvent("page.waitForEvent", "page.waitForEvent("+jsQuote(name)+")", name, r.predicate(pred), opts)
	}
	network := func(method, event string) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			opts := r.options(r.argObject(call, 1, method), method, "timeout")
			arg := call.Argument(0)
			if _, ok := goja.AssertFunction(arg); ok {
				return r.waitForEvent(method, method+"(predicate)", event, r.predicate(arg), opts)
			}
			match := r.urlMatcher(arg, method, true)
			return r.waitForEvent(method, method+"("+match.String()+")", event, func(v goja.Value, settle func(bool)) {
				u := v.(*goja.Object).Get("url")
				f, _ := goja.AssertFunction(u)
				s, err := f(v)
				settle(err == nil && match.matchesText(s.String()))
			}, opts)
		}
	}
	m["waitForRequest"] = network("page.waitForRequest", "request")
	m["waitForResponse"] = network("page.waitForResponse", "response")
}

// eventName reads and checks the event name of page.on and the like.
func (r *run) eventName(call goja.FunctionCall, method string) string {
	name := r.argString(call, 0, method, "event")
	switch {
	case pageEventNames[name]:
		return name
	case name == "popup" || name == "download" || name == "filechooser" || name == "worker" || name == "websocket":
		panic(r.notSupported(fmt.Sprintf("page.on('%s') — a check has one page and no files", name)))
	}
	panic(r.typeError("%s: unknown event %q", method, name))
}

// predicate turns a script predicate (sync or async; undefined: any event) into a matcher.
func (r *run) predicate(fn goja.Value) func(goja.Value, func(bool)) {
	if fn == nil || goja.IsUndefined(fn) {
		return func(_ goja.Value, settle func(bool)) { settle(true) }
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		panic(r.typeError("predicate: expected a function, got %s", describeType(fn)))
	}
	return func(v goja.Value, settle func(bool)) {
		res, err := call(goja.Undefined(), v)
		if err != nil {
			settle(false)
			return
		}
		p, ok := res.Export().(*goja.Promise)
		if !ok {
			settle(res.ToBoolean())
			return
		}
		switch p.State() {
		case goja.PromiseStateFulfilled:
			settle(p.Result().ToBoolean())
		case goja.PromiseStateRejected:
			settle(false)
		default:
			then, _ := goja.AssertFunction(res.(*goja.Object).Get("then"))
			_, _ = then(res,
				r.vm.ToValue(func(c goja.FunctionCall) goja.Value { settle(c.Argument(0).ToBoolean()); return goja.Undefined() }),
				r.vm.ToValue(func(goja.FunctionCall) goja.Value { settle(false); return goja.Undefined() }))
		}
	}
}

// waitForEvent waits for the first event name that match accepts, up to the timeout
// option (default: the action timeout, as Playwright's).
func (r *run) waitForEvent(method, what, name string, match func(goja.Value, func(bool)), opts map[string]goja.Value) goja.Value {
	w := &waiter{match: match, got: make(chan goja.Value, 1)}
	r.net.waiters[name] = append(r.net.waiters[name], w)
	b := r.actionBudget(opts)
	return r.async(what, "pw:api", func(ctx context.Context) (any, error) {
		ctx, cancel, own := b.bound(ctx)
		defer cancel()
		select {
		case v := <-w.got:
			return jsResult(func() goja.Value { return v }), nil
		case <-ctx.Done():
			w.gone.Store(true)
			return nil, opErr(CauseTimeout, "%s: %s\n=========================== logs ===========================\nwaiting for event %q", method, b.exceeded(own), name)
		}
	})
}

// setDialogListeners tells the page whether the script handles dialogs (else they are
// dismissed at once).
func (r *run) setDialogListeners() {
	r.browser.dialogListeners.Store(int32(len(r.net.listeners["dialog"]) + len(r.net.waiters["dialog"])))
}

// onDialog hands a dialog to the script's listeners, or dismisses it when none is left.
func (r *run) onDialog(ev *page.EventJavascriptDialogOpening) error {
	if len(r.net.listeners["dialog"]) == 0 && len(r.net.waiters["dialog"]) == 0 {
		go r.browser.dismissDialog(ev.Type)
		return nil
	}
	return r.emit("dialog", func() goja.Value { return r.dialogObject(ev) })
}

func (r *run) dialogObject(ev *page.EventJavascriptDialogOpening) goja.Value {
	handled := false
	answer := func(method string, accept bool, text string) goja.Value {
		if handled {
			panic(r.typeError("dialog.%s: Cannot %s dialog which is already handled!", method, method))
		}
		handled = true
		return r.async("dialog."+method+"()", "pw:api", func(ctx context.Context) (any, error) {
			_, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept, PromptText: text})
			return nil, pageError("dialog."+method, err)
		})
	}
	return r.object("dialog", map[string]any{
		"type":         func(goja.FunctionCall) goja.Value { return r.vm.ToValue(string(ev.Type)) },
		"message":      func(goja.FunctionCall) goja.Value { return r.vm.ToValue(ev.Message) },
		"defaultValue": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(ev.DefaultPrompt) },
		"page":         func(goja.FunctionCall) goja.Value { return r.pageObj },
		"accept": func(call goja.FunctionCall) goja.Value {
			text := ""
			if s, ok := call.Argument(0).Export().(string); ok {
				text = s
			}
			return answer("accept", true, text)
		},
		"dismiss": func(goja.FunctionCall) goja.Value { return answer("dismiss", false, "") },
	})
}

// consoleMessage is the script's ConsoleMessage: type, text and location, as Playwright
// renders them (a string argument as itself, other values by their preview).
func (r *run) consoleMessage(ev *runtime.EventConsoleAPICalled) goja.Value {
	parts := make([]string, 0, len(ev.Args))
	for _, a := range ev.Args {
		parts = append(parts, remotePreview(a))
	}
	text := strings.Join(parts, " ")
	typ := string(ev.Type)
	loc := map[string]any{"url": "", "lineNumber": 0, "columnNumber": 0}
	if ev.StackTrace != nil && len(ev.StackTrace.CallFrames) > 0 {
		f := ev.StackTrace.CallFrames[0]
		loc = map[string]any{"url": f.URL, "lineNumber": f.LineNumber, "columnNumber": f.ColumnNumber}
	}
	return r.object("consoleMessage", map[string]any{
		"type":     func(goja.FunctionCall) goja.Value { return r.vm.ToValue(typ) },
		"text":     func(goja.FunctionCall) goja.Value { return r.vm.ToValue(text) },
		"location": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(loc) },
		"page":     func(goja.FunctionCall) goja.Value { return r.pageObj },
	})
}

// remotePreview renders a console argument: strings raw, primitives by value, objects by
// Chromium's description.
func remotePreview(o *runtime.RemoteObject) string {
	switch {
	case o.Type == runtime.RemoteObjectTypeString:
		var s string
		_ = json.Unmarshal(o.Value, &s)
		return s
	case o.Type == runtime.RemoteObjectTypeUndefined:
		return "undefined"
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case len(o.Value) > 0 && o.Type != runtime.RemoteObjectTypeObject:
		return string(o.Value)
	case o.Subtype == runtime.RemoteObjectSubtypeNull:
		return "null"
	case o.Description != "":
		return o.Description
	}
	return string(o.Type)
}

// dismissDialog answers a dialog nobody handles: beforeunload is accepted (so that the
// navigation goes on), the rest dismissed, as Playwright does.
func (bp *browserPage) dismissDialog(t page.DialogType) {
	_, _ = chromedp.Call(bp.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: t == page.DialogTypeBeforeunload})
}
