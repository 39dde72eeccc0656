// Package probe adapts the probers to the worker: it maps a CheckJob onto a prober.Request and a
// prober.Result onto a CheckResult. The worker stamps ids, region, attempt and timestamps; this
// package carries only what the probe observed. It lives apart from the worker so the worker (and
// its tests) never link the probers' dependencies.
package probe

import (
	"context"
	"time"

	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Runner runs job attempts with a prober.
type Runner struct {
	p       prober.Prober
	browser *prober.Browser // nil on an agent without a browser
}

var _ worker.Runner = (*Runner)(nil)

// New returns a Runner probing with p (usually prober.New(...), which dispatches by kind) and
// browser jobs with browser, the agent's browser prober (nil when it has no browser).
func New(p prober.Prober, browser *prober.Browser) *Runner { return &Runner{p: p, browser: browser} }

// Run probes one attempt of job. It returns nil when the prober could not finish the attempt
// (ctx was cancelled: the agent is stopping), which the worker must not report.
func (r *Runner) Run(ctx context.Context, job *vantagev1.CheckJob, _ int) *vantagev1.CheckResult {
	var (
		res prober.Result
		err error
	)
	if job.GetKind() == vantagev1.CheckKind_CHECK_KIND_BROWSER && r.browser != nil {
		res, err = r.browser.Probe(ctx, job)
	} else {
		res, err = r.p.Probe(ctx, Request(job))
	}
	if err != nil {
		return nil
	}
	return Result(res)
}

// Kind maps protobuf check kinds to check kinds; an unknown kind maps to "", which the probers
// answer with an INVALID_REQUEST failure.
func Kind(k vantagev1.CheckKind) check.Kind {
	switch k {
	case vantagev1.CheckKind_CHECK_KIND_UPTIME:
		return check.Uptime
	case vantagev1.CheckKind_CHECK_KIND_BROWSER:
		return check.Browser
	case vantagev1.CheckKind_CHECK_KIND_DNS:
		return check.DNS
	case vantagev1.CheckKind_CHECK_KIND_TCP:
		return check.TCP
	}
	return ""
}

// Request is the prober request for job.
func Request(job *vantagev1.CheckJob) prober.Request {
	req := prober.Request{
		Kind:    Kind(job.GetKind()),
		Timeout: time.Duration(job.GetTimeoutMs()) * time.Millisecond,
		Secrets: job.GetRedact(),
	}
	for _, a := range job.GetAssertions() {
		req.Assertions = append(req.Assertions, check.Assertion{
			Type: a.GetType(), Property: a.GetProperty(), Comparison: a.GetComparison(), Expected: a.GetExpected(),
		})
	}
	switch spec := job.GetSpec().(type) {
	case *vantagev1.CheckJob_Http:
		h := spec.Http
		req.HTTP = prober.HTTPSpec{
			URL: h.GetUrl(), Method: h.GetMethod(), Headers: h.GetHeaders(), Body: h.GetBody(),
			FollowRedirects: h.GetFollowRedirects(), VerifySSL: h.GetVerifyTls(), TextToSearchFor: h.GetTextToSearchFor(),
		}
		if h.BasicAuthUsername != nil || h.BasicAuthPassword != nil {
			req.HTTP.BasicAuth = &prober.BasicAuth{Username: h.GetBasicAuthUsername(), Password: h.GetBasicAuthPassword()}
		}
	case *vantagev1.CheckJob_Browser:
		// A URL-based browser run is judged like an HTTP response; the script goes to the
		// browser prober once prober.Request carries it.
		b := spec.Browser
		req.HTTP = prober.HTTPSpec{URL: b.GetUrl(), Headers: b.GetHeaders(), FollowRedirects: true, VerifySSL: true}
	case *vantagev1.CheckJob_Dns:
		d := spec.Dns
		req.DNS = prober.DNSSpec{Domain: d.GetDomain(), RecordType: d.GetRecordType(), Resolver: d.GetResolver(), Protocol: d.GetProtocol()}
	case *vantagev1.CheckJob_Tcp:
		t := spec.Tcp
		req.TCP = prober.TCPSpec{
			Hostname: t.GetHostname(), Port: int(t.GetPort()), IPFamily: t.GetIpFamily(), Data: t.GetData(), ShouldFail: t.GetShouldFail(),
		}
	}
	return req
}

// Result is the CheckResult fields a probe result fills; empty strings and zero numbers are
// left unset (null).
func Result(r prober.Result) *vantagev1.CheckResult {
	out := &vantagev1.CheckResult{
		Passing:          r.Passing,
		ResponseTimeMs:   ms(r.ResponseTime),
		BodyAvailability: r.BodyAvailability,
		ResultSummary:    optString(r.ResultSummary),
		FailureSource:    optString(r.FailureSource),
		FailureType:      optString(r.FailureType),
		DnsStatus:        optString(r.DNSStatus),
		Resolver:         optString(r.Resolver),
		ParsedResponse:   optString(r.ParsedResponse),
		TcpStatus:        optString(r.TCPStatus),
		Timings: &vantagev1.Timings{
			DnsMs:       optMs(r.Timings.DNS),
			ConnectMs:   optMs(r.Timings.Connect),
			TlsMs:       optMs(r.Timings.TLS),
			FirstByteMs: optMs(r.Timings.FirstByte),
			DataMs:      optMs(r.Timings.Data),
			TotalMs:     ms(r.Timings.Total),

			DomContentLoadedMs: optMs(r.Timings.DOMContentLoaded),
			LoadMs:             optMs(r.Timings.Load),
		},
		Screenshot: r.Screenshot,
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, &vantagev1.Step{Title: s.Title, Location: s.Location, Depth: uint32(s.Depth),
			StartMs: ms(s.Start), DurationMs: ms(s.Duration), Passed: s.Passed, Error: s.Error})
	}
	if r.ResponseCode != 0 {
		code := int32(r.ResponseCode)
		out.ResponseCode = &code
	}
	if r.BodyAvailability == prober.BodyAvailable { // an empty body that arrived is "", not null
		body := r.ResponseBody
		out.ResponseBody = &body
	}
	if !r.CertNotAfter.IsZero() {
		t := r.CertNotAfter.UnixMilli()
		out.TlsNotAfterUnixMs = &t
	}
	for _, o := range r.Assertions {
		out.Assertions = append(out.Assertions, &vantagev1.AssertionOutcome{
			Assertion: &vantagev1.Assertion{
				Type: o.Assertion.Type, Property: o.Assertion.Property, Comparison: o.Assertion.Comparison, Expected: o.Assertion.Expected,
			},
			Passed:  o.Passed,
			Actual:  o.Actual,
			Message: o.Message,
		})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func optMs(d time.Duration) *float64 {
	if d == 0 {
		return nil
	}
	v := ms(d)
	return &v
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
