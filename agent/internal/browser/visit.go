package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
)

// MaxDOM is how much of the rendered DOM (and of its text) a URL check reads and judges.
const MaxDOM = 1 << 20

// VisitRequest is a URL check.
type VisitRequest struct {
	URL     string
	Headers map[string]string // sent with every request of the page; a User-Agent here replaces the browser's
}

// Page is what a URL check observed.
type Page struct {
	// URL is where the page ended up, after redirects.
	URL string
	// Status is the main document's HTTP status (of the final response after redirects); 0
	// when no response arrived.
	Status     int
	StatusText string
	Header     http.Header
	// HTML is the rendered DOM (document.documentElement.outerHTML) once the page loaded, at
	// most MaxDOM bytes; Text is its visible text (document.body.innerText).
	HTML, Text string
	Truncated  bool
	// LoadError is Chromium's reason when the navigation failed ("net::ERR_CONNECTION_REFUSED").
	LoadError string
	// TimedOut is set when the deadline passed before the page finished loading; what had
	// arrived by then is filled in.
	TimedOut bool
	// Blocked names what the egress proxy refused (private targets), or "".
	Blocked string
	// Refused says what the page was not allowed to load (pwscript.NotAllowed: a file:,
	// view-source: or other non-web URL, the check's own or one the page reached for), or "".
	Refused string
	Timings Timings
	// Screenshot is a JPEG of the viewport, taken when the caller's judge failed the page.
	Screenshot []byte
}

// Timings are the main document's Navigation Timing figures; a phase that did not happen (a
// reused connection, plain HTTP) is zero. With BlockPrivateTargets, DNS and Connect are the
// egress proxy's own resolution of and TCP connection to the target (the browser only sees its
// hop to the proxy), and TLS is the browser's handshake through the tunnel.
type Timings struct {
	DNS, Connect, TLS time.Duration
	// FirstByte is from the start of the navigation to the first byte of the final response;
	// Data from there to its last byte.
	FirstByte, Data time.Duration
	// DOMContentLoaded and Load are from the start of the navigation to the end of those events.
	DOMContentLoaded, Load time.Duration
	// Total is the wall-clock time of the visit, from the navigation to the DOM being read.
	Total time.Duration
}

// Visit loads req.URL in a new tab of a fresh browser context, waits for the load event (or the
// deadline of ctx), and reads the main document's response, its timings and the rendered DOM.
// judge, when not nil, is called with the page while it is still open; when it returns false
// (the page fails), a screenshot is taken.
//
// A target that fails (refuses, times out, answers 500) is a Page, not an error. The error is
// ErrBrowserLost when the browser went away, or ctx's error when ctx was cancelled.
func (b *Browser) Visit(ctx context.Context, req VisitRequest, judge func(*Page) bool) (*Page, error) {
	if _, ok := pwscript.AllowedURL(req.URL); !ok {
		return &Page{Refused: pwscript.NotAllowed(req.URL)}, nil
	}
	s, err := b.newSession(ctx, attached)
	if err != nil {
		return nil, err
	}
	defer s.close()
	tab, closeTab := s.page(ctx)
	defer closeTab()

	// Listen to the main frame's document responses before navigating.
	var (
		mu       sync.Mutex
		mainResp *network.Response
	)
	if err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Type == network.ResourceTypeDocument && e.FrameID == s.frame {
			mu.Lock()
			mainResp = e.Response
			mu.Unlock()
		}
	}); err != nil {
		return nil, s.lostOr(ctx, fmt.Errorf("listen to the tab: %w", err))
	}
	if len(req.Headers) > 0 {
		h := network.Headers{}
		for k, v := range req.Headers {
			h[k] = v
		}
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
			return nil, s.lostOr(ctx, fmt.Errorf("set the check's headers: %w", err))
		}
	}

	p := &Page{}
	start := time.Now()
	_, navErr := chromedp.Run(tab, chromedp.NavigateResponse(req.URL))
	mu.Lock()
	if r := mainResp; r != nil {
		p.Status, p.StatusText, p.URL = int(r.Status), r.StatusText, r.URL
		p.Header = toHeader(r.Headers)
	}
	mu.Unlock()
	var loadErr *chromedp.LoadError
	switch {
	case navErr == nil:
	case errors.As(navErr, &loadErr):
		p.LoadError = loadErr.ErrorText
	case errors.Is(ctx.Err(), context.Canceled):
		return nil, ctx.Err()
	case pastDeadline(ctx):
		p.TimedOut = true
	default:
		return nil, s.lostOr(ctx, fmt.Errorf("navigate: %w", navErr))
	}
	p.Blocked = s.blocked()
	if p.LoadError == "" && !p.TimedOut {
		if err := b.readPage(tab, p); err != nil {
			switch {
			case errors.Is(ctx.Err(), context.Canceled):
				return nil, ctx.Err()
			case pastDeadline(ctx):
				p.TimedOut = true
			default:
				return nil, s.lostOr(ctx, err)
			}
		}
	}
	p.Timings.Total = time.Since(start)
	s.settle()
	p.Refused = s.refused()
	if s.proxy != nil && p.URL != "" {
		if u, err := url.Parse(p.URL); err == nil {
			if t, ok := s.proxy.Timing(hostPort(u)); ok {
				p.Timings.DNS, p.Timings.Connect = t.DNS, t.Connect
			}
		}
	}
	if judge != nil && !judge(p) && p.LoadError == "" && !p.TimedOut && !pastDeadline(ctx) {
		p.Screenshot = screenshot(tab)
	}
	return p, nil
}

