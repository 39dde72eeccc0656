// Package prober runs one check attempt against its target and judges it: probe first, judge
// after. There is one prober per check kind, one file each (http.go, dns.go, tcp.go,
// browser.go), all behind one signature, [Prober].
//
// The caller sets the attempt's deadline once, in ctx (context.WithTimeout with the check's
// timeout, [Request.Timeout]); probers only honour ctx. A target that fails — refuses the
// connection, times out, answers 503, fails an assertion — gives a [Result] with Passing false
// and a classified FailureSource and FailureType, never an error. Probe returns an error only
// when the agent itself could not finish the attempt because ctx was cancelled (the agent is
// shutting down); such an attempt must not be reported.
package prober

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
)

// Prober runs one attempt of a check.
type Prober interface {
	Probe(ctx context.Context, req Request) (Result, error)
}

// Request is what an attempt needs: exactly what a job carries, with environment variables
// already substituted by the control plane. The job's protobuf maps one to one onto it.
type Request struct {
	Kind check.Kind
	// Timeout is the check's timeout. The caller turns it into the deadline of ctx; probers do
	// not read it.
	Timeout    time.Duration
	Assertions []check.Assertion
	// Secrets are the values of the secret variables the check references. Every occurrence is
	// replaced with "[REDACTED]" in what the result stores (supplement §2.11).
	Secrets []string

	HTTP HTTPSpec // UPTIME (and URL-based BROWSER)
	DNS  DNSSpec  // DNS
	TCP  TCPSpec  // TCP
}

// HTTPSpec describes an uptime check's request.
type HTTPSpec struct {
	URL     string
	Method  string            // GET, HEAD, POST, PUT, PATCH, DELETE; "" is GET
	Headers map[string]string // sent as given; a User-Agent here replaces the default, a Host sets the request's host
	Body    string
	// BasicAuth is nil when the check has no credentials; empty strings are sent as they are.
	BasicAuth *BasicAuth
	// FollowRedirects follows up to MaxRedirects redirects; when false the first response is
	// judged, and a 3xx passes. The API's default is true; the job always carries the value.
	FollowRedirects bool
	// VerifySSL fails the attempt on an invalid certificate. The API's default is true; the job
	// always carries the value.
	VerifySSL bool
	// TextToSearchFor, when not empty, must appear in the body (case-sensitive).
	TextToSearchFor string
}

// BasicAuth is HTTP Basic credentials.
type BasicAuth struct {
	Username string
	Password string
}

// DNSSpec describes a DNS check's query.
type DNSSpec struct {
	Domain     string
	RecordType string // A, AAAA, CNAME, MX, NS, SOA, TXT
	// Resolver is host:port ([v6]:port for IPv6; a missing port means 53), or "" for the
	// system's resolvers from resolv.conf.
	Resolver string
	Protocol string // UDP or TCP; "" is UDP
}

// TCPSpec describes a TCP check's connection.
type TCPSpec struct {
	Hostname string
	Port     int
	IPFamily string // IPv4 or IPv6; "" is IPv4
	// Data is sent right after connecting; the reply is then read (see tcp.go).
	Data string
	// ShouldFail inverts the verdict: a connection that cannot be made passes, one that is made
	// fails with UNEXPECTED_CONNECTION.
	ShouldFail bool
}

// Limits and fixed values of the probers.
const (
	// UserAgent is sent with every HTTP probe unless the check sets its own.
	UserAgent = "Vantage/1.0 (+uptime monitoring)"
	// MaxRedirects is how many redirects an HTTP probe follows before TOO_MANY_REDIRECTS.
	MaxRedirects = 10
	// MaxBodyRead is how much of a body (or TCP reply) is read and judged by assertions and
	// text_to_search_for.
	MaxBodyRead = 1 << 20
	// MaxBodyStored is how much of it the result keeps in ResponseBody.
	MaxBodyStored = 64 << 10
	// Redacted replaces secret values.
	Redacted = "[REDACTED]"
)

// options are the settings shared by the probers; see the With functions for defaults.
type options struct {
	allowPrivate bool
	resolver     *net.Resolver
	resolvConf   string
	tcpReadIdle  time.Duration
	rootCAs      *x509.CertPool
}

// Option configures a prober.
type Option func(*options)

func newOptions(opts []Option) options {
	o := options{
		allowPrivate: true,
		resolver:     net.DefaultResolver,
		resolvConf:   "/etc/resolv.conf",
		tcpReadIdle:  500 * time.Millisecond,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithPrivateTargets sets whether probes may connect to loopback, private (RFC 1918, RFC 4193),
// link-local, carrier-grade NAT, multicast and unspecified addresses. Default true, for
// self-hosting; a hosted deployment sets false. The address is checked when the socket
// connects, after name resolution, so DNS rebinding cannot get around it. A refused target
// fails with FORBIDDEN_TARGET. The system's own DNS resolvers are always allowed.
func WithPrivateTargets(allow bool) Option { return func(o *options) { o.allowPrivate = allow } }

// WithResolver sets the resolver for target host names of HTTP and TCP probes. Default
// net.DefaultResolver.
func WithResolver(r *net.Resolver) Option { return func(o *options) { o.resolver = r } }

// WithResolvConf sets the file DNS probes read the system's resolvers from when a check names
// none. Default /etc/resolv.conf.
func WithResolvConf(path string) Option { return func(o *options) { o.resolvConf = path } }

// WithTCPReadIdle sets how long a TCP probe waits for more of a reply once part of it has
// arrived before it takes the reply as complete. Default 500ms.
func WithTCPReadIdle(d time.Duration) Option { return func(o *options) { o.tcpReadIdle = d } }

// WithRootCAs sets the certificate authorities HTTPS probes trust when a check verifies
// certificates, for agents that monitor services of a private CA. Default: the system's.
func WithRootCAs(pool *x509.CertPool) Option { return func(o *options) { o.rootCAs = pool } }

// Runner dispatches each request to the prober of its kind.
type Runner struct {
	probers map[check.Kind]Prober
}

var _ Prober = (*Runner)(nil)

// New returns a Runner with a prober for every kind, all configured by opts. Browser checks
// need the agent's browser and read the job directly (Browser); this Runner answers them with
// NOT_SUPPORTED.
func New(opts ...Option) *Runner {
	return &Runner{probers: map[check.Kind]Prober{
		check.Uptime:  NewHTTP(opts...),
		check.DNS:     NewDNS(opts...),
		check.TCP:     NewTCP(opts...),
		check.Browser: notSupported{},
	}}
}

// Probe runs req with the prober of req.Kind.
func (r *Runner) Probe(ctx context.Context, req Request) (Result, error) {
	p, ok := r.probers[req.Kind]
	if !ok {
		res := Result{Kind: req.Kind}
		res.failTransport(InvalidRequest, fmt.Sprintf("unknown check kind %q", req.Kind))
		return res, nil
	}
	return p.Probe(ctx, req)
}

// ErrCancelled is returned (wrapped) by Probe when ctx was cancelled before the attempt could
// finish; the attempt has no result.
var ErrCancelled = errors.New("probe cancelled")

// cancelled reports the agent-side cancellation of ctx as an error; a passed deadline is the
// target's failure (TIMEOUT), not the agent's, and gives nil.
func cancelled(ctx context.Context) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx))
	}
	return nil
}
