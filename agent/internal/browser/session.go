package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/agent/internal/browser/egress"
)

// session is one check's share of the browser: a slot, a browser context of its own and, when
// private targets are blocked, its egress proxy.
type session struct {
	b       *Browser
	inst    *instance
	id      cdp.BrowserContextID
	proxy   *egress.Proxy // nil when private targets are allowed
	release func()
}

// newSession waits for a slot and a running browser, then creates the check's browser context.
func (b *Browser) newSession(ctx context.Context) (*session, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: no browser slot was free before the deadline", ErrBrowserLost)
	}
	b.m.inUse.Inc()
	s := &session{b: b, release: func() { <-b.slots; b.m.inUse.Dec() }}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	inst, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	s.inst = inst
	params := target.CreateBrowserContextParams{DisposeOnDetach: ptr(true)}
	if b.cfg.BlockPrivateTargets {
		if s.proxy, err = egress.Start(egress.Config{Resolver: b.cfg.Resolver, Logger: b.log}); err != nil {
			return nil, err
		}
		params.ProxyServer = s.proxy.URL()
		// Chromium never proxies loopback unless told so; "<-loopback>" removes that rule, so
		// loopback goes through the policy like every other address.
		params.ProxyBypassList = "<-loopback>"
	}
	cctx, cancel := bound(inst.root, ctx)
	defer cancel()
	res, err := chromedp.CallBrowser(cctx, target.CreateBrowserContext, params)
	if err != nil {
		return nil, s.lostOr(ctx, fmt.Errorf("create the check's browser context: %w", err))
	}
	s.id = res.BrowserContextID
	ok = true
	return s, nil
}

// page returns a chromedp context for a new tab in the session's browser context, which also
// ends with ctx; cancel closes the tab.
func (s *session) page(ctx context.Context) (context.Context, context.CancelFunc) {
	tab, closeTab := chromedp.NewContext(s.inst.root, chromedp.WithExistingBrowserContext(s.id))
	pctx, cancel := bound(tab, ctx)
	return pctx, func() { cancel(); closeTab() }
}

// bound derives a context from chromedp context c that also ends when ctx does (its deadline
// included), so that calls on the browser honour the check's deadline without tying the
// browser's connection to it.
func bound(c, ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(c)
	if dl, ok := ctx.Deadline(); ok {
		var cancelDL context.CancelFunc
		out, cancelDL = context.WithDeadline(out, dl)
		prev := cancel
		cancel = func() { cancelDL(); prev() }
	}
	stop := context.AfterFunc(ctx, cancel)
	return out, func() { stop(); cancel() }
}

// lostOr returns ErrBrowserLost when the browser went away while the session used it (err is
// then only a symptom of that), or err. A crash shows in the check's calls a moment before the
// process is seen to exit, so a failure whose context is still live waits briefly to tell.
func (s *session) lostOr(ctx context.Context, err error) error {
	if err == nil || s.inst == nil {
		return err
	}
	if errors.Is(err, ErrBrowserLost) {
		return err
	}
	wait := time.NewTimer(time.Second)
	defer wait.Stop()
	select {
	case <-s.inst.lost:
	case <-s.inst.proc.exited:
	case <-wait.C:
		if !s.inst.gone() {
			return err
		}
	}
	return fmt.Errorf("%w (%v)", ErrBrowserLost, err)
}

// close disposes of the browser context (closing every page the check opened), stops the
// proxy and frees the slot.
func (s *session) close() {
	if s.id != "" && !s.inst.gone() {
		ctx, cancel := context.WithTimeout(s.inst.root, 5*time.Second)
		if _, err := chromedp.CallBrowser(ctx, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: s.id}); err != nil {
			s.b.log.Warn("dispose of a check's browser context", "err", err)
		}
		cancel()
	}
	if s.proxy != nil {
		s.proxy.Close() //nolint:errcheck // closing a listener we own
	}
	s.release()
}

// blocked describes what the egress proxy refused during the session, or "".
func (s *session) blocked() string {
	if s.proxy == nil {
		return ""
	}
	bl := s.proxy.Blocked()
	if len(bl) == 0 {
		return ""
	}
	out := bl[0].String()
	if len(bl) > 1 {
		out += fmt.Sprintf(" and %d more", len(bl)-1)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
