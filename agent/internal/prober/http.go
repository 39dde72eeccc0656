package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/vantagehq/vantage/agent/internal/tlscert"
	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// HTTP probes uptime checks: one HTTP request (and its redirects) over new connections.
//
// Every attempt gets a fresh Transport with keep-alives off, so each result measures real DNS,
// connect and TLS time rather than a pooled connection. No proxy is used. Redirects are
// followed up to MaxRedirects when follow_redirects is set; verify_ssl false skips certificate
// verification (the expiry is recorded either way). The first MaxBodyRead bytes of the body
// are read and judged; MaxBodyStored of them are kept.
//
// Verdict, in this order (the first failure found is the result's failure; every assertion is
// still evaluated and reported):
//
//	transport error (connect, DNS, TLS, timeout, redirects) -> TRANSPORT, see classify
//	status 4xx or 5xx                                      -> ASSERTION / HTTP_STATUS
//	text_to_search_for not in the body                     -> ASSERTION / TEXT_NOT_FOUND
//	an assertion failed                                    -> ASSERTION / ASSERTION_FAILED
//
// A 2xx or 3xx status passes (a 3xx is final only when redirects are not followed). The API
// has no status assertion, so no assertion can make a 4xx or 5xx pass. A 4xx/5xx is an
// ASSERTION failure rather than TRANSPORT because the target did answer: the transport worked
// and the answer was judged bad.
type HTTP struct {
	opts options
}

var _ Prober = (*HTTP)(nil)

// NewHTTP returns the HTTP prober.
func NewHTTP(opts ...Option) *HTTP { return &HTTP{opts: newOptions(opts)} }

var httpMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Probe runs one HTTP attempt; see HTTP.
func (p *HTTP) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	kind := check.KindOfJob(job.GetKind())
	if kind == "" {
		kind = check.Uptime
	}
	res := Result{Kind: kind}
	compiled, err := assert.CompileAll(kind, check.AssertionsOfJob(job.GetAssertions()))
	if err != nil {
		res.failTransport(InvalidRequest, "invalid assertion: "+err.Error())
		res.finish(job, nil)
		return res, nil
	}
	spec := job.GetHttp()
	trace := &httpTrace{start: time.Now()}
	hreq, err := newHTTPRequest(httptrace.WithClientTrace(ctx, trace.clientTrace()), spec, UserAgent(p.opts.version, job.GetRegion()))
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}

	transport := &schemeTransport{
		plain: &http.Transport{
			Proxy:                  nil,
			DialContext:            p.opts.dialer(true).DialContext,
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 1 << 20,
			// Plain HTTP never negotiates HTTP/2: a non-nil TLSNextProto spares the per-probe
			// set-up of HTTP/2 support (about 6% of an agent's CPU on plain-HTTP checks).
			TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		},
		secure: func() *http.Transport {
			return &http.Transport{
				Proxy:       nil,
				DialContext: p.opts.dialer(true).DialContext,
				// verify_ssl false is the user's explicit choice for this check.
				TLSClientConfig:        &tls.Config{InsecureSkipVerify: !spec.GetVerifySsl(), RootCAs: p.opts.rootCAs}, //nolint:gosec // G402: see above
				ForceAttemptHTTP2:      true,
				DisableKeepAlives:      true,
				MaxResponseHeaderBytes: 1 << 20,
			}
		},
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if !spec.GetFollowRedirects() {
				return http.ErrUseLastResponse
			}
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}

	resp, err := client.Do(hreq)
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		if resp != nil { // a redirect refused by CheckRedirect: the last response, body closed
			res.ResponseCode = resp.StatusCode
		}
		end := time.Now()
		res.ResponseTime = end.Sub(trace.start)
		res.Timings = trace.timings(end)
		res.CertNotAfter = unverifiedCertExpiry(err)
		ft := classify(ctx, err)
		summary := describe(ft, err)
		if served := tlscert.Served(err); served != nil {
			// verify_ssl refused the chain: record it, and let the summary say why.
			host := failedHost(err, hreq)
			chain := tlscert.Record(served, host, p.opts.rootCAs, time.Now())
			res.TLS = &chain
			summary = fmt.Sprintf("TLS error: %s (certificate %s)", tlscert.Reason(err, host, served[0], time.Now()), served[0].Subject)
		}
		if ft == Timeout {
			summary = strings.TrimSpace(fmt.Sprintf("timed out after %s %s", millis(res.ResponseTime), trace.currentPhase()))
		}
		res.failTransport(ft, summary)
		res.finish(job, nil)
		return res, nil
	}
	defer resp.Body.Close()
	res.ResponseCode = resp.StatusCode
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		res.CertNotAfter = resp.TLS.PeerCertificates[0].NotAfter
		// The final hop's chain, verified here too: expiry is watched even with verify_ssl off.
		chain := tlscert.Record(resp.TLS.PeerCertificates, resp.Request.URL.Host, p.opts.rootCAs, time.Now())
		res.TLS = &chain
	}
	trace.setPhase("while reading the body")
	body, truncated, readErr := readAtMost(resp.Body, MaxBodyRead)
	end := time.Now()
	res.ResponseTime = end.Sub(trace.start)
	res.Timings = trace.timings(end)
	if readErr != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		ft := classify(ctx, readErr)
		summary := describe(ft, readErr)
		if ft == Timeout {
			summary = fmt.Sprintf("timed out after %s while reading the body (HTTP %d)", millis(res.ResponseTime), resp.StatusCode)
		}
		res.failTransport(ft, summary)
		res.finish(job, body)
		return res, nil
	}

	outcomes := assert.EvaluateAll(compiled, assert.HTTPObservation{
		StatusCode:    resp.StatusCode,
		Header:        resp.Header,
		Body:          body,
		BodyTruncated: truncated,
		ResponseTime:  res.ResponseTime,
	})
	res.Assertions = outcomes
	switch {
	case resp.StatusCode >= 400:
		res.failAssertion(HTTPStatus, "HTTP "+resp.Status)
	case spec.GetTextToSearchFor() != "" && !strings.Contains(string(body), spec.GetTextToSearchFor()):
		res.failAssertion(TextNotFound, fmt.Sprintf("text %q not found in the body", spec.GetTextToSearchFor()))
	case !assert.AllPassed(outcomes):
		res.failAssertion(AssertionFailed, assertionSummary(outcomes))
	default:
		res.pass(fmt.Sprintf("HTTP %s in %s", resp.Status, millis(res.ResponseTime)))
	}
	res.finish(job, body)
	return res, nil
}

// newHTTPRequest builds the request of spec, or says why it cannot be built. Headers are sent
// as given: a User-Agent replaces ua, a Host sets the request's host. Basic credentials are
// sent when either part is set, empty strings as they are.
func newHTTPRequest(ctx context.Context, spec *vantagev1.HTTPSpec, ua string) (*http.Request, error) {
	u, err := url.Parse(strings.TrimSpace(spec.GetUrl()))
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid URL %q: the scheme must be http or https", spec.GetUrl())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", spec.GetUrl())
	}
	method := cmpOr(strings.ToUpper(spec.GetMethod()), http.MethodGet)
	if !slices.Contains(httpMethods, method) {
		return nil, fmt.Errorf("method %q is not one of %s", spec.GetMethod(), strings.Join(httpMethods, ", "))
	}
	var body io.Reader
	if spec.GetBody() != "" {
		body = strings.NewReader(spec.GetBody()) // a strings.Reader lets 307/308 redirects resend it
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("invalid request: %w", err)
	}
	hreq.Header.Set("User-Agent", ua)
	for name, value := range spec.GetHeaders() {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("invalid header name %q", name)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, fmt.Errorf("invalid value for header %s", name)
		}
		if strings.EqualFold(name, "Host") {
			hreq.Host = value
			continue
		}
		hreq.Header.Set(name, value)
	}
	if spec.AuthUsername != nil || spec.AuthPassword != nil {
		hreq.SetBasicAuth(spec.GetAuthUsername(), spec.GetAuthPassword())
	}
	return hreq, nil
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// readAtMost reads r to its end or to limit bytes, and reports whether there was more.
func readAtMost(r io.Reader, limit int64) (body []byte, truncated bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(body)) > limit {
		return body[:limit], true, err
	}
	if body == nil {
		body = []byte{}
	}
	return body, false, err
}

