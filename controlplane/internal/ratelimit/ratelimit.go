// Package ratelimit decides whether one more event of a key (an organization, a heartbeat id, a
// status page and client address…) may happen now, for every rate limit of the control plane.
// The buckets live in PostgreSQL (table rate_limits), so that they hold across replicas: with n
// replicas a client gets the rate once, not n times.
//
// Each decision is one statement (store.TakeRateToken): a token bucket in the form of the
// generic cell rate algorithm, whose whole state per key is one time, the key's theoretical
// arrival time. A bucket of burst b gaining one token every e allows an event at now when
// max(tat, now) + e <= now + b·e, and then moves tat there; a refused event moves nothing and
// waits max(tat, now) + e − (now + b·e). This is exactly golang.org/x/time/rate's bucket.
//
// A refusal is also remembered on the replica until the wait it named is over: other replicas
// can only take tokens, never give them back, so the key is refused everywhere until then, and
// a client hammering a limited key costs no round trip per request.
//
// When PostgreSQL does not answer, each limit (Rule.OnError) either lets the event through or
// refuses it; both are counted in vantage_ratelimit_decisions_total.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Limiter decides rate-limited events. Every limit of the control plane asks one, built once
// in cmd/ (Shared).
type Limiter interface {
	// Reserve takes one token of key's bucket under rule at now. It returns 0 when the event may
	// proceed, else how long until a token is free (taking nothing). The error is not nil only
	// when the decision could not be taken and rule.OnError is FailClosed: the event must not
	// proceed.
	Reserve(ctx context.Context, rule Rule, key string, now time.Time) (time.Duration, error)
}

// Failure is what a limit does when its bucket cannot be read.
type Failure int

const (
	// FailOpen lets the event through: for limits that only stop runaway clients, where
	// refusing every request while PostgreSQL is away would be the larger harm.
	FailOpen Failure = iota
	// FailClosed refuses the event: for limits that stop guessing or abuse of outbound mail and
	// requests.
	FailClosed
)

// Rule is one rate limit: its name, which prefixes every key's bucket and labels its metrics,
// and its bucket. Events of a key may come Burst at once, then one every Every.
type Rule struct {
	Name    string
	Every   time.Duration
	Burst   int
	OnError Failure
}

// window is how far ahead of now a full bucket lets the arrival time move.
func (r Rule) window() time.Duration { return time.Duration(r.Burst) * r.Every }

// Store is what the limiter needs of PostgreSQL.
type Store interface {
	TakeRateToken(ctx context.Context, key string, now time.Time, every, window time.Duration) (bool, time.Time, error)
	SweepRateLimits(ctx context.Context, before time.Time) (int64, error)
}

var _ Store = (*store.Store)(nil)

// Config tunes the limiter. Zero values take the documented defaults.
type Config struct {
	// Timeout bounds one decision's round trip to PostgreSQL. Default 2s.
	Timeout time.Duration
	// SweepInterval is how often Run deletes the rows of full buckets. Default 1m.
	SweepInterval time.Duration
}

// Deps are the limiter's collaborators.
type Deps struct {
	Store Store // required
	// Logger receives failed decisions and sweeps (component ratelimit). Default: discarded.
	Logger *slog.Logger
	// Now is the sweep's clock (decisions take the caller's). Default time.Now.
	Now func() time.Time
	// Registerer receives vantage_ratelimit_decisions_total and
	// vantage_ratelimit_sweep_errors_total. Default: a private registry.
	Registerer prometheus.Registerer
}

// Shared is the Limiter on PostgreSQL. It is safe for concurrent use.
type Shared struct {
	cfg       Config
	st        Store
	log       *slog.Logger
	now       func() time.Time
	decisions *prometheus.CounterVec
	sweepErrs prometheus.Counter

	mu        sync.Mutex
	refused   map[string]time.Time // bucket → until when it is known to refuse
	lastPrune time.Time
}

var _ Limiter = (*Shared)(nil)

// Results of decisions (the result label of vantage_ratelimit_decisions_total).
const (
	resultAllowed      = "allowed"
	resultLimited      = "limited"
	resultErrorAllowed = "error_allowed"
	resultErrorRefused = "error_refused"
)

