package pwscript

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/dop251/goja"
)

// page.addLocatorHandler: before each try of an action (and of the reads that wait for their
// element), the runtime looks for the handlers' locators, as Playwright does; one that is
// visible (a cookie banner, a newsletter dialog) has its handler run on the loop, and then
// the action waits for it to be hidden (unless noWaitAfter) before going on.

type locatorHandler struct {
	loc         *locator
	obj         *goja.Object // the script's locator, passed to the handler
	fn          goja.Callable
	noWaitAfter bool
	left        atomic.Int64 // times left; <0: unlimited
}

type locatorHandlers struct {
	mu      sync.Mutex
	list    []*locatorHandler
	running atomic.Bool // a handler is running: its own actions do not look for handlers
}

func (h *locatorHandlers) snapshot() []*locatorHandler {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*locatorHandler(nil), h.list...)
}

func (h *locatorHandlers) remove(drop func(*locatorHandler) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := h.list[:0]
	for _, x := range h.list {
		if !drop(x) {
			keep = append(keep, x)
		}
	}
	h.list = keep
}

// addLocatorHandlers adds addLocatorHandler and removeLocatorHandler.
func (r *run) addLocatorHandlers(m map[string]any) {
	hs := r.net.handlers
	m["addLocatorHandler"] = func(call goja.FunctionCall) goja.Value {
		l := r.locatorArg(call.Argument(0), "page.addLocatorHandler")
		fn := r.argFunc(call, 1, "page.addLocatorHandler", "handler")
		opts := r.options(r.argObject(call, 2, "page.addLocatorHandler"), "page.addLocatorHandler", "noWaitAfter", "times")
		h := &locatorHandler{loc: l, obj: call.Argument(0).(*goja.Object), fn: fn}
		h.left.Store(-1)
		if v, ok := opts["times"]; ok {
			h.left.Store(v.ToInteger())
		}
		h.noWaitAfter = opts["noWaitAfter"] != nil && opts["noWaitAfter"].ToBoolean()
		hs.mu.Lock()
		hs.list = append(hs.list, h)
		hs.mu.Unlock()
		return r.resolved(goja.Undefined())
	}
	m["removeLocatorHandler"] = func(call goja.FunctionCall) goja.Value {
		l := r.locatorArg(call.Argument(0), "page.removeLocatorHandler")
		hs.remove(func(h *locatorHandler) bool { return h.loc.desc == l.desc }) // the same selector, as Playwright compares them
		return r.resolved(goja.Undefined())
	}
}

// runLocatorHandlers runs, off the loop, the handlers whose locator is visible now. It is
// called before each try of an action.
func (r *run) runLocatorHandlers(ctx context.Context) error {
	if r.net == nil || r.net.handlers.running.Load() {
		return nil
	}
	for _, h := range r.net.handlers.snapshot() {
		visible := h.loc.with("filter({ visible: true })", selStep{Kind: "filter", Visible: new(true)})
		res, err := r.browser.query(ctx, visible, "count", nil, "", nil)
		if err != nil || res.N == 0 {
			continue // a page in the middle of a navigation is looked at on the next try
		}
		if h.left.Load() > 0 && h.left.Add(-1) == 0 {
			r.net.handlers.remove(func(x *locatorHandler) bool { return x == h })
		}
		if err := r.callHandler(ctx, h); err != nil {
			return err
		}
		if h.noWaitAfter {
			continue
		}
		err = poll(ctx, func() (bool, error) {
			res, err := r.browser.query(ctx, visible, "count", nil, "", nil)
			return err == nil && res.N == 0, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// callHandler runs a handler on the loop and waits until the promise it returns settles.
func (r *run) callHandler(ctx context.Context, h *locatorHandler) error {
	hs := r.net.handlers
	hs.running.Store(true)
	defer hs.running.Store(false)
	done := make(chan error, 1)
	r.loop.post(func() error {
		v, err := h.fn(goja.Undefined(), h.obj)
		if err != nil {
			done <- err
			return nil
		}
		p, ok := v.Export().(*goja.Promise)
		if !ok || p == nil {
			done <- nil
			return nil
		}
		then, _ := goja.AssertFunction(v.(*goja.Object).Get("then"))
		_, err = then(v,
			r.vm.ToValue(func(goja.FunctionCall) goja.Value { done <- nil; return goja.Undefined() }),
			r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
				done <- opErr(CauseScript, "locator handler: %s", r.failureOfValue(c.Argument(0)).Message)
				return goja.Undefined()
			}))
		return err
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
