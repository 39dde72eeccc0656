package pwscript

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// RequestOptions configures the `request` fixture and `page.request` (Playwright's
// APIRequestContext): HTTP calls the script makes from the runtime itself, not from the page.
// They go through the same outbound address policy as the rest of the agent's probes.
type RequestOptions struct {
	// AllowPrivate lets calls reach loopback, private, link-local and other special-purpose
	// addresses (netpolicy). Default false: refused where the socket connects, after name
	// resolution, so DNS rebinding cannot get around it.
	AllowPrivate bool
	// Resolver resolves the hosts of calls. Default net.DefaultResolver.
	Resolver *net.Resolver
	// RootCAs are the certificate authorities calls trust. Default: the system's.
	RootCAs *x509.CertPool
	// UserAgent is sent with every call that sets none. Default "": Go's.
	UserAgent string
	// MaxResponseBytes caps each response body; a larger body fails the call. Default 8 MiB.
	MaxResponseBytes int64
}

const (
	defaultMaxResponseBytes = 8 << 20
	defaultMaxRedirects     = 20 // Playwright's
	// requestConnectTimeout bounds a connection attempt, below the call's own timeout.
	requestConnectTimeout = 10 * time.Second
)

// requestState is the run's HTTP machinery: one transport per TLS mode (connections are
// reused within a run, never across runs) and the responses the script holds, by their JS
// object, for expect(response).toBeOK().
type requestState struct {
	opts      RequestOptions
	verify    *http.Transport
	insecure  *http.Transport
	responses map[*goja.Object]*apiResponse
}

func newRequestState(o RequestOptions) *requestState {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = defaultMaxResponseBytes
	}
	transport := func(insecure bool) *http.Transport {
		d := netpolicy.Dialer(o.Resolver, o.AllowPrivate)
		d.Timeout = requestConnectTimeout
		return &http.Transport{
			Proxy:                  nil,
			DialContext:            d.DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs, InsecureSkipVerify: insecure}, //nolint:gosec // G402: ignoreHTTPSErrors is the script's explicit choice
			ForceAttemptHTTP2:      true,
			MaxResponseHeaderBytes: 1 << 20,
			MaxIdleConnsPerHost:    4,
		}
	}
	return &requestState{opts: o, verify: transport(false), insecure: transport(true), responses: map[*goja.Object]*apiResponse{}}
}

func (s *requestState) close() {
	s.verify.CloseIdleConnections()
	s.insecure.CloseIdleConnections()
}

// apiContext is one APIRequestContext: the `request` fixture (cookies of its own, as in
// Playwright) or a page's (cookies of the page's browser context).
type apiContext struct {
	jar http.CookieJar
}

// requests returns the run's request state, made on first use.
func (r *run) requests() *requestState {
	if r.req == nil {
		r.req = newRequestState(r.opts.Request)
	}
	return r.req
}

// apiRequestContext builds an APIRequestContext for the script. name prefixes messages, as
// Playwright's "apiRequestContext.get: …".
func (r *run) apiRequestContext(jar http.CookieJar) *goja.Object {
	if jar == nil {
		jar, _ = cookiejar.New(nil) // never fails without options
	}
	c := &apiContext{jar: jar}
	m := map[string]any{}
	for _, method := range []string{"get", "post", "put", "patch", "delete", "head"} {
		m[method] = func(call goja.FunctionCall) goja.Value {
			return r.fetch(c, call, method, strings.ToUpper(method))
		}
	}
	m["fetch"] = func(call goja.FunctionCall) goja.Value { return r.fetch(c, call, "fetch", "") }
	m["dispose"] = func(goja.FunctionCall) goja.Value {
		p, resolve, _ := r.vm.NewPromise()
		must(resolve(goja.Undefined()))
		return r.vm.ToValue(p)
	}
	return r.object("apiRequestContext", m)
}

// requestCall is one call, read from its arguments on the loop.
type requestCall struct {
	method        string
	url           string
	headers       http.Header
	body          []byte
	timeout       time.Duration // 0: none of its own
	failOnStatus  bool
	maxRedirects  int
	ignoreHTTPS   bool
	describeTitle string
}

var requestOptionNames = []string{"data", "form", "multipart", "headers", "params", "timeout",
	"failOnStatusCode", "maxRedirects", "ignoreHTTPSErrors", "method"}

