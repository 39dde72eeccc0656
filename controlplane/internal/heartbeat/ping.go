package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// PingRecorder is what the ping endpoint needs from the store.
type PingRecorder interface {
	RecordPing(ctx context.Context, id uuid.UUID, kind store.PingKind, at time.Time) (bool, error)
}

var _ PingRecorder = (*store.Store)(nil)

// PingConfig tunes the ping endpoint. Zero values take the documented defaults.
type PingConfig struct {
	// Rate is the sustained pings per second allowed per heartbeat id. Default 1.
	Rate rate.Limit
	// Burst is how many pings of one id may come at once. Default 10.
	Burst int
	// Timeout bounds handling one ping: its rate-limit decision and its recording. Default 5s.
	Timeout time.Duration
}

// PingDeps are the ping endpoint's collaborators.
type PingDeps struct {
	Store PingRecorder // required
	// Limiter holds the ids' token buckets, shared by every replica (required).
	Limiter ratelimit.Limiter
	// Logger receives the endpoint's log (component heartbeat_ping). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Registerer receives vantage_heartbeat_pings_total{kind, result}. Default: a private
	// registry.
	Registerer prometheus.Registerer
}

// PingHandler is the public ping endpoint (api/openapi/heartbeats.yaml), served on its own listener:
//
//	GET|POST /{heartbeat_id}         the job ran (success)
//	GET|POST /{heartbeat_id}/start   the job started
//	GET|POST /{heartbeat_id}/fail    the job failed: DOWN at once
//
// No authentication; the body and query are ignored. Any well-formed id gets 200 with an empty
// body, whether or not a heartbeat took the ping (unknown and paused ids too: the endpoint does
// not reveal which ids exist). Errors are plain text: 404 for a malformed id (shorter than 8
// or longer than 128 characters, or characters other than letters, digits, '-' and '_') or an
// unknown path, 405 for other methods, 429 with Retry-After when one id pings faster than its
// token bucket allows (per id, compared case-insensitively as the store does; one bucket for
// every replica), and 500 when the ping could not be stored. The limit fails open: when its
// bucket cannot be read, the ping is recorded (or fails to be, with the same database).
type PingHandler struct {
	cfg     PingConfig
	rec     PingRecorder
	log     *slog.Logger
	now     func() time.Time
	pings   *prometheus.CounterVec
	limiter ratelimit.Limiter
	limit   ratelimit.Rule // per heartbeat id
}

var _ http.Handler = (*PingHandler)(nil)

// NewPingHandler returns the ping endpoint.
func NewPingHandler(cfg PingConfig, deps PingDeps) (*PingHandler, error) {
	if deps.Store == nil || deps.Limiter == nil {
		return nil, errors.New("heartbeat ping endpoint: a store and a limiter are required")
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 1
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 10
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	p := &PingHandler{cfg: cfg, rec: deps.Store, log: deps.Logger.With("component", "heartbeat_ping"), now: deps.Now,
		limiter: deps.Limiter, limit: ratelimit.Rule{Name: "heartbeat_ping",
			Every: time.Duration(float64(time.Second) / float64(cfg.Rate)), Burst: cfg.Burst, OnError: ratelimit.FailOpen},
		pings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_heartbeat_pings_total",
			Help: "Heartbeat pings by kind (success, start, fail) and result (accepted, rate_limited, invalid, error)."},
			[]string{"kind", "result"})}
	if err := deps.Registerer.Register(p.pings); err != nil {
		return nil, fmt.Errorf("heartbeat ping endpoint: register metrics: %w", err)
	}
	return p, nil
}

const maxPingIDLength = 128

// validPingID is the syntax of a heartbeat id on the ping endpoint.
func validPingID(s string) bool {
	if len(s) < 8 || len(s) > maxPingIDLength {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// ServeHTTP implements the endpoint.
func (p *PingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	id, action, _ := strings.Cut(path, "/")
	kind := store.PingSuccess
	switch action {
	case "":
	case "start":
		kind = store.PingStart
	case "fail":
		kind = store.PingFail
	default:
		plain(w, http.StatusNotFound, "not found")
		return
	}
	if !validPingID(id) {
		p.pings.WithLabelValues(string(kind), "invalid").Inc()
		plain(w, http.StatusNotFound, "invalid heartbeat id")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		plain(w, http.StatusMethodNotAllowed, "method not allowed: use GET or POST")
		return
	}
	now := p.now()
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	wait, err := p.reserve(ctx, canonicalPingID(id), now)
	if err != nil { // the rule fails open: only a broken rule gets here
		p.pings.WithLabelValues(string(kind), "error").Inc()
		p.log.ErrorContext(ctx, "rate limit failed", "err", err)
		plain(w, http.StatusInternalServerError, "internal error")
		return
	}
	if wait > 0 {
		p.pings.WithLabelValues(string(kind), "rate_limited").Inc()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		plain(w, http.StatusTooManyRequests, "too many requests for this heartbeat")
		return
	}
	// Only our own ids can name a heartbeat; any other well-formed id is accepted and dropped.
	if hid, err := uuid.Parse(id); err == nil && len(id) == 36 {
		if _, err := p.rec.RecordPing(ctx, hid, kind, now); err != nil {
			p.pings.WithLabelValues(string(kind), "error").Inc()
			p.log.ErrorContext(ctx, "record ping failed", "heartbeat_id", hid.String(), "err", err)
			plain(w, http.StatusInternalServerError, "internal error")
			return
		}
	}
	p.pings.WithLabelValues(string(kind), "accepted").Inc()
	w.WriteHeader(http.StatusOK)
}

// canonicalPingID is the rate-limit key of a ping id: the heartbeat it names, whatever the
// case it was typed in. The store reads ids case-insensitively, so keying the bucket by the id
// as typed would give every case variant of one heartbeat its own bucket.
func canonicalPingID(id string) string {
	return strings.ToLower(id)
}

// reserve takes one token of id's bucket; it returns 0 when the ping may proceed, else how long
// until a token is available (taking nothing).
func (p *PingHandler) reserve(ctx context.Context, id string, now time.Time) (time.Duration, error) {
	return p.limiter.Reserve(ctx, p.limit, id, now)
}
