package prober

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vantagehq/vantage/agent/internal/browser"
	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// BrowserRunner is what the browser prober needs of the agent's browser (agent/internal/browser).
type BrowserRunner interface {
	Visit(ctx context.Context, req browser.VisitRequest, judge func(*browser.Page) bool) (*browser.Page, error)
	RunScript(ctx context.Context, req browser.ScriptRequest) (*browser.ScriptRun, error)
}

var _ BrowserRunner = (*browser.Browser)(nil)

// Browser probes browser checks in the agent's Chromium: a script when the job has one, else
// its URL. It reads the job directly.
//
// URL checks, in this order (the first failure found is the result's failure; every assertion
// is still evaluated and reported):
//
//	the agent's browser crashed or hung  -> AGENT / BROWSER_CRASHED (never counts against the target)
//	the agent's browser failed otherwise -> AGENT / BROWSER_ERROR
//	the page was not allowed (file: …)   -> ASSERTION / FORBIDDEN_TARGET ("not allowed: file: …")
//	a private target was refused         -> TRANSPORT / FORBIDDEN_TARGET
//	the navigation failed (net::ERR_…)   -> TRANSPORT, classified like the HTTP prober's errors
//	the page did not load in time        -> TRANSPORT / TIMEOUT
//	main document status 4xx or 5xx      -> ASSERTION / HTTP_STATUS
//	text_to_search_for not on the page   -> ASSERTION / TEXT_NOT_FOUND (the rendered DOM's HTML or its text)
//	an assertion failed                  -> ASSERTION / ASSERTION_FAILED (HTML_BODY and the others see the rendered DOM)
//
// Scripted checks fail with the script's first failure: an expect() -> ASSERTION /
// ASSERTION_FAILED; a navigation -> TRANSPORT (FORBIDDEN_TARGET when the agent refused a
// private target); a timeout of an action, an assertion, the test or the whole run ->
// TRANSPORT / TIMEOUT; the script itself (an exception, an unsupported API or module, too much
// memory, a page of it reaching for file:, view-source: or another non-web URL: "not allowed:
// file: …") -> ASSERTION / SCRIPT_ERROR; the tab crashing or its connection failing -> AGENT /
// BROWSER_ERROR. The summary names the failing step, its place in the script and Playwright's
// message.
type Browser struct {
	b       BrowserRunner
	version string // named by the User-Agent
}

// NewBrowser returns the browser prober over the agent's browser; of opts it reads WithVersion.
func NewBrowser(b BrowserRunner, opts ...Option) *Browser {
	return &Browser{b: b, version: newOptions(opts).version}
}

// headers are the headers a browser run sends with every request: the check's, and the
// probes' User-Agent unless the check sets one.
func (p *Browser) headers(job *vantagev1.CheckJob) (map[string]string, string) {
	h := job.GetBrowser().GetHeaders()
	for k, v := range h {
		if strings.EqualFold(k, "User-Agent") {
			return h, v
		}
	}
	ua := UserAgent(p.version, job.GetRegion())
	out := make(map[string]string, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out["User-Agent"] = ua
	return out, ua
}

// Failure types of browser checks (see also the shared ones in result.go).
const (
	BrowserCrashed = "BROWSER_CRASHED" // AGENT: the agent's browser stopped during the run
	BrowserError   = "BROWSER_ERROR"   // AGENT: the agent's browser answered with an error
	ScriptError    = "SCRIPT_ERROR"    // ASSERTION: the script failed to run as written
	// SourceAgent is the failure source of a result the agent failed (wire.FailureSourceAgent).
	SourceAgent = wire.FailureSourceAgent
)

// maxSteps bounds the steps a result carries.
const maxSteps = 100

// Probe runs one attempt of a browser job; see Browser.
func (p *Browser) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	spec := job.GetBrowser()
	var (
		res Result
		err error
	)
	if strings.TrimSpace(spec.GetScript()) != "" {
		res, err = p.script(ctx, job)
	} else {
		res, err = p.url(ctx, job)
	}
	if err != nil {
		return Result{}, err
	}
	res.Kind = check.Browser
	if res.BodyAvailability == BodyAvailable {
		res.finish(job, []byte(res.ResponseBody))
	} else {
		res.finish(job, nil)
	}
	return res, nil
}

