package pwscript

import (
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
// test.use that apply to it, and makes it the page the API drives.
func (r *run) openTestPage(first bool, co *contextOptions) error {
	tab, closeTab := r.tab, func() {}
	if !first {
		var opts []chromedp.CreateBrowserContextOption
		if r.base.ContextProxy != "" {
			opts = append(opts, func(p *target.CreateBrowserContextParams) {
				p.ProxyServer = r.base.ContextProxy
				// Chromium never proxies loopback unless told so: "<-loopback>" removes that rule.
				p.ProxyBypassList = "<-loopback>"
			})
		}
		tab, closeTab = chromedp.NewContext(r.tab, chromedp.WithNewBrowserContext(opts...))
		if err := chromedp.Do(tab); err != nil {
			closeTab()
			return fmt.Errorf("open a browser context: %w", err)
		}
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
	r.pageObj = r.pageObject()
	return nil
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