// fetch implements get/post/…/fetch: it reads the call on the loop and makes it on its own
// goroutine; the promise settles with an APIResponse.
func (r *run) fetch(c *apiContext, call goja.FunctionCall, name, method string) goja.Value {
	fn := "apiRequestContext." + name
	target, ok := call.Argument(0).Export().(string)
	if !ok {
		if _, isObj := call.Argument(0).(*goja.Object); isObj {
			panic(r.notSupported(fn + "(request) with a Request object; pass its URL"))
		}
		panic(r.typeError("%s: url: expected a string, got %s", fn, describeType(call.Argument(0))))
	}
	known := requestOptionNames
	if name != "fetch" {
		known = known[:len(known)-1] // only fetch takes a method
	}
	opts := r.options(r.argObject(call, 1, fn), fn, known...)
	rc, err := r.readRequest(fn, method, target, opts)
	if err != nil {
		panic(r.typeError("%s: %v", fn, err))
	}
	return r.async(fn+"("+jsQuote(target)+")", "pw:api", func(ctx context.Context) (any, error) {
		resp, err := r.requests().do(ctx, c, rc)
		if err != nil {
			return nil, err
		}
		if rc.failOnStatus && (resp.status < 200 || resp.status >= 400) {
			return nil, opErr(CauseAssertion, "%s: %d %s%s", fn, resp.status, resp.statusText, resp.textForMessage())
		}
		return jsResult(func() goja.Value { return r.apiResponseObject(resp) }), nil
	})
}

// readRequest reads the URL and options of a call (on the loop: they are JS values).
func (r *run) readRequest(fn, method, target string, opts map[string]goja.Value) (*requestCall, error) {
	rc := &requestCall{method: method, headers: http.Header{}, maxRedirects: defaultMaxRedirects, describeTitle: fn}
	if m, ok := opts["method"]; ok {
		s, ok := m.Export().(string)
		if !ok || s == "" {
			return nil, errors.New("method: expected a non-empty string")
		}
		rc.method = strings.ToUpper(s)
	}
	if rc.method == "" {
		rc.method = http.MethodGet
	}
	u, err := r.requestURL(target)
	if err != nil {
		return nil, err
	}
	if p, ok := opts["params"]; ok {
		if err := r.addParams(u, p); err != nil {
			return nil, err
		}
	}
	rc.url = u.String()
	if h, ok := opts["headers"]; ok {
		o, ok := h.(*goja.Object)
		if !ok {
			return nil, errors.New("headers: expected an object")
		}
		for _, k := range o.Keys() {
			rc.headers.Set(k, o.Get(k).String())
		}
	}
	bodies := 0
	for _, k := range []string{"data", "form", "multipart"} {
		if _, ok := opts[k]; ok {
			bodies++
		}
	}
	if bodies > 1 {
		return nil, errors.New("only one of 'data', 'form' or 'multipart' can be specified")
	}
	switch {
	case opts["data"] != nil:
		rc.body, err = r.dataBody(opts["data"], rc.headers)
	case opts["form"] != nil:
		rc.body, err = r.formBody(opts["form"], rc.headers)
	case opts["multipart"] != nil:
		rc.body, err = r.multipartBody(opts["multipart"], rc.headers)
	}
	if err != nil {
		return nil, err
	}
	if t, ok := opts["timeout"]; ok {
		ms := t.ToFloat()
		if ms < 0 || ms != ms {
			return nil, errors.New("timeout: expected a number of milliseconds ≥ 0")
		}
		rc.timeout = time.Duration(ms * float64(time.Millisecond))
	}
	if v, ok := opts["failOnStatusCode"]; ok {
		rc.failOnStatus = v.ToBoolean()
	}
	if v, ok := opts["ignoreHTTPSErrors"]; ok {
		rc.ignoreHTTPS = v.ToBoolean()
	}
	if v, ok := opts["maxRedirects"]; ok {
		n := v.ToInteger()
		if n < 0 || !isNumber(v) {
			return nil, errors.New("maxRedirects: expected a number ≥ 0")
		}
		rc.maxRedirects = int(n)
	}
	return rc, nil
}

