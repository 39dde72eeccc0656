// Package jobqueue connects the control plane to NATS — the machine's server, or an embedded
// nats-server when no URL is configured — and declares the JetStream topology jobs travel
// through: stream VANTAGE_JOBS and one durable pull consumer per region (names in pkg/wire).
package jobqueue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config says which NATS to use.
type Config struct {
	// URL of a NATS server with JetStream (VANTAGE_NATS_URL). Empty starts an embedded server.
	URL string
	// StoreDir is the embedded server's JetStream storage (VANTAGE_NATS_STORE_DIR). Default
	// ".vantage/nats".
	StoreDir string
	// EmbeddedHost and EmbeddedPort are where the embedded server listens for agents
	// (VANTAGE_NATS_EMBEDDED_ADDR). Default 127.0.0.1:4222 (the NATS default port); port -1
	// picks a free one. The host must be a loopback address: the embedded server is for local
	// runs, not a shared NATS.
	EmbeddedHost string
	EmbeddedPort int
	// EmbeddedUser and EmbeddedPassword are the only credentials the embedded server accepts
	// (VANTAGE_NATS_EMBEDDED_USER, VANTAGE_NATS_EMBEDDED_PASSWORD); agents connect with
	// nats://user:password@host:port. Default user "vantage"; an empty password is replaced by
	// a random one for this run, so that only the control plane itself can connect.
	EmbeddedUser     string
	EmbeddedPassword string
	// Name is the client connection's name in the server's monitoring. Default
	// "vantage-controlplane".
	Name string
	// Logger receives connection events and the embedded server's log. Default: discarded.
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.StoreDir == "" {
		c.StoreDir = ".vantage/nats"
	}
	if c.EmbeddedHost == "" {
		c.EmbeddedHost = "127.0.0.1"
	}
	if c.EmbeddedPort == 0 {
		c.EmbeddedPort = 4222
	}
	if c.Name == "" {
		c.Name = "vantage-controlplane"
	}
	if c.EmbeddedUser == "" {
		c.EmbeddedUser = "vantage"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Connect connects to cfg.URL, or starts an embedded nats-server with JetStream and connects
// to it in-process when cfg.URL is empty, and logs where NATS is. The connection reconnects
// for ever. shutdown closes the connection and stops the embedded server.
func Connect(ctx context.Context, cfg Config) (nc *nats.Conn, shutdown func(), err error) {
	cfg.setDefaults()
	log := cfg.Logger
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", redactURL(c.ConnectedUrl())) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Warn("nats asynchronous error", "subject", subject, "err", err)
		}),
	}
	if cfg.URL != "" {
		if deadline, ok := ctx.Deadline(); ok {
			opts = append(opts, nats.Timeout(time.Until(deadline)))
		}
		nc, err := nats.Connect(cfg.URL, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS at %s: %w", redactURL(cfg.URL), err)
		}
		log.Info("nats connected", "url", redactURL(nc.ConnectedUrl()), "embedded", false)
		return nc, nc.Close, nil
	}

	password := cfg.EmbeddedPassword
	if password == "" {
		password = randomPassword()
	}
	ns, err := StartEmbedded(EmbeddedOptions{Host: cfg.EmbeddedHost, Port: cfg.EmbeddedPort, StoreDir: cfg.StoreDir,
		User: cfg.EmbeddedUser, Password: password, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	nc, err = nats.Connect(ns.ClientURL(), append(opts, nats.InProcessServer(ns), nats.UserInfo(cfg.EmbeddedUser, password))...)
	if err != nil {
		ns.Shutdown()
		return nil, nil, fmt.Errorf("connect to embedded NATS: %w", err)
	}
	log.Info("nats embedded server started", "url", ns.ClientURL(), "user", cfg.EmbeddedUser,
		"password_generated", cfg.EmbeddedPassword == "", "store_dir", cfg.StoreDir, "embedded", true)
	return nc, func() {
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
	}, nil
}

// EmbeddedOptions configures StartEmbedded.
type EmbeddedOptions struct {
	Host     string       // listen host, a loopback address; default 127.0.0.1
	Port     int          // listen port; -1 picks a free one (tests); 0 means 4222
	StoreDir string       // JetStream storage directory (required)
	User     string       // with Password: the only credentials accepted; both empty: none needed (tests)
	Password string       //
	Logger   *slog.Logger // nil: the server logs nothing
}

// StartEmbedded starts a nats-server with JetStream in this process and waits until it
// accepts connections. It is for local runs and tests: it listens on loopback only, and
// accepts only User and Password when they are set.
func StartEmbedded(o EmbeddedOptions) (*server.Server, error) {
	if o.StoreDir == "" {
		return nil, errors.New("embedded NATS: a JetStream store directory is required")
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if ip := net.ParseIP(o.Host); o.Host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("embedded NATS: host %q is not a loopback address; use a NATS server of its own for anything but a local run", o.Host)
	}
	if (o.User == "") != (o.Password == "") {
		return nil, errors.New("embedded NATS: user and password go together")
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "vantage-embedded",
		Host:       o.Host,
		Port:       o.Port,
		JetStream:  true,
		StoreDir:   o.StoreDir,
		Username:   o.User,
		Password:   o.Password,
		NoSigs:     true,
		NoLog:      o.Logger == nil,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	if o.Logger != nil {
		ns.SetLoggerV2(slogAdapter{o.Logger.With("embedded_server", true)}, false, false, false)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start listening on %s:%d within 10s (is the port taken?)", o.Host, o.Port)
	}
	return ns, nil
}

// randomPassword is a password for an embedded server nobody configured one for.
func randomPassword() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// Ping reports whether the connection is up and the server answers (readiness). Without a
// deadline in ctx it waits up to 2s.
func Ping(ctx context.Context, nc *nats.Conn) error {
	if !nc.IsConnected() {
		return fmt.Errorf("nats: %s", nc.Status())
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
	}
	return nc.FlushWithContext(ctx)
}

// redactURL drops credentials from a NATS URL before it is logged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("redacted")
	return u.String()
}

// slogAdapter lets nats-server log through slog.
type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Noticef(format string, v ...any) { a.log.Info(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Warnf(format string, v ...any)   { a.log.Warn(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Fatalf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Errorf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Debugf(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Tracef(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
