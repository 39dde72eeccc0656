package browser

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
)

// The scheme guard keeps every check away from the agent's host: no page of any check loads a
// URL that pwscript.AllowedURL refuses (file:, view-source:, chrome: and any other non-web
// scheme), however it asks — page.goto, location.href, a link, window.open, an iframe, a
// redirect or fetch().
//
// Two layers see to it:
//
//   - The browser refuses. Request interception (Fetch.enable) on the browser's own DevTools
//     session pauses every request of every browser context — pages, frames, popups, workers
//     — before it is made, and every document response; the agent lets through what
//     AllowedURL allows and fails the rest (net::ERR_BLOCKED_BY_CLIENT), redirects included.
//     This is what stops the loads Chromium would make itself: a navigation the agent's or a
//     script's DevTools session asks for (view-source:file:… arrives as its file: request).
//   - Chromium refuses a web page's own reach for a local resource before any request exists
//     ("Not allowed to load local resource"); it says so in the tab's log, which the agent
//     (URL checks) or the script's runtime (pwscript) reads, so that it is reported too.
//
// Either way the check fails with "not allowed: <scheme>:" as the script's (or the URL's)
// fault, never the target's.

// guard enables the browser-wide interception on inst's connection (root); it must be on before
// any check's browser context exists.
func (b *Browser) guard(root context.Context) error {
	if err := chromedp.ListenBrowser(root, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			go b.decide(root, e) // commands cannot run on the reading goroutine
		}
	}); err != nil {
		return err
	}
	_, err := chromedp.CallBrowser(root, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: "*", RequestStage: fetch.RequestStageRequest},
		// A redirect's next URL is known only from the response; Chromium itself refuses only
		// some schemes there, and without saying which.
		{URLPattern: "*", ResourceType: network.ResourceTypeDocument, RequestStage: fetch.RequestStageResponse},
	}})
	return err
}

// decide lets a paused request (or document response) go on, or fails it when it would load
// a URL AllowedURL refuses.
func (b *Browser) decide(root context.Context, e *fetch.EventRequestPaused) {
	atResponse := e.ResponseStatusCode != 0 || e.ResponseErrorReason != ""
	next := e.Request.URL
	if atResponse {
		next = redirectTarget(e)
	}
	var err error
	switch _, ok := pwscript.AllowedURL(next); {
	case next != "" && !ok:
		if s := b.sessionOfFrame(root, e.FrameID); s != nil {
			s.refuse(next)
		}
		_, err = chromedp.CallBrowser(root, fetch.FailRequest, fetch.FailRequestParams{
			RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
	case atResponse:
		_, err = chromedp.CallBrowser(root, fetch.ContinueResponse, fetch.ContinueResponseParams{RequestID: e.RequestID})
	default:
		_, err = chromedp.CallBrowser(root, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
	}
	if err != nil && root.Err() == nil {
		// The page or its browser context went away meanwhile: nothing is left to decide.
		b.log.Debug("decide on a paused request", "err", err)
	}
}

// redirectTarget is the URL a document response redirects to, or "".
func redirectTarget(e *fetch.EventRequestPaused) string {
	switch e.ResponseStatusCode {
	case 301, 302, 303, 307, 308:
	default:
		return ""
	}
	for _, h := range e.ResponseHeaders {
		if !strings.EqualFold(h.Name, "Location") {
			continue
		}
		base, err := url.Parse(e.Request.URL)
		if err != nil {
			return h.Value
		}
		loc, err := base.Parse(h.Value)
		if err != nil {
			return h.Value
		}
		return loc.String()
	}
	return ""
}

// sessionOfFrame finds the check whose browser context holds the frame that made a request:
// the frame of a page (or of a cross-site iframe) is a target of its own.
func (b *Browser) sessionOfFrame(root context.Context, frame cdp.FrameID) *session {
	ctx, cancel := context.WithTimeout(root, 5*time.Second)
	defer cancel()
	info, err := chromedp.CallBrowser(ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: target.ID(frame)})
	if err != nil || info.TargetInfo == nil {
		return nil // refused all the same, only not reported
	}
	b.sessionsMu.Lock()
	defer b.sessionsMu.Unlock()
	return b.sessions[info.TargetInfo.BrowserContextID]
}

// register makes s the session of its browser context, for sessionOfFrame.
func (b *Browser) register(s *session) {
	b.sessionsMu.Lock()
	defer b.sessionsMu.Unlock()
	b.sessions[s.id] = s
}

func (b *Browser) unregister(s *session) {
	b.sessionsMu.Lock()
	defer b.sessionsMu.Unlock()
	delete(b.sessions, s.id)
}

// refusals are what a session's pages were refused, each once, in order.
type refusals struct {
	mu   sync.Mutex
	urls []string
}

// maxRefusals bounds what a session keeps: the first one is reported.
const maxRefusals = 16

func (s *session) refuse(u string) {
	r := &s.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.urls) < maxRefusals && !slices.Contains(r.urls, u) {
		r.urls = append(r.urls, u)
	}
}

// refused describes the session's first refusal (pwscript.NotAllowed), or "".
func (s *session) refused() string {
	r := &s.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.urls) == 0 {
		return ""
	}
	return pwscript.NotAllowed(r.urls[0])
}

// onTabEvent records what Chromium refused a URL check's page itself.
func (s *session) onTabEvent(ev any) {
	if e, ok := ev.(*log.EventEntryAdded); ok {
		if u, ok := pwscript.RefusedLoad(e.Entry); ok {
			s.refuse(u)
		}
	}
}

// settle waits until the events the tab sent before now have been handled (a round trip
// through its renderer), so that refusals of the run's last moments are recorded. A page
// whose script keeps the renderer busy gets a moment, not more.
func (s *session) settle() {
	tab, cancel := context.WithTimeout(s.tab, 500*time.Millisecond)
	defer cancel()
	_, _ = chromedp.Call(tab, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
}
