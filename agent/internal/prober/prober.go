// Package prober runs one check attempt against its target and judges it: probe first, judge
// after. There is one prober per check kind, one file each (http.go, dns.go, tcp.go,
// browser.go, ping.go, grpc.go, websocket.go, multistep.go), all behind one signature,
// [Prober], and one table of them by kind, [New]: the agent's only dispatch on a job's kind.
//
// The caller sets the attempt's deadline once, in ctx (context.WithTimeout with the job's
// timeout_ms); probers only honour ctx. A target that fails — refuses the
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
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Prober runs one attempt of a check. The job is the decoded job exactly as the control plane
// built it (pkg/check Job): environment variables already substituted, secrets to redact in its
// redact list. Probers read the specification of their kind from it (job.GetHttp(), GetDns(),
// GetTcp(), GetBrowser()) and the assertions with check.AssertionsOfJob.
type Prober interface {
	Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error)
}

// Limits and fixed values of the probers.
const (
	// MaxRedirects is how many redirects an HTTP probe follows before TOO_MANY_REDIRECTS.
	MaxRedirects = 10
	// MaxBodyRead is how much of a body (or TCP reply) is read and judged by assertions and
	// text_to_search_for.
	MaxBodyRead = 1 << 20
	// MaxBodyStored is how much of it the result keeps in ResponseBody.
	MaxBodyStored = wire.MaxResponseBodyBytes
)

// options are the settings shared by the probers; see the With functions for defaults.
type options struct {
	allowPrivate bool
	resolver     *net.Resolver
	resolvConf   string
	tcpReadIdle  time.Duration
	rootCAs      *x509.CertPool
	version      string // named by the User-Agent
	icmpMode     string // ping: ICMPUnprivileged, ICMPRaw or ICMPUnavailable; "" = detect
	// scriptHeapLimit interrupts multistep scripts once the process's heap passes it.
	scriptHeapLimit uint64
	browser         BrowserRunner // browser checks run in it; nil: they fail NOT_SUPPORTED
}

// Option configures a prober.
type Option func(*options)

func newOptions(opts []Option) options {
	o := options{
		allowPrivate: true,
		resolver:     net.DefaultResolver,
		resolvConf:   "/etc/resolv.conf",
		tcpReadIdle:  500 * time.Millisecond,
		// scriptHeapLimit default: well above an agent's own heap (tens of MiB), well below
		// the memory of the smallest machine an agent is deployed on.
		scriptHeapLimit: 512 << 20,
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

// WithScriptHeapLimit sets the Go heap size of the agent's process past which running multistep
// scripts are interrupted ("the script used more than … MiB of memory"), so that a script that
// allocates without bound fails instead of the agent. Default 512 MiB; 0 turns the watch off.
func WithScriptHeapLimit(bytes uint64) Option { return func(o *options) { o.scriptHeapLimit = bytes } }

// WithBrowser sets the agent's browser, which browser checks run in (Browser). Default none:
// browser attempts then fail NOT_SUPPORTED, as on an agent without Chromium.
func WithBrowser(b BrowserRunner) Option { return func(o *options) { o.browser = b } }

// ByKind runs each job with the prober of its kind. It is the agent's one dispatch by kind:
// the worker's runner (agent/internal/probe) and the canaries both probe through it.
type ByKind struct {
	probers map[check.Kind]Prober
}

var _ Prober = (*ByKind)(nil)

// New returns the table of the probers of every kind, all configured by opts. Adding a kind
// is adding its row here.
func New(opts ...Option) *ByKind {
	var browser Prober = notSupported{}
	if b := newOptions(opts).browser; b != nil {
		browser = NewBrowser(b, opts...)
	}
	return &ByKind{probers: map[check.Kind]Prober{
		check.Uptime:    NewHTTP(opts...),
		check.DNS:       NewDNS(opts...),
		check.TCP:       NewTCP(opts...),
		check.Browser:   browser,
		check.Ping:      NewPing(opts...),
		check.GRPC:      NewGRPC(opts...),
		check.WebSocket: NewWebSocket(opts...),
		// Multistep checks need no browser: every agent runs them.
		check.Multistep: NewMultistep(opts...),
	}}
}

// Probe runs job with the prober of its kind; a kind without one fails INVALID_REQUEST.
func (r *ByKind) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	kind := check.KindOfJob(job.GetKind())
	p, ok := r.probers[kind]
	if !ok {
		res := Result{Kind: kind}
		res.failTransport(InvalidRequest, fmt.Sprintf("unknown check kind %s", job.GetKind()))
		return res, nil
	}
	return p.Probe(ctx, job)
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
