package pwscript

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// Each test gets a fresh browser context and page, as in Playwright Test: nothing a test
// leaves behind — cookies, localStorage, sessionStorage, IndexedDB, cache, permissions — is
// seen by the next, test.describe.serial included. The first test runs in the context the run
// was given (fresh already); each later one in a context created over CDP
// (Target.createBrowserContext) in the same Chromium, behind Options.ContextProxy, and
// disposed of when the test ends. The cost is a CDP round trip or three, not a browser
// (BenchmarkFreshContext).

// openTestPage opens the browser context and page of the next test, with the options of
// test.use that apply to it, and makes it the page the API drives. When more tests follow, it
// starts opening the next test's context meanwhile: a context costs Chromium a renderer,
// hundreds of milliseconds that the running test hides.
func (r *run) openTestPage(first, more bool, co *contextOptions) error {
	tab, closeTab := r.tab, func() {}
	if !first {
		next := r.nextContext
		r.nextContext = nil
		if next == nil {
			next = r.prepareContext()
		}
		select {
		case <-next.ready:
		case <-r.tab.Done():
			next.cancel()
			return r.tab.Err()
		}
		if next.err != nil {
			next.cancel()
			return fmt.Errorf("open a browser context: %w", next.err)
		}
		tab, closeTab = next.tab, next.cancel
	}
	if more {
		r.nextContext = r.prepareContext()
	}
	r.opts = r.testOptions(co)
	bp, err := newBrowserPage(tab, r.opts)
	if err == nil {
		err = co.apply(bp.ctx, r.base.UserAgent)
	}
	if err != nil {
		if bp != nil {
			bp.close()
		}
		closeTab()
		return err
	}
	bp.closeContext = closeTab
	r.browser, r.pageTab, r.useOpts = bp, tab, co
	// Listeners, routes and frames belong to the test's page: a fresh page, fresh watching.
	if err := r.watchPage(); err != nil {
		r.closeTestPage()
		return err
	}
	r.pageObj = r.pageObject()
	r.contextObj = r.contextObject(tab, bp)
	// page.context() is the test's context too.
	must(r.pageObj.Set("context", func(goja.FunctionCall) goja.Value { return r.contextObj }))
	return nil
}

// preparedContext is a browser context with a tab, being opened for a later test.
type preparedContext struct {
	tab    context.Context
	cancel context.CancelFunc
	ready  chan struct{} // closed once opened; err tells how
	err    error
}

// prepareContext starts opening a fresh browser context (behind Options.ContextProxy) and a
// tab in it.
func (r *run) prepareContext() *preparedContext {
	var opts []chromedp.CreateBrowserContextOption
	if r.base.ContextProxy != "" {
		opts = append(opts, func(p *target.CreateBrowserContextParams) {
			p.ProxyServer = r.base.ContextProxy
			// Chromium never proxies loopback unless told so: "<-loopback>" removes that rule.
			p.ProxyBypassList = "<-loopback>"
		})
	}
	pc := &preparedContext{ready: make(chan struct{})}
	pc.tab, pc.cancel = chromedp.NewContext(r.tab, chromedp.WithNewBrowserContext(opts...))
	go func() {
		defer close(pc.ready)
		pc.err = chromedp.Do(pc.tab)
	}()
	return pc
}

// discardPreparedContext closes a context opened for a test that did not run.
func (r *run) discardPreparedContext() {
	if next := r.nextContext; next != nil {
		r.nextContext = nil
		<-next.ready
		next.cancel()
	}
}

// closeTestPage closes the test's page and disposes of its browser context; it returns the
// URL the page was refused, if any.
func (r *run) closeTestPage() string {
	bp := r.browser
	if bp == nil {
		return ""
	}
	refused := bp.refusal()
	bp.close()
	bp.closeContext()
	r.browser, r.pageObj = nil, nil
	return refused
}

// testOptions are the run's options with a test's test.use options applied.
func (r *run) testOptions(co *contextOptions) Options {
	o := r.base
	if co.viewport != nil {
		o.ViewportWidth, o.ViewportHeight = int(co.viewport[0]), int(co.viewport[1])
	}
	if co.actionTimeout != nil {
		o.ActionTimeout = *co.actionTimeout
	}
	if co.testIDAttribute != "" {
		o.TestIDAttribute = co.testIDAttribute
	}
	if co.baseURL != "" {
		o.BaseURL = co.baseURL
	}
	o.deviceScaleFactor, o.mobile = co.deviceScaleFactor, co.isMobile
	return o
}

// navigationBudget is the budget of a navigation: navigationTimeout of test.use, else as an
// action's.
func (r *run) navigationBudget(opts map[string]goja.Value) budget {
	b := r.actionBudget(opts)
	if _, own := opts["timeout"]; !own && r.useOpts != nil && r.useOpts.navigationTimeout != nil {
		b.own = *r.useOpts.navigationTimeout
	}
	return b
}