// agentFailed is the result of a run the agent's browser could not finish, or the error to
// return when ctx was cancelled (the agent is stopping).
func agentFailed(ctx context.Context, err error) (Result, error) {
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	var res Result
	res.Passing, res.FailureSource = false, SourceAgent
	if errors.Is(err, browser.ErrBrowserLost) {
		res.FailureType = BrowserCrashed
		res.ResultSummary = "not a failure of the target: " + err.Error()
	} else {
		res.FailureType = BrowserError
		res.ResultSummary = "not a failure of the target: the agent's browser failed: " + err.Error()
	}
	return res, nil
}

// url runs a URL check.
func (p *Browser) url(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	var res Result
	spec := job.GetBrowser()
	compiled, err := assert.CompileAll(check.Browser, check.AssertionsOfJob(job.GetAssertions()))
	if err != nil {
		res.failTransport(InvalidRequest, "invalid assertion: "+err.Error())
		return res, nil
	}
	headers, ua := p.headers(job)
	if _, err := newHTTPRequest(ctx, &vantagev1.HTTPSpec{Url: spec.Url}, ua); err != nil {
		res.failTransport(InvalidRequest, err.Error())
		return res, nil
	}
	judged := false
	judge := func(pg *browser.Page) bool {
		res = judgePage(pg, spec.GetTextToSearchFor(), compiled)
		judged = true
		return res.Passing
	}
	pg, err := p.b.Visit(ctx, browser.VisitRequest{URL: spec.GetUrl(), Headers: headers}, judge)
	if err != nil {
		return agentFailed(ctx, err)
	}
	if !judged {
		res = judgePage(pg, spec.GetTextToSearchFor(), compiled)
	}
	res.Screenshot = pg.Screenshot
	return res, nil
}

// judgePage is the verdict on a visited page; see Browser.
func judgePage(pg *browser.Page, text string, compiled []*assert.Compiled) Result {
	res := Result{ResponseCode: pg.Status, Timings: pageTimings(pg.Timings)}
	res.ResponseTime = pg.Timings.Load
	if res.ResponseTime == 0 {
		res.ResponseTime = pg.Timings.Total
	}
	loaded := pg.LoadError == "" && !pg.TimedOut
	if loaded {
		res.BodyAvailability, res.ResponseBody = BodyAvailable, pg.HTML
	} else {
		res.BodyAvailability = BodyNotRecorded
	}
	switch {
	case pg.Refused != "" && (pg.LoadError != "" || pg.Status == 0):
		res.failAssertion(ForbiddenTarget, pg.Refused)
		return res
	case pg.Blocked != "" && (pg.LoadError != "" || pg.Status == 0):
		res.failTransport(ForbiddenTarget, "target not allowed: "+pg.Blocked)
		return res
	case pg.LoadError != "":
		ft := classifyNetError(pg.LoadError)
		summary := pg.LoadError
		if phrase := describe(ft, errors.New(pg.LoadError)); phrase != "" {
			summary = phrase
		}
		res.failTransport(ft, summary)
		return res
	case pg.TimedOut:
		if pg.Status > 0 {
			res.failTransport(Timeout, fmt.Sprintf("timed out after %s waiting for the page to load (HTTP %d arrived)", millis(pg.Timings.Total), pg.Status))
		} else {
			res.failTransport(Timeout, fmt.Sprintf("timed out after %s waiting for a response", millis(pg.Timings.Total)))
		}
		return res
	}
	res.Assertions = assert.EvaluateAll(compiled, assert.HTTPObservation{
		StatusCode: pg.Status, Header: pg.Header, Body: []byte(pg.HTML), BodyTruncated: pg.Truncated, ResponseTime: res.ResponseTime,
	})
	switch {
	case pg.Status >= 400:
		res.failAssertion(HTTPStatus, strings.TrimSpace(fmt.Sprintf("HTTP %d %s", pg.Status, pg.StatusText)))
	case text != "" && !strings.Contains(pg.HTML, text) && !strings.Contains(pg.Text, text):
		res.failAssertion(TextNotFound, fmt.Sprintf("text %q not found on the page", text))
	case !assert.AllPassed(res.Assertions):
		res.failAssertion(AssertionFailed, assertionSummary(res.Assertions))
	default:
		res.pass(fmt.Sprintf("HTTP %d, page loaded in %s", pg.Status, millis(res.ResponseTime)))
	}
	return res
}