// failedHost is the host of the hop a request failed on (a redirect's, perhaps), which the
// TLS handshake verified the certificate for.
func failedHost(err error, req *http.Request) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return u.Host
		}
	}
	return req.URL.Host
}

// unverifiedCertExpiry returns the expiry of the leaf certificate a failed verification saw.
func unverifiedCertExpiry(err error) time.Time {
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) && len(ce.UnverifiedCertificates) > 0 {
		return ce.UnverifiedCertificates[0].NotAfter
	}
	return time.Time{}
}

// httpTrace collects phase timings across all hops of one attempt. Its callbacks run on the
// transport's goroutines, hence the lock.
type httpTrace struct {
	start time.Time

	mu                            sync.Mutex
	dnsStart, connStart, tlsStart time.Time
	dns, connect, tls             time.Duration
	firstByte                     time.Time
	phase                         string
}

func (t *httpTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) { t.setPhase("while connecting") },
		DNSStart: func(httptrace.DNSStartInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.dnsStart, t.phase = time.Now(), "while resolving the host name"
		},
		DNSDone: func(httptrace.DNSDoneInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.dns += time.Since(t.dnsStart)
			t.phase = "while connecting"
		},
		ConnectStart: func(string, string) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.connStart.IsZero() {
				t.connStart = time.Now()
			}
		},
		ConnectDone: func(_, _ string, err error) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if err == nil && !t.connStart.IsZero() {
				t.connect += time.Since(t.connStart)
				t.connStart = time.Time{}
			}
		},
		TLSHandshakeStart: func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.tlsStart, t.phase = time.Now(), "during the TLS handshake"
		},
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.tls += time.Since(t.tlsStart)
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { t.setPhase("waiting for the response") },
		GotFirstResponseByte: func() { t.mu.Lock(); t.firstByte = time.Now(); t.mu.Unlock() },
	}
}

func (t *httpTrace) setPhase(p string) {
	t.mu.Lock()
	t.phase = p
	t.mu.Unlock()
}

func (t *httpTrace) currentPhase() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase
}

func (t *httpTrace) timings(end time.Time) Timings {
	t.mu.Lock()
	defer t.mu.Unlock()
	tm := Timings{DNS: t.dns, Connect: t.connect, TLS: t.tls, Total: end.Sub(t.start)}
	if !t.firstByte.IsZero() {
		tm.FirstByte = t.firstByte.Sub(t.start)
		tm.Data = end.Sub(t.firstByte)
	}
	return tm
}

// schemeTransport is one probe's transport: plain-HTTP requests go through a transport without
// HTTP/2, HTTPS requests (the URL's, or a redirect's) through one that negotiates it, made on
// first use.
type schemeTransport struct {
	plain  *http.Transport
	secure func() *http.Transport
	tls    *http.Transport
}

func (t *schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return t.plain.RoundTrip(req)
	}
	if t.tls == nil { // a client's requests, redirects included, are sequential
		t.tls = t.secure()
	}
	return t.tls.RoundTrip(req)
}

func (t *schemeTransport) CloseIdleConnections() {
	t.plain.CloseIdleConnections()
	if t.tls != nil {
		t.tls.CloseIdleConnections()
	}
}
