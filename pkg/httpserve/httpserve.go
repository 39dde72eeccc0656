// Package httpserve builds the HTTP servers of Vantage's binaries with the limits every
// listener needs against slow or greedy clients: read, write and idle timeouts (a client that
// sends its headers and then trickles or withholds its body is cut off), header and body size
// caps, and a bound on the concurrent connections of one client address.
package httpserve

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Config holds the limits of one server. Zero values take the documented defaults.
type Config struct {
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s, and never more than
	// ReadTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a client that sends complete
	// headers and then withholds its body gets its connection closed when it passes. Default
	// 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling a request and writing its answer, counted from the end of
	// its headers. Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that waits this long for its next request.
	// Default 120s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's header block; more is answered 431. Default 64 KiB.
	MaxHeaderBytes int
	// MaxBodyBytes caps every request body; a handler reading past it gets an error (and may
	// cap lower itself). Default 2 MiB.
	MaxBodyBytes int64
	// MaxConnsPerClient bounds the open connections of one client IP address: a connection
	// beyond it is closed as soon as it is accepted. Default 64; negative: no bound.
	MaxConnsPerClient int
	// Unbounded reports addresses exempt from MaxConnsPerClient, such as trusted reverse
	// proxies, whose connections carry many clients. Default: none.
	Unbounded func(netip.Addr) bool
}

// Defaults.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxBodyBytes      = 2 << 20
	DefaultMaxConnsPerClient = 64
)

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.ReadHeaderTimeout, min(DefaultReadHeaderTimeout, c.ReadTimeout))
	c.ReadHeaderTimeout = min(c.ReadHeaderTimeout, c.ReadTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxConnsPerClient == 0 {
		c.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	return c
}

// NewServer returns a server of h with cfg's timeouts and size caps; serve it on a listener
// from Listen (or wrapped by LimitPerClient) so that the per-client bound applies too. The
// server's own errors (bad TLS handshakes, accept errors) go to log at warn level.
func NewServer(cfg Config, h http.Handler, log *slog.Logger) *http.Server {
	cfg = cfg.withDefaults()
	return &http.Server{
		Handler:           http.MaxBytesHandler(h, cfg.MaxBodyBytes),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Listen listens on the TCP address addr, bounding the connections per client as cfg says.
func Listen(addr string, cfg Config) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return LimitPerClient(lis, cfg.MaxConnsPerClient, cfg.Unbounded), nil
}