func pageTimings(t browser.Timings) Timings {
	return Timings{DNS: t.DNS, Connect: t.Connect, TLS: t.TLS, FirstByte: t.FirstByte, Data: t.Data,
		DOMContentLoaded: t.DOMContentLoaded, Load: t.Load, Total: t.Total}
}

// classifyNetError sorts Chromium's net::ERR_ codes into the HTTP prober's failure types.
func classifyNetError(errorText string) string {
	code := strings.TrimPrefix(errorText, "net::")
	switch {
	case code == "ERR_NAME_NOT_RESOLVED", code == "ERR_NAME_RESOLUTION_FAILED":
		return DNSError
	case code == "ERR_CONNECTION_REFUSED":
		return ConnectionRefused
	case code == "ERR_CONNECTION_RESET", code == "ERR_CONNECTION_ABORTED":
		return ConnectionReset
	case code == "ERR_CONNECTION_CLOSED", code == "ERR_EMPTY_RESPONSE":
		return ConnectionClosed
	case code == "ERR_TIMED_OUT", code == "ERR_CONNECTION_TIMED_OUT":
		return Timeout
	case code == "ERR_ADDRESS_UNREACHABLE", code == "ERR_INTERNET_DISCONNECTED", code == "ERR_NETWORK_CHANGED":
		return HostUnreachable
	case code == "ERR_TOO_MANY_REDIRECTS":
		return TooManyRedirects
	case strings.HasPrefix(code, "ERR_CERT_"), strings.HasPrefix(code, "ERR_SSL_"), code == "ERR_BAD_SSL_CLIENT_AUTH_CERT":
		return TLSError
	case code == "ERR_INVALID_URL", code == "ERR_UNKNOWN_URL_SCHEME", code == "ERR_DISALLOWED_URL_SCHEME":
		return InvalidRequest
	case code == "ERR_INVALID_RESPONSE", code == "ERR_INVALID_HTTP_RESPONSE", code == "ERR_RESPONSE_HEADERS_TOO_BIG":
		return InvalidResponse
	}
	return ConnectionError
}