// pastDeadline reports whether ctx's deadline has come (the tab's own copy of it may fire a
// moment before ctx's).
func pastDeadline(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || ok && !time.Now().Before(dl.Add(-10*time.Millisecond))
}

// readPage reads the navigation's timings and the rendered DOM of a loaded page.
func (b *Browser) readPage(tab context.Context, p *Page) error {
	nt, err := chromedp.Run(tab, chromedp.Evaluate[*navTiming](`(() => {
		const n = performance.getEntriesByType('navigation')[0];
		return n ? n.toJSON() : null;
	})()`))
	if err != nil && !errors.Is(err, chromedp.ErrJSNull) {
		return fmt.Errorf("read the navigation timing: %w", err)
	}
	if nt != nil {
		p.Timings = nt.timings()
	}
	dom, err := chromedp.Run(tab, chromedp.Evaluate[domSnapshot](fmt.Sprintf(`(() => {
		const max = %d;
		const html = document.documentElement ? document.documentElement.outerHTML : '';
		const text = document.body ? document.body.innerText : '';
		return {html: html.slice(0, max), text: text.slice(0, max), truncated: html.length > max || text.length > max};
	})()`, MaxDOM)))
	if err != nil {
		return fmt.Errorf("read the rendered DOM: %w", err)
	}
	p.HTML, p.Text, p.Truncated = dom.HTML, dom.Text, dom.Truncated
	if p.URL == "" {
		p.URL, _ = chromedp.Run(tab, chromedp.Location())
	}
	return nil
}

type domSnapshot struct {
	HTML      string `json:"html"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// navTiming is a PerformanceNavigationTiming entry; times are milliseconds from the start of
// the navigation, 0 when the phase did not happen.
type navTiming struct {
	DomainLookupStart     float64 `json:"domainLookupStart"`
	DomainLookupEnd       float64 `json:"domainLookupEnd"`
	ConnectStart          float64 `json:"connectStart"`
	ConnectEnd            float64 `json:"connectEnd"`
	SecureConnectionStart float64 `json:"secureConnectionStart"`
	ResponseStart         float64 `json:"responseStart"`
	ResponseEnd           float64 `json:"responseEnd"`
	DOMContentLoadedEnd   float64 `json:"domContentLoadedEventEnd"`
	LoadEventStart        float64 `json:"loadEventStart"`
	LoadEventEnd          float64 `json:"loadEventEnd"`
}

func (n *navTiming) timings() Timings {
	ms := func(v float64) time.Duration { return time.Duration(max(v, 0) * float64(time.Millisecond)) }
	t := Timings{
		DNS:              ms(n.DomainLookupEnd - n.DomainLookupStart),
		FirstByte:        ms(n.ResponseStart),
		Data:             ms(n.ResponseEnd - n.ResponseStart),
		DOMContentLoaded: ms(n.DOMContentLoadedEnd),
		Load:             ms(n.LoadEventEnd),
	}
	if t.Load == 0 {
		t.Load = ms(n.LoadEventStart)
	}
	if n.SecureConnectionStart > 0 {
		t.Connect = ms(n.SecureConnectionStart - n.ConnectStart)
		t.TLS = ms(n.ConnectEnd - n.SecureConnectionStart)
	} else {
		t.Connect = ms(n.ConnectEnd - n.ConnectStart)
	}
	return t
}

// toHeader converts CDP headers, where repeated headers are joined with newlines.
func toHeader(h network.Headers) http.Header {
	out := http.Header{}
	for k, v := range h {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		for _, part := range strings.Split(s, "\n") {
			out.Add(k, part)
		}
	}
	return out
}

// hostPort is u's host with its port, the default one when the URL names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" || u.Scheme == "wss" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
