package prober

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/agent/internal/browser"
	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// browsers are started once per configuration for the package's tests (real Chromium).
var browsers struct {
	sync.Mutex
	byBlock map[bool]*browser.Browser
}

func testBrowser(t *testing.T, blockPrivate bool) *browser.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium; skipped under -short (make test-short)")
	}
	browsers.Lock()
	defer browsers.Unlock()
	if b := browsers.byBlock[blockPrivate]; b != nil {
		return b
	}
	b, err := browser.New(browser.Config{BlockPrivateTargets: blockPrivate, Concurrency: 2,
		WorkerCommand: []string{os.Args[0], scriptworker.Command}, WorkerMemory: 256 << 20},
		browser.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatalf("Chromium is required (apt-get install chromium-headless-shell): %v", err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	go b.Run(context.Background()) //nolint:errcheck // lives as long as the test binary
	if browsers.byBlock == nil {
		browsers.byBlock = map[bool]*browser.Browser{}
	}
	browsers.byBlock[blockPrivate] = b
	return b
}

func browserURLJob(url string, timeout time.Duration, mod func(*vantagev1.CheckJob)) *vantagev1.CheckJob {
	j := &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_BROWSER, TimeoutMs: uint32(timeout.Milliseconds()),
		Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Url: &url}}}
	if mod != nil {
		mod(j)
	}
	return j
}

func probeJob(t *testing.T, p *Browser, job *vantagev1.CheckJob) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(job.GetTimeoutMs())*time.Millisecond)
	defer cancel()
	res, err := p.Probe(ctx, job)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return res
}

// pages serves the URL checks' pages.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Shop", "open")
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1>Welcome</h1>
			<script>document.body.insertAdjacentHTML('beforeend', '<p class="price">42 EUR</p><p id="key">'+(navigator.userAgent.includes('Headless')?'headless':'')+'</p>')</script>`)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<!doctype html><h1>Down for maintenance</h1>`)
	})
	mux.HandleFunc("/echo-header", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><p id="token">%s</p>`, r.Header.Get("X-Token"))
	})
	mux.HandleFunc("/slow-image", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><h1>Loading</h1><img src="/hang">`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestBrowserURLChecks(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, false))
	srv := pages(t)
	closed := func() string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer lis.Close()
		return "http://" + lis.Addr().String() + "/"
	}()
	assertion := func(typ, prop, cmp, want string) *vantagev1.Assertion {
		return &vantagev1.Assertion{Type: typ, Property: prop, Comparison: cmp, Expected: want}
	}
	tests := []struct {
		name           string
		job            *vantagev1.CheckJob
		source, ftype  string // "" for a pass
		summary        string // part of the summary
		wantScreenshot bool
	}{
		{name: "rendered page passes", job: browserURLJob(srv.URL+"/ok", 10*time.Second, func(j *vantagev1.CheckJob) {
			j.GetBrowser().TextToSearchFor = ptr("42 EUR") // only in the DOM the script rendered
			j.Assertions = []*vantagev1.Assertion{
				assertion("HTML_BODY", "p.price", "EQUALS", "42 EUR"),
				assertion("RESPONSE_HEADERS", "X-Shop", "EQUALS", "open"),
			}
		}), summary: "HTTP 200, page loaded in"},
		{name: "server error", job: browserURLJob(srv.URL+"/error", 10*time.Second, nil),
			source: SourceAssertion, ftype: HTTPStatus, summary: "HTTP 503", wantScreenshot: true},
		{name: "text missing from the rendered page", job: browserURLJob(srv.URL+"/ok", 10*time.Second, func(j *vantagev1.CheckJob) {
			j.GetBrowser().TextToSearchFor = ptr("Sold out")
		}), source: SourceAssertion, ftype: TextNotFound, summary: `"Sold out" not found`, wantScreenshot: true},
		{name: "HTML assertion on the rendered DOM fails", job: browserURLJob(srv.URL+"/ok", 10*time.Second, func(j *vantagev1.CheckJob) {
			j.Assertions = []*vantagev1.Assertion{assertion("HTML_BODY", "p.price", "EQUALS", "13 EUR")}
		}), source: SourceAssertion, ftype: AssertionFailed, summary: "assertion failed", wantScreenshot: true},
		{name: "connection refused", job: browserURLJob(closed, 10*time.Second, nil),
			source: SourceTransport, ftype: ConnectionRefused, summary: "net::ERR_CONNECTION_REFUSED"},
		{name: "page never finishes loading", job: browserURLJob(srv.URL+"/slow-image", 2*time.Second, nil),
			source: SourceTransport, ftype: Timeout, summary: "waiting for the page to load (HTTP 200 arrived)"},
		{name: "invalid URL", job: browserURLJob("ftp://example.com/", time.Second, nil),
			source: SourceTransport, ftype: InvalidRequest, summary: "scheme must be http or https"},
		{name: "secret header redacted", job: browserURLJob(srv.URL+"/echo-header", 10*time.Second, func(j *vantagev1.CheckJob) {
			j.GetBrowser().Headers = map[string]string{"X-Token": "tok-s3cr3t"}
			j.GetBrowser().TextToSearchFor = ptr("nope")
			j.Redact = []string{"tok-s3cr3t"}
		}), source: SourceAssertion, ftype: TextNotFound, wantScreenshot: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := probeJob(t, p, tc.job)
			if tc.ftype == "" {
				wantPass(t, res)
			} else {
				wantFail(t, res, tc.source, tc.ftype)
			}
			if !strings.Contains(res.ResultSummary, tc.summary) {
				t.Errorf("summary %q, want it to contain %q", res.ResultSummary, tc.summary)
			}
			if got := len(res.Screenshot) > 0; got != tc.wantScreenshot {
				t.Errorf("screenshot of %d bytes, want one: %v", len(res.Screenshot), tc.wantScreenshot)
			}
			if len(res.Screenshot) > 0 && (wire.ScreenshotType(res.Screenshot) != "image/jpeg" || len(res.Screenshot) > wire.MaxScreenshotBytes) {
				t.Errorf("screenshot: %s of %d bytes", wire.ScreenshotType(res.Screenshot), len(res.Screenshot))
			}
			if strings.Contains(res.ResponseBody+res.ResultSummary, "tok-s3cr3t") {
				t.Errorf("a secret leaked into the result: %q", res.ResponseBody)
			}
		})
	}
}