// New returns the limiter; Run sweeps its table.
func New(cfg Config, deps Deps) (*Shared, error) {
	if deps.Store == nil {
		return nil, errors.New("ratelimit: a store is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Minute
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
	s := &Shared{cfg: cfg, st: deps.Store, log: deps.Logger.With("component", "ratelimit"), now: deps.Now,
		refused: map[string]time.Time{},
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_ratelimit_decisions_total",
			Help: "Rate-limit decisions by limit and result (allowed, limited, error_allowed, error_refused)."},
			[]string{"limit", "result"}),
		sweepErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_ratelimit_sweep_errors_total",
			Help: "Failed sweeps of the rate_limits rows of full buckets."}),
	}
	for _, c := range []prometheus.Collector{s.decisions, s.sweepErrs} {
		if err := deps.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("ratelimit: register metrics: %w", err)
		}
	}
	return s, nil
}

// Reserve implements Limiter.
func (s *Shared) Reserve(ctx context.Context, rule Rule, key string, now time.Time) (time.Duration, error) {
	if rule.Every <= 0 || rule.Burst < 1 {
		return 0, fmt.Errorf("rate limit %s: every %s, burst %d: want both positive", rule.Name, rule.Every, rule.Burst)
	}
	bucket := rule.Name + ":" + key
	if wait := s.knownRefusal(bucket, now); wait > 0 {
		s.decisions.WithLabelValues(rule.Name, resultLimited).Inc()
		return wait, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	allowed, tat, err := s.st.TakeRateToken(ctx, bucket, now, rule.Every, rule.window())
	switch {
	case err != nil && rule.OnError == FailOpen:
		s.decisions.WithLabelValues(rule.Name, resultErrorAllowed).Inc()
		s.log.WarnContext(ctx, "rate limit unavailable; event allowed", "limit", rule.Name, "err", err)
		return 0, nil
	case err != nil:
		s.decisions.WithLabelValues(rule.Name, resultErrorRefused).Inc()
		return 0, fmt.Errorf("rate limit %s: %w", rule.Name, err)
	case allowed:
		s.decisions.WithLabelValues(rule.Name, resultAllowed).Inc()
		return 0, nil
	}
	s.decisions.WithLabelValues(rule.Name, resultLimited).Inc()
	wait := tat.Add(rule.Every).Sub(now.Add(rule.window()))
	if wait <= 0 { // a refusal always waits; guard against rounding of the stored time
		wait = time.Microsecond
	}
	s.remember(bucket, now.Add(wait), now)
	return wait, nil
}

// knownRefusal is how long bucket is still known to refuse at now (0: ask PostgreSQL).
func (s *Shared) knownRefusal(bucket string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[bucket].Sub(now)
}

// remember notes that bucket refuses until until, and forgets the refusals that are over
// (at most once per second).
func (s *Shared) remember(bucket string, until, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[bucket] = until
	if now.Sub(s.lastPrune) < time.Second {
		return
	}
	for b, t := range s.refused {
		if !t.After(now) {
			delete(s.refused, b)
		}
	}
	s.lastPrune = now
}

// Run deletes the rows of full buckets every SweepInterval until ctx ends. A failed sweep is
// logged and counted, never fatal: the table only grows until the next one. Every replica
// may run one; deleting a full bucket changes no decision.
func (s *Shared) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.sweepErrs.Inc()
			s.log.Warn("rate limit sweep failed", "err", err)
		}
	}
}

// sweepMargin keeps rows a little past their fullness, so that a replica whose clock lags
// behind the sweeper's still finds the buckets it would not yet call full.
const sweepMargin = time.Minute

// Sweep deletes the rows of buckets full for longer than a minute.
func (s *Shared) Sweep(ctx context.Context) error {
	n, err := s.st.SweepRateLimits(ctx, s.now().Add(-sweepMargin))
	if err != nil {
		return fmt.Errorf("sweep rate limits: %w", err)
	}
	if n > 0 {
		s.log.Debug("rate limits swept", "rows", n)
	}
	return nil
}
