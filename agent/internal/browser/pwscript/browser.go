package pwscript

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserPage is the tab as the runtime sees it: the main frame's navigation state, kept from
// CDP events, and the CDP calls the API makes. Its methods are safe for concurrent use.
type browserPage struct {
	ctx    context.Context // the tab's context, bounded by the run
	cancel context.CancelFunc
	opts   Options
	// closeContext closes the tab and disposes of the browser context the run created for
	// it; a no-op for the context the caller gave.
	closeContext func()

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change of the state below
	mainFrame cdp.FrameID
	url       string
	loaderID  cdp.LoaderID
	lifecycle map[cdp.LoaderID]map[string]bool
	responses map[cdp.LoaderID]*network.Response
	requested int // main-frame navigations requested by the page (link, form, location)
	committed int // main-frame documents committed
	stopped   int // times the main frame stopped loading
	crashed   bool
	refused   string // the first URL Chromium refused the page (RefusedLoad), or ""

	dialogListeners atomic.Int32         // the script's dialog listeners: with none, dialogs are dismissed
	childFrames     func() []cdp.FrameID // the frames below the main one (frames.go), set once at start
	mainContext     func() runtime.ExecutionContextID
	framePath       func(cdp.FrameID) []framePathStep
}

func newBrowserPage(tab context.Context, opts Options) (*browserPage, error) {
	ctx, cancel := context.WithCancel(tab)
	bp := &browserPage{
		ctx: ctx, cancel: cancel, opts: opts, changed: make(chan struct{}), closeContext: func() {},
		lifecycle: map[cdp.LoaderID]map[string]bool{}, responses: map[cdp.LoaderID]*network.Response{},
	}
	if err := chromedp.Listen(ctx, bp.onEvent); err != nil {
		cancel()
		return nil, err
	}
	if _, err := chromedp.Call(ctx, page.SetLifecycleEventsEnabled, page.SetLifecycleEventsEnabledParams{Enabled: true}); err != nil {
		cancel()
		return nil, fmt.Errorf("enable lifecycle events: %w", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(opts.ViewportWidth), Height: int64(opts.ViewportHeight), DeviceScaleFactor: cmp.Or(opts.deviceScaleFactor, 1),
		Mobile: opts.mobile,
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("set the viewport: %w", err)
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("get the frame tree: %w", err)
	}
	bp.mu.Lock()
	f := tree.FrameTree.Frame
	bp.mainFrame, bp.url, bp.loaderID = f.ID, f.URL+f.URLFragment, f.LoaderID
	// The document already there has loaded as far as it will.
	bp.lifecycle[f.LoaderID] = map[string]bool{"commit": true, "DOMContentLoaded": true, "load": true, "networkIdle": true}
	bp.mu.Unlock()
	return bp, nil
}

func (bp *browserPage) close() { bp.cancel() }

// onEvent runs on chromedp's reading goroutine: it only updates the state.
func (bp *browserPage) onEvent(ev any) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID != "" {
			return
		}
		bp.mainFrame, bp.url, bp.loaderID = ev.Frame.ID, ev.Frame.URL+ev.Frame.URLFragment, ev.Frame.LoaderID
		bp.committed++
		bp.lifecycleOf(ev.Frame.LoaderID)["commit"] = true
	case *page.EventNavigatedWithinDocument:
		if ev.FrameID != bp.mainFrame {
			return
		}
		bp.url = ev.URL
		bp.committed++
	case *page.EventLifecycleEvent:
		if ev.FrameID != bp.mainFrame {
			return
		}
		bp.lifecycleOf(ev.LoaderID)[ev.Name] = true
	case *page.EventFrameRequestedNavigation:
		if ev.FrameID != bp.mainFrame {
			return
		}
		bp.requested++
	case *page.EventFrameStoppedLoading:
		if ev.FrameID != bp.mainFrame {
			return
		}
		bp.stopped++
	case *network.EventResponseReceived:
		if ev.Type != network.ResourceTypeDocument || ev.FrameID != bp.mainFrame {
			return
		}
		bp.responses[ev.LoaderID] = ev.Response
	case *page.EventJavascriptDialogOpening:
		if bp.dialogListeners.Load() > 0 {
			return // the script's page.on('dialog') answers it (events.go)
		}
		// Dismissed, as Playwright does when the script does not handle dialogs: an alert
		// would otherwise block the page. Commands cannot run on this goroutine.
		go func() {
			_, _ = chromedp.Call(bp.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: ev.Type == page.DialogTypeBeforeunload})
		}()
		return
	case *log.EventEntryAdded:
		if u, ok := RefusedLoad(ev.Entry); ok && bp.refused == "" {
			bp.refused = u
		}
		return
	case *inspector.EventTargetCrashed:
		bp.crashed = true
	default:
		return
	}
	close(bp.changed)
	bp.changed = make(chan struct{})
}