// The page's timings come from the browser's Navigation Timing: every phase that happened is
// set, in order, and the response time is the load event.
func TestBrowserURLCheckTimings(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, false))
	srv := pages(t)
	res := probeJob(t, p, browserURLJob(srv.URL+"/ok", 10*time.Second, nil))
	wantPass(t, res)
	tm := res.Timings
	if tm.FirstByte <= 0 || tm.DOMContentLoaded < tm.FirstByte || tm.Load < tm.DOMContentLoaded || tm.Total < tm.Load {
		t.Errorf("timings out of order: %+v", tm)
	}
	if res.ResponseTime != tm.Load || res.ResponseCode != 200 || !strings.Contains(res.ResponseBody, `<p class="price">42 EUR</p>`) {
		t.Errorf("response time %s (load %s), code %d, body %q", res.ResponseTime, tm.Load, res.ResponseCode, res.ResponseBody)
	}
}

// With private targets refused, the browser reaches no loopback address, whatever the URL
// names: the check fails as FORBIDDEN_TARGET and says why.
func TestBrowserURLCheckPrivateTargetRefused(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, true))
	srv := pages(t)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal") }))
	t.Cleanup(tls.Close)
	for _, u := range []string{srv.URL + "/ok", tls.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ok"} {
		res := probeJob(t, p, browserURLJob(u, 10*time.Second, nil))
		wantFail(t, res, SourceTransport, ForbiddenTarget)
		if !strings.Contains(res.ResultSummary, "is a loopback address") {
			t.Errorf("%s: summary %q does not say why", u, res.ResultSummary)
		}
	}
}

// The browser failing a check is the agent's failure, never the target's; the agent stopping
// is no result at all.
func TestBrowserAgentFailures(t *testing.T) {
	t.Parallel()
	res, err := agentFailed(t.Context(), fmt.Errorf("%w: it crashed", browser.ErrBrowserLost))
	if err != nil || res.Passing || res.FailureSource != wire.FailureSourceAgent || res.FailureType != BrowserCrashed ||
		!strings.HasPrefix(res.ResultSummary, "not a failure of the target") {
		t.Errorf("browser lost: %+v, %v", res, err)
	}
	res, err = agentFailed(t.Context(), fmt.Errorf("call: protocol error"))
	if err != nil || res.FailureSource != wire.FailureSourceAgent || res.FailureType != BrowserError {
		t.Errorf("browser error: %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := agentFailed(ctx, context.Canceled); err == nil {
		t.Error("a cancelled attempt gave a result")
	}
}

func TestClassifyNetError(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"net::ERR_NAME_NOT_RESOLVED": DNSError, "net::ERR_CONNECTION_REFUSED": ConnectionRefused,
		"net::ERR_CERT_AUTHORITY_INVALID": TLSError, "net::ERR_SSL_PROTOCOL_ERROR": TLSError,
		"net::ERR_EMPTY_RESPONSE": ConnectionClosed, "net::ERR_TIMED_OUT": Timeout,
		"net::ERR_TOO_MANY_REDIRECTS": TooManyRedirects, "net::ERR_ADDRESS_UNREACHABLE": HostUnreachable,
		"net::ERR_BLOCKED_BY_CLIENT": ConnectionError,
	} {
		if got := classifyNetError(text); got != want {
			t.Errorf("%s: %s, want %s", text, got, want)
		}
	}
	if got := netErrorIn("page.goto: net::ERR_CONNECTION_RESET at https://x/"); got != "net::ERR_CONNECTION_RESET" {
		t.Errorf("netErrorIn = %q", got)
	}
}
