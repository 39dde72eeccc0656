package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/agent/internal/browser/egress"
)

// session is one check's share of the browser: a slot, a browser context of its own with one
// tab, and, when private targets are blocked, its egress proxy.
//
// Opening a tab in a new browser context costs a new renderer process, most of a simple
// check's time. So sessions are made ahead (warm, up to Concurrency of them, by keepWarm): a
// check takes a ready one and only navigates. A warm session has served nobody, so it shares
// nothing with any check.
type session struct {
	b     *Browser
	inst  *instance
	id    cdp.BrowserContextID
	proxy *egress.Proxy // nil when private targets are allowed

	targetID target.ID       // the session's tab
	tab      context.Context // chromedp, attached to the tab (URL checks); nil for scripts
	closeTab context.CancelFunc
	frame    cdp.FrameID // the tab's main frame

	release func() // frees the slot; nil while the session is warm

	refusals refusals // loads the scheme guard refused (guard.go)
}

// tabMode says what a session's tab is made for.
type tabMode int

const (
	attached tabMode = iota // the agent drives the tab (URL checks)
	detached                // a script worker attaches to it
)

// newSession waits for a slot, then takes a warm session (or makes one) with a tab for mode.
func (b *Browser) newSession(ctx context.Context, mode tabMode) (*session, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: no browser slot was free before the deadline", ErrBrowserLost)
	}
	b.m.inUse.Inc()
	release := func() { <-b.slots; b.m.inUse.Dec() }
	defer b.want(warmKind(mode))
	for {
		var s *session
		select {
		case s = <-b.warm[mode]:
		default:
		}
		if s == nil {
			break
		}
		if s.inst.gone() {
			s.close()
			continue
		}
		s.release = release
		return s, nil
	}
	inst, err := b.current(ctx)
	if err != nil {
		release()
		return nil, err
	}
	s, err := b.prepare(ctx, inst, mode)
	if err != nil {
		release()
		return nil, err
	}
	s.release = release
	return s, nil
}

// What keepWarm makes ahead: a session of each tab mode, or a script worker.
type warmKind int

const (
	warmAttached = warmKind(attached)
	warmDetached = warmKind(detached)
	warmWorker   = warmKind(2)
)

// want asks keepWarm for one more of kind, because a check just took one (or found none).
func (b *Browser) want(kind warmKind) {
	select {
	case b.demand <- kind:
	default: // enough asked for already
	}
}

// keepWarm makes sessions and script workers ahead of the checks that will use them, one for
// each one a check takes, so that a check starts on a ready renderer (and a ready worker)
// instead of waiting for one. It starts with one of each and keeps at most Concurrency of each
// kind; everything made ahead is closed when ctx ends.
func (b *Browser) keepWarm(ctx context.Context) {
	for _, k := range []warmKind{warmAttached, warmDetached, warmWorker} {
		b.want(k)
	}
	// As many at once as checks may run, so that making them ahead keeps up with the checks.
	busy := make(chan struct{}, b.cfg.Concurrency)
	var failures atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		b.drainWarm()
	}()
	for {
		var kind warmKind
		select {
		case kind = <-b.demand:
		case <-ctx.Done():
			return
		}
		select {
		case busy <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Go(func() {
			defer func() { <-busy }()
			inst, err := b.current(ctx)
			if err != nil {
				return
			}
			if err := b.makeWarm(ctx, inst, kind); err != nil {
				n := failures.Add(1)
				if ctx.Err() == nil && !inst.gone() && n%10 == 1 {
					b.log.Warn("cannot prepare ahead of a check", "err", err)
				}
				sleep(ctx, min(100*time.Millisecond*time.Duration(n), 5*time.Second))
				b.want(kind) // try again
				return
			}
			failures.Store(0)
		})
	}
}