func (bp *browserPage) lifecycleOf(id cdp.LoaderID) map[string]bool {
	m := bp.lifecycle[id]
	if m == nil {
		m = map[string]bool{}
		bp.lifecycle[id] = m
	}
	return m
}

// errCrashed is the page crashing under the script.
var errCrashed = &opError{msg: "the page crashed", cause: CauseBrowser}

// waitState waits until cond (called with the lock held) holds or ctx ends.
func (bp *browserPage) waitState(ctx context.Context, cond func() bool) error {
	for {
		bp.mu.Lock()
		if bp.crashed {
			bp.mu.Unlock()
			return errCrashed
		}
		if cond() {
			bp.mu.Unlock()
			return nil
		}
		ch := bp.changed
		bp.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// currentURL is page.url(): the main frame's URL.
func (bp *browserPage) currentURL() string {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.url
}

// navState is a snapshot of the navigation counters, taken before an action.
type navState struct{ requested, committed, stopped int }

func (bp *browserPage) navState() navState {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return navState{bp.requested, bp.committed, bp.stopped}
}

// settleNavigation waits, after an action, for a navigation the action started to commit
// (or to stop: a download, a 204, an error), as Playwright's actions do.
func (bp *browserPage) settleNavigation(ctx context.Context, before navState) error {
	// A navigation requested by a click is reported after the input event is handled; give
	// the event a moment to arrive before deciding there is none.
	time.Sleep(5 * time.Millisecond)
	bp.mu.Lock()
	started := bp.requested > before.requested
	bp.mu.Unlock()
	if !started {
		return nil
	}
	return bp.waitState(ctx, func() bool { return bp.committed > before.committed || bp.stopped > before.stopped })
}

// waitLifecycle waits until the document of loader has reached state ("load",
// "DOMContentLoaded", "networkIdle" or "commit"); an empty loader means the current one.
func (bp *browserPage) waitLifecycle(ctx context.Context, loader cdp.LoaderID, state string) error {
	return bp.waitState(ctx, func() bool {
		id := loader
		if id == "" {
			id = bp.loaderID
		}
		return bp.lifecycle[id][state]
	})
}

// response returns the main document response of loader, if one was seen.
func (bp *browserPage) response(loader cdp.LoaderID) *network.Response {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.responses[loader]
}

// lifecycleName maps Playwright's waitUntil values to Chromium's lifecycle events.
func lifecycleName(waitUntil string) (string, bool) {
	switch waitUntil {
	case "", "load":
		return "load", true
	case "domcontentloaded":
		return "DOMContentLoaded", true
	case "networkidle":
		return "networkIdle", true
	case "commit":
		return "commit", true
	}
	return "", false
}

// evaluate runs expression in the page's main world and returns its JSON value.
func (bp *browserPage) evaluate(ctx context.Context, expression string) (json.RawMessage, error) {
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expression, ReturnByValue: new(true), AwaitPromise: new(true), Silent: new(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, &pageException{exceptionText(res.ExceptionDetails)}
	}
	return remoteValue(res.Result), nil
}

// callOn calls the function declaration fn with this = object and args (JSON values or
// remote object ids), returning the JSON value of its result.
func (bp *browserPage) callOn(ctx context.Context, object runtime.RemoteObjectID, fn string, args ...*runtime.CallArgument) (json.RawMessage, error) {
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: object, Arguments: args,
		ReturnByValue: new(true), AwaitPromise: new(true), Silent: new(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, &pageException{exceptionText(res.ExceptionDetails)}
	}
	return remoteValue(res.Result), nil
}

func remoteValue(o *runtime.RemoteObject) json.RawMessage {
	if o == nil || o.Type == runtime.RemoteObjectTypeUndefined {
		return nil
	}
	if o.UnserializableValue != "" {
		return json.RawMessage(fmt.Sprintf("%q", string(o.UnserializableValue)))
	}
	if len(o.Value) == 0 {
		return nil
	}
	return json.RawMessage(o.Value)
}

// pageException is an exception thrown by JavaScript in the page.
type pageException struct{ text string }

func (e *pageException) Error() string { return e.text }

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return strings.SplitN(d.Exception.Description, "\n    at ", 2)[0]
	}
	return d.Text
}

// transient tells whether a CDP error comes from a document going away under the call (a
// navigation), so that a polling operation should try again.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var pe *pageException
	if errors.As(err, &pe) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{
		"Execution context was destroyed", "Cannot find context", "Cannot find default execution context",
		"Inspected target navigated or closed", "No node with given id", "Could not find node", "Node is detached",
		"Cannot find object with id", "uniqueContextId not found",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// refusal is the first URL Chromium refused the page, once the events the page sent so far
// have arrived (a round trip through its renderer, a moment at most, and none past the run's
// deadline), or "".
func (bp *browserPage) refusal() string {
	ctx, cancel := context.WithTimeout(bp.ctx, 500*time.Millisecond)
	defer cancel()
	_, _ = chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return bp.refused
}