// requestURL parses target, relative to the base URL when it has no scheme, and keeps to
// http and https.
func (r *run) requestURL(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q", target)
	}
	if !u.IsAbs() {
		base := r.opts.BaseURL
		if base == "" {
			return nil, fmt.Errorf("invalid URL %q: a relative URL needs a baseURL", target)
		}
		b, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("invalid baseURL %q", base)
		}
		u = b.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("unsupported protocol %q in %q: only http and https", u.Scheme+":", target)
	}
	return u, nil
}

// addParams sets the query parameters of params (an object or a query string) on u, as
// Playwright does (searchParams.set: a parameter given replaces the URL's).
func (r *run) addParams(u *url.URL, p goja.Value) error {
	q := u.Query()
	if s, ok := p.Export().(string); ok {
		given, err := url.ParseQuery(strings.TrimPrefix(s, "?"))
		if err != nil {
			return fmt.Errorf("params: %v", err)
		}
		for k, vs := range given {
			q[k] = vs
		}
	} else if o, ok := p.(*goja.Object); ok {
		for _, k := range o.Keys() {
			q.Set(k, o.Get(k).String())
		}
	} else {
		return errors.New("params: expected an object or a string")
	}
	u.RawQuery = q.Encode()
	return nil
}

// do makes the call: redirects up to its maxRedirects, its timeout, the body capped.
func (s *requestState) do(ctx context.Context, c *apiContext, rc *requestCall) (*apiResponse, error) {
	fn := rc.describeTitle
	if rc.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, rc.timeout, errRequestTimeout)
		defer cancel()
	}
	var body io.Reader
	if rc.body != nil {
		body = strings.NewReader(string(rc.body))
	}
	req, err := http.NewRequestWithContext(ctx, rc.method, rc.url, body)
	if err != nil {
		return nil, opErr(CauseScript, "%s: %v", fn, err)
	}
	req.Header = rc.headers.Clone()
	if req.Header.Get("User-Agent") == "" && s.opts.UserAgent != "" {
		req.Header.Set("User-Agent", s.opts.UserAgent)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "*/*")
	}
	transport := s.verify
	if rc.ignoreHTTPS {
		transport = s.insecure
	}
	client := &http.Client{Transport: transport, Jar: c.jar, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if rc.maxRedirects == 0 {
			return http.ErrUseLastResponse
		}
		if len(via) > rc.maxRedirects {
			return errMaxRedirects
		}
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, s.callError(ctx, rc, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, s.callError(ctx, rc, err)
	}
	if int64(len(b)) > s.opts.MaxResponseBytes {
		return nil, opErr(CauseScript, "%s: the response body is larger than the limit of %d bytes", fn, s.opts.MaxResponseBytes)
	}
	return newAPIResponse(resp, b), nil
}

var (
	errRequestTimeout = errors.New("request timeout")
	errMaxRedirects   = errors.New("Max redirect count exceeded") //nolint:staticcheck // ST1005: Playwright's message
)

// callError turns a failed call into the script's error: the host and the class of the
// failure (netpolicy.Describe, never the address it resolved to), or Playwright's timeout.
func (s *requestState) callError(ctx context.Context, rc *requestCall, err error) error {
	fn := rc.describeTitle
	switch {
	case errors.Is(context.Cause(ctx), errRequestTimeout):
		return opErr(CauseTimeout, "%s: Request timed out after %dms", fn, rc.timeout.Milliseconds())
	case ctx.Err() != nil:
		return ctx.Err() // the test's deadline, or the run canceled: the runner says which
	case errors.Is(err, errMaxRedirects):
		return opErr(CauseRequest, "%s: %s", fn, errMaxRedirects.Error())
	}
	host := rc.url
	if u, perr := url.Parse(rc.url); perr == nil {
		host = u.Host
	}
	return opErr(CauseRequest, "%s: %s", fn, netpolicy.Describe(host, err))
}

// CauseRequest is the cause of a call of the request fixture that got no response (DNS,
// connection, TLS, refused by the address policy, too many redirects).
const CauseRequest Cause = "request"

// apiResponseOf is the APIResponse behind a script object, or nil.
func (r *run) apiResponseOf(o *goja.Object) *apiResponse {
	if r.req == nil {
		return nil
	}
	return r.req.responses[o]
}

// requestOnlyFixtureError is the message of a browser fixture used where there is no browser.
func requestOnlyFixtureError(name string) string {
	return fmt.Sprintf("not supported: the %s fixture — a multistep check runs without a browser: its tests get { request } (and expect, test.step, process.env)", name)
}