// script runs a scripted check.
func (p *Browser) script(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	var res Result
	_, ua := p.headers(job)
	run, err := p.b.RunScript(ctx, browser.ScriptRequest{
		Source: job.GetBrowser().GetScript(), Env: job.GetEnv(), Secrets: job.GetRedact(), UserAgent: ua,
		Timeout: time.Duration(job.GetTimeoutMs()) * time.Millisecond,
	})
	if err != nil {
		return agentFailed(ctx, err)
	}
	res.BodyAvailability = BodyNotRecorded
	res.ResponseTime = run.Duration
	res.Timings.Total = run.Duration
	res.Screenshot = run.Screenshot
	rep := run.Report
	if rep != nil {
		res.Artifacts, res.ArtifactsDropped = rep.Artifacts, rep.ArtifactsDropped
	}
	if rep == nil {
		ft := ScriptError
		if run.Problem == browser.ProblemTimeout {
			ft = Timeout
		}
		if ft == Timeout {
			res.failTransport(ft, run.Message)
		} else {
			res.failAssertion(ft, run.Message)
		}
		return res, nil
	}
	res.Steps = steps(rep)
	if rep.Passed {
		res.pass(rep.Summary)
		return res, nil
	}
	summary := rep.Summary
	f := rep.Failure
	if f == nil {
		f = &pwscript.Failure{Cause: pwscript.CauseScript}
	}
	switch {
	case run.Blocked != "" && f.Cause == pwscript.CauseNavigation:
		res.failTransport(ForbiddenTarget, summary+" — target not allowed: "+run.Blocked)
	case f.Cause == pwscript.CauseNavigation:
		res.failTransport(classifyNetError(netErrorIn(f.Message)), summary)
	case f.Cause == pwscript.CauseTimeout:
		res.failTransport(Timeout, summary)
	case f.Cause == pwscript.CauseAssertion:
		res.failAssertion(AssertionFailed, summary)
	case f.Cause == pwscript.CauseBrowser:
		// The tab crashed or the worker lost its connection to it while the browser process
		// stayed up (else RunScript failed with ErrBrowserLost): the agent's failure too.
		res.Passing, res.FailureSource, res.FailureType = false, SourceAgent, BrowserError
		res.ResultSummary = "not a failure of the target: " + summary
	default:
		res.failAssertion(ScriptError, summary)
	}
	if run.Blocked != "" && res.FailureType != ForbiddenTarget {
		res.ResultSummary += " (the agent refused private targets: " + run.Blocked + ")"
	}
	return res, nil
}

// netErrorIn finds Chromium's net::ERR_ code in a navigation failure's message.
func netErrorIn(msg string) string {
	i := strings.Index(msg, "net::ERR_")
	if i < 0 {
		return ""
	}
	end := i + len("net::")
	for end < len(msg) && (msg[end] == '_' || msg[end] >= 'A' && msg[end] <= 'Z' || msg[end] >= '0' && msg[end] <= '9') {
		end++
	}
	return msg[i:end]
}

// steps flattens a report's tests and their hooks and test.step blocks (and any other step that
// failed, so the failing action shows) into the result's steps, at most maxSteps. Start times
// are derived from the durations of the steps before each one.
func steps(rep *pwscript.Report) []Step {
	var out []Step
	var at time.Duration
	var walk func(prefix string, depth int, start time.Duration, ss []pwscript.StepReport)
	walk = func(prefix string, depth int, start time.Duration, ss []pwscript.StepReport) {
		for _, s := range ss {
			if len(out) >= maxSteps {
				return
			}
			title := prefix + " › " + s.Title
			if s.Category == "test.step" || s.Category == "hook" || s.Error != "" {
				out = append(out, Step{Title: title, Location: s.Location, Depth: depth, Start: start,
					Duration: s.Duration, Passed: s.Error == "", Error: s.Error})
			}
			walk(title, depth+1, start, s.Steps)
			start += s.Duration
		}
	}
	for _, t := range rep.Tests {
		if len(out) >= maxSteps {
			break
		}
		out = append(out, Step{Title: t.Title, Depth: 0, Start: at, Duration: t.Duration,
			Passed: t.Status == pwscript.StatusPassed || t.Status == pwscript.StatusSkipped, Error: t.Error})
		walk(t.Title, 1, at, t.Steps)
		at += t.Duration
	}
	return out
}

// notSupported answers browser attempts on an agent without a browser. Such an agent never
// fetches browser jobs (they travel on their own subject), so this is a guard, not a path.
type notSupported struct{}

// NoBrowser is the summary of a browser attempt on an agent without a browser.
const NoBrowser = "this agent has no browser (install chromium-headless-shell or set VANTAGE_BROWSER_PATH)"

func (notSupported) Probe(_ context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.Browser}
	res.failTransport(NotSupported, NoBrowser)
	res.finish(job, nil)
	return res, nil
}