// makeWarm makes one of kind and parks it, or throws it away when enough are parked.
func (b *Browser) makeWarm(ctx context.Context, inst *instance, kind warmKind) error {
	if kind == warmWorker {
		w, err := b.spawn(inst)
		if err != nil {
			return err
		}
		select {
		case b.workers <- w:
		default:
			w.kill()
		}
		return nil
	}
	s, err := b.prepare(ctx, inst, tabMode(kind))
	if err != nil {
		return err
	}
	select {
	case b.warm[kind] <- s:
	default:
		s.close()
	}
	return nil
}

// drainWarm closes everything made ahead.
func (b *Browser) drainWarm() {
	for {
		select {
		case s := <-b.warm[attached]:
			s.close()
		case s := <-b.warm[detached]:
			s.close()
		case w := <-b.workers:
			w.kill()
		default:
			return
		}
	}
}

// prepare creates a browser context (behind its egress proxy when private targets are
// blocked) with one tab: attached and ready to navigate, or, for a script worker, created only.
func (b *Browser) prepare(ctx context.Context, inst *instance, mode tabMode) (s *session, err error) {
	s = &session{b: b, inst: inst}
	defer func() {
		if err != nil {
			s.close()
			err = s.lostOr(ctx, err)
		}
	}()
	params := target.CreateBrowserContextParams{DisposeOnDetach: ptr(true)}
	if b.cfg.BlockPrivateTargets {
		if s.proxy, err = egress.Start(egress.Config{Resolver: b.cfg.Resolver, Logger: b.log}); err != nil {
			return s, err
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
		return s, fmt.Errorf("create a browser context: %w", err)
	}
	s.id = res.BrowserContextID
	b.register(s)
	tr, err := chromedp.CallBrowser(cctx, target.CreateTarget, target.CreateTargetParams{
		URL: "about:blank", BrowserContextID: s.id, NewWindow: ptr(true),
	})
	if err != nil {
		return s, fmt.Errorf("open a tab: %w", err)
	}
	s.targetID = tr.TargetID
	if mode == detached {
		return s, nil
	}
	// Detach rather than close when done: disposing of the browser context closes the tab.
	tab, closeTab := chromedp.NewContext(inst.root, chromedp.WithTargetID(s.targetID), chromedp.WithDetachOnCancel())
	s.tab, s.closeTab = tab, closeTab
	// The tab's first call attaches to it, and the tab's events flow as long as the context
	// of that call lives: it must be the tab's own context, ended early only if ctx ends.
	stop := context.AfterFunc(ctx, closeTab)
	defer stop()
	tree, err := chromedp.Call(tab, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return s, fmt.Errorf("open a tab: %w", err)
	}
	s.frame = tree.FrameTree.Frame.ID
	// What Chromium refuses the page itself (a script's worker hears it in its own tab).
	if err := chromedp.Listen(tab, s.onTabEvent); err != nil {
		return s, fmt.Errorf("listen to the tab: %w", err)
	}
	return s, nil
}

// page returns the session's tab bound to ctx: calls on it end with ctx.
func (s *session) page(ctx context.Context) (context.Context, context.CancelFunc) {
	return bound(s.tab, ctx)
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
// process is seen to exit, so a failure waits briefly to tell.
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
	return fmt.Errorf("%w: it crashed or stopped answering during the check and is being restarted (%v)", ErrBrowserLost, err)
}

// close disposes of the browser context (closing every page the check opened), stops the
// proxy and frees the slot.
func (s *session) close() {
	if s.closeTab != nil {
		s.closeTab()
	}
	if s.id != "" {
		s.b.unregister(s)
	}
	if s.id != "" && !s.inst.gone() {
		ctx, cancel := context.WithTimeout(s.inst.root, 5*time.Second)
		if _, err := chromedp.CallBrowser(ctx, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: s.id}); err != nil && !s.inst.gone() {
			s.b.log.Warn("dispose of a check's browser context", "err", err)
		}
		cancel()
	}
	if s.proxy != nil {
		s.proxy.Close() //nolint:errcheck // closing a listener we own
	}
	if s.release != nil {
		s.release()
	}
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
