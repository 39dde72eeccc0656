// Package egress is the browser's only way out when private targets are not allowed
// (VANTAGE_ALLOW_PRIVATE_TARGETS=false): a forward HTTP proxy on loopback, one per browser
// check, through which Chromium sends every request of the check's browser context — the
// page, its sub-resources, redirects, WebSockets and whatever the script navigates to.
//
// The proxy resolves each host itself and connects with the outbound address policy (pkg/netpolicy), checked on the very
// address being connected to, so a name that resolves (or re-resolves) to a private address is
// refused just as the HTTP prober refuses it. A refused CONNECT (https, wss) answers 403, which
// Chromium reports as net::ERR_TUNNEL_CONNECTION_FAILED; a refused plain-HTTP request closes
// the connection without a response (net::ERR_EMPTY_RESPONSE), so that no page of the proxy's
// own is ever mistaken for the target's. Every refusal is recorded (Blocked) so the check's
// result can say what was refused and why.
//
// The proxy also measures what the browser cannot see behind it: for each host, how long its
// first resolution and first TCP connection took (Timing). With the proxy on, the browser's
// own DNS and connect figures measure the hop to the proxy, so the agent reports these instead.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// Config configures a Proxy. The zero value is usable.
type Config struct {
	// Resolver resolves target host names. Default net.DefaultResolver.
	Resolver *net.Resolver
	// Logger logs what the proxy could not do for reasons other than the policy. Default: none.
	Logger *slog.Logger
}

// Block is one refused destination.
type Block struct {
	Host   string // host:port as the browser asked for it
	Reason string // "10.0.0.7 is a private address", or why the name could not be checked
}

func (b Block) String() string { return b.Host + " (" + b.Reason + ")" }

// Timing is how long reaching one host took, the first time.
type Timing struct {
	DNS     time.Duration // resolving the name (zero for an IP address)
	Connect time.Duration // the TCP connection to the address it resolved to
}

// Proxy is one check's forward proxy. Close it when the check ends.
type Proxy struct {
	lis       net.Listener
	srv       *http.Server
	resolver  *net.Resolver
	transport *http.Transport
	log       *slog.Logger

	mu      sync.Mutex
	blocked []Block
	timings map[string]Timing // by host:port
	tunnels map[net.Conn]struct{}
	closed  bool
}

// Start listens on a free loopback port and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: listen: %w", err)
	}
	p := &Proxy{
		lis:      lis,
		resolver: cfg.Resolver,
		log:      cfg.Logger,
		timings:  map[string]Timing{},
		tunnels:  map[net.Conn]struct{}{},
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		DisableCompression:     true, // pass the browser's Accept-Encoding and the body through untouched
		MaxResponseHeaderBytes: 1 << 20,
		IdleConnTimeout:        30 * time.Second,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// A proxied request already carries its absolute URL; forward it as it is.
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport:    p.transport,
		ErrorHandler: p.forwardFailed,
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodConnect {
				p.tunnel(w, r)
				return
			}
			if !r.URL.IsAbs() || r.URL.Scheme != "http" {
				http.Error(w, "this is a forward proxy for http:// URLs and CONNECT", http.StatusBadRequest)
				return
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	go p.srv.Serve(lis) //nolint:errcheck // ends with Close
	return p, nil
}

// URL is the proxy's address for Chromium: http://127.0.0.1:<port>.
func (p *Proxy) URL() string { return "http://" + p.lis.Addr().String() }

// Blocked returns the refused destinations so far, each once, in the order refused.
func (p *Proxy) Blocked() []Block {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.blocked)
}

// Timing returns how long the first resolution of and connection to hostport took.
func (p *Proxy) Timing(hostport string) (Timing, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.timings[hostport]
	return t, ok
}

// Close stops the proxy and cuts every connection it holds, tunnels included.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.transport.CloseIdleConnections()
	return err
}

// tunnel serves CONNECT host:port: it dials the target under the policy, answers 200 and
// copies bytes both ways until either side closes or the proxy is closed.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, netpolicy.ErrForbidden) {
			status = http.StatusForbidden
		}
		http.Error(w, "", status)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		target.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		target.Close()
		return
	}
	if !p.track(client, target) {
		client.Close()
		target.Close()
		return
	}
	defer p.untrack(client, target)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the browser sent right after CONNECT may already sit in the reader.
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			if _, err := target.Write(b); err != nil {
				done <- struct{}{}
				return
			}
		}
		io.Copy(target, client) //nolint:errcheck // ends when either side closes
		closeWrite(target)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, target) //nolint:errcheck // ends when either side closes
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite() //nolint:errcheck // the other direction may still be open; Close follows
		return
	}
	c.Close()
}

// track registers a tunnel's two connections so Close can cut them; false once closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.tunnels, c)
		c.Close()
	}
	p.mu.Unlock()
}

// forwardFailed ends a plain-HTTP request the proxy could not forward. A refused target gets
// no response at all (the connection is cut), so the browser reports a network error, not a
// page; other failures answer 502 as any proxy would.
func (p *Proxy) forwardFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, netpolicy.ErrForbidden) {
		panic(http.ErrAbortHandler)
	}
	if r.Context().Err() == nil {
		p.log.Debug("egress proxy: forward failed", "host", r.Host, "err", err)
	}
	w.WriteHeader(http.StatusBadGateway)
}

// dial resolves hostport's host, refuses it when any address it would connect to is not
// public (netpolicy), and connects to the first address that answers. The first resolution and
// connection per host:port are timed.
func (p *Proxy) dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("bad port in %q", hostport)
	}
	start := time.Now()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = p.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	resolved := time.Since(start)
	d := netpolicy.Dialer(p.resolver, false)
	var lastErr error
	for _, a := range addrs {
		connStart := time.Now()
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, mustPort(port)).String())
		if err == nil {
			p.record(hostport, Timing{DNS: resolved, Connect: time.Since(connStart)})
			return c, nil
		}
		if errors.Is(err, netpolicy.ErrForbidden) {
			p.block(hostport, err)
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("%s has no address", host)
	}
	return nil, lastErr
}

func mustPort(s string) uint16 {
	n, _ := strconv.ParseUint(s, 10, 16)
	return uint16(n)
}

func (p *Proxy) record(hostport string, t Timing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.timings[hostport]; !ok {
		p.timings[hostport] = t
	}
}

func (p *Proxy) block(hostport string, err error) {
	reason := err.Error()
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		reason = opErr.Err.Error()
	}
	reason = strings.TrimPrefix(reason, netpolicy.ErrForbidden.Error()+": ")
	p.mu.Lock()
	defer p.mu.Unlock()
	b := Block{Host: hostport, Reason: reason}
	if !slices.Contains(p.blocked, b) {
		p.blocked = append(p.blocked, b)
	}
}
