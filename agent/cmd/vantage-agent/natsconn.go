package main

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vantagehq/vantage/agent/internal/config"
)

// natsHealth is why NATS is not connected, for /readyz and the log: the last error of a
// connection attempt, cleared when one succeeds.
type natsHealth struct {
	mu      sync.Mutex
	lastErr string
}

func (h *natsHealth) set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.lastErr = ""
		return
	}
	h.lastErr = err.Error()
}

// reason is the last connection error, or "" when there was none.
func (h *natsHealth) reason() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}

// NATS reconnect backoff: jittered, doubling from natsMinBackoff to natsMaxBackoff.
const (
	natsMinBackoff = 250 * time.Millisecond
	natsMaxBackoff = 30 * time.Second
)

// connectNATS returns a connection that keeps trying NATS in the background, whatever is
// wrong: nothing listening, a wrong address, credentials refused. Start order does not
// matter, and a configuration error is not silent: every failed attempt is logged with its
// reason and its next try, and health says why the agent is not ready until it connects.
func connectNATS(cfg config.Config, logger *slog.Logger) (*nats.Conn, *natsHealth, error) {
	log := logger.With("component", "nats")
	health := &natsHealth{}
	servers := redactURLs(cfg.NATSURL)
	opts := []nats.Option{
		nats.Name("vantage-agent " + cfg.AgentID),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		// nats.go gives up after the same authorization error twice; credentials are often
		// fixed on the server side (a new account or user), so keep trying.
		nats.IgnoreAuthErrorAbort(),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			d := min(natsMinBackoff<<min(attempts, 8), natsMaxBackoff)
			return d/2 + rand.N(d/2+1) //nolint:gosec // jitter, not a secret
		}),
		nats.ConnectHandler(func(nc *nats.Conn) {
			health.set(nil)
			log.Info("NATS connected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			health.set(nil)
			log.Info("NATS connected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			health.set(err)
			log.Warn("cannot connect to NATS; retrying with backoff", "servers", servers, "err", err)
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				health.set(err)
			}
			log.Warn("NATS disconnected", "err", err)
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("NATS error", "err", err)
		}),
	}
	if cfg.NATSCredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.NATSCredsFile))
	}
	nc, err := nats.Connect(cfg.NATSURL, opts...)
	if err != nil {
		return nil, nil, err
	}
	if !nc.IsConnected() && health.reason() == "" {
		health.set(errors.New("connecting")) // until the first attempt in the background ends
	}
	return nc, health, nil
}

// redactURLs is a comma-separated list of NATS URLs without their credentials, for the log.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := url.Parse(p); err == nil && u.User != nil {
			u.User = nil
			p = u.String()
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
