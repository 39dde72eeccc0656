// Package canary runs the agent's canary probes and judges the agent's own health
// (docs/detection.md "Canaries"). Every Interval it probes a few canary targets — the control
// plane's own public endpoint (Registered.canary_url) and the operator's VANTAGE_CANARY_TARGETS
// — through the same prober and outbound address policy as checks, on its own small
// concurrency (never the job slots), and sends the round on the stream (uplink.SendCanary).
// The control plane compares the rounds of every region's agents: a region whose canaries fail
// while another's pass is unhealthy at once, before any tenant check is judged on its results.
//
// The agent also judges itself (Health): it is unhealthy when it cannot resolve names (every
// DNS canary fails), has no route (every canary fails), or its clock is off the control
// plane's — sent in Registered and every CanaryAck — by more than MaxClockSkew. It says so in
// each round; the control plane leaves its results out of verdicts meanwhile.
package canary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Config holds the Runner's settings. Zero values take the documented defaults.
type Config struct {
	// Targets are the operator's canary targets (VANTAGE_CANARY_TARGETS). Default none.
	Targets []Target
	// Interval is the time between rounds (VANTAGE_CANARY_INTERVAL). Default 5s.
	Interval time.Duration
	// Timeout bounds each probe of a round. Default 3s, or the interval if shorter.
	Timeout time.Duration
	// Concurrency is how many canaries of a round run at once. Default 4.
	Concurrency int
	// MaxClockSkew is how far the agent's clock may be off the control plane's before the
	// agent calls itself unhealthy (VANTAGE_MAX_CLOCK_SKEW). Default 10s, a third of the
	// skew at which the control plane refuses results (ingest.MaxClockSkew, 30s).
	MaxClockSkew time.Duration
	// ClockSkew shifts the agent's clock as the canaries read it, for tests only
	// (VANTAGE_TEST_CLOCK_SKEW). Default 0.
	ClockSkew time.Duration
}

// Defaults.
const (
	DefaultInterval     = 5 * time.Second
	DefaultTimeout      = 3 * time.Second
	DefaultConcurrency  = 4
	DefaultMaxClockSkew = 10 * time.Second
)

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = min(DefaultTimeout, c.Interval)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxClockSkew <= 0 {
		c.MaxClockSkew = DefaultMaxClockSkew
	}
}

// Deps are what a Runner works with.
type Deps struct {
	// Prober probes the canaries: the agent's own, with its outbound address policy. Required.
	Prober prober.Prober
	// Send sends a round on the stream; false when it could not (no session, or a control
	// plane without canaries). Required.
	Send func(*vantagev1.CanaryReport) bool
	// Logger defaults to discarding; Registerer to a private registry.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Runner probes the canaries every Interval.
type Runner struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	mu           sync.Mutex
	controlPlane *Target        // nil until a registration names one
	offset       *time.Duration // the agent's clock minus the control plane's; nil: not measured yet
	healthy      bool
	reason       string

	failures *prometheus.CounterVec
	health   prometheus.Gauge
	skew     prometheus.Gauge
}

// New returns a Runner.
func New(cfg Config, deps Deps) (*Runner, error) {
	if deps.Prober == nil || deps.Send == nil {
		return nil, errors.New("canary: a prober and a sender are required")
	}
	cfg.defaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	r := &Runner{cfg: cfg, deps: deps, log: deps.Logger.With("component", "canary"), healthy: true,
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_agent_canary_failures_total",
			Help: "Canary probes that failed, by target."}, []string{"target"}),
		health: prometheus.NewGauge(prometheus.GaugeOpts{Name: "vantage_agent_healthy",
			Help: "1 while the agent judges itself healthy (names resolve, a route, its clock within bounds), 0 otherwise."}),
		skew: prometheus.NewGauge(prometheus.GaugeOpts{Name: "vantage_agent_clock_offset_seconds",
			Help: "The agent's clock minus the control plane's, as last measured."}),
	}
	r.health.Set(1)
	for _, c := range []prometheus.Collector{r.failures, r.health, r.skew} {
		if err := deps.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("canary metrics: %w", err)
		}
	}
	return r, nil
}

// Registered takes a registration's canary URL (uplink.Deps.OnRegistered); an invalid one is
// logged and left out.
func (r *Runner) Registered(reg *vantagev1.Registered) {
	u := reg.GetCanaryUrl()
	r.mu.Lock()
	defer r.mu.Unlock()
	if u == "" {
		r.controlPlane = nil
		return
	}
	t, err := ParseTarget(u)
	if err != nil || t.Kind != KindHTTP {
		r.log.Warn("the control plane's canary URL is not an http(s) URL; not probed", "url", u)
		r.controlPlane = nil
		return
	}
	t.ControlPlane = true
	r.controlPlane = &t
}

// ServerTime takes the control plane's clock, read at received on the agent's clock
// (uplink.Deps.OnServerTime).
func (r *Runner) ServerTime(server, received time.Time) {
	off := received.Add(r.cfg.ClockSkew).Sub(server)
	r.mu.Lock()
	r.offset = &off
	r.mu.Unlock()
	r.skew.Set(off.Seconds())
}

// Run sends a round every Interval until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		rep := r.Round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !r.deps.Send(rep) {
			r.log.Debug("canary round not sent: no session that takes canaries")
		}
	}
}

// Round probes every canary once, judges the agent's health and returns the round.
func (r *Runner) Round(ctx context.Context) *vantagev1.CanaryReport {
	r.mu.Lock()
	targets := slices.Clone(r.cfg.Targets)
	if r.controlPlane != nil {
		targets = append([]Target{*r.controlPlane}, targets...)
	}
	r.mu.Unlock()
	start := time.Now().Add(r.cfg.ClockSkew)
	results := make([]*vantagev1.CanaryResult, len(targets))
	sem := make(chan struct{}, r.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = r.probe(ctx, t)
		}()
	}
	wg.Wait()
	r.mu.Lock()
	offset := r.offset
	r.mu.Unlock()
	healthy, reason := Health(results, offset, r.cfg.MaxClockSkew)
	rep := &vantagev1.CanaryReport{CheckedAtUnixMs: start.UnixMilli(), Results: results, AgentHealthy: healthy,
		AgentUnhealthyReason: reason}
	if offset != nil {
		rep.ClockOffsetMs = offset.Milliseconds()
	}
	r.setHealth(healthy, reason)
	return rep
}

// probe runs one canary. It passes when the target answered at all: a location that gets an
// HTTP 500, a refused port's RST or NXDOMAIN reached it (the failure is the target's). It
// fails on the transport: no route, no name, a timeout, a forbidden address.
func (r *Runner) probe(ctx context.Context, t Target) *vantagev1.CanaryResult {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	begin := time.Now()
	res, err := r.deps.Prober.Probe(ctx, t.job)
	out := &vantagev1.CanaryResult{Target: t.Raw, Kind: t.Kind, ControlPlane: t.ControlPlane,
		DurationMs: uint32(time.Since(begin).Milliseconds())}
	switch {
	case err != nil:
		out.Error = err.Error()
	case res.Passing || res.FailureSource != prober.SourceTransport:
		out.Passing = true
	default:
		out.Error = res.FailureType + ": " + res.ResultSummary
	}
	if !out.Passing {
		r.failures.WithLabelValues(t.Raw).Inc()
	}
	return out
}

func (r *Runner) setHealth(healthy bool, reason string) {
	r.mu.Lock()
	was, wasReason := r.healthy, r.reason
	r.healthy, r.reason = healthy, reason
	r.mu.Unlock()
	if healthy {
		r.health.Set(1)
	} else {
		r.health.Set(0)
	}
	switch {
	case !healthy && (was || wasReason != reason):
		r.log.Warn("agent unhealthy: its results are left out of verdicts until it is healthy again", "reason", reason)
	case healthy && !was:
		r.log.Info("agent healthy again")
	}
}

// Reasons an agent is unhealthy (CanaryReport.agent_unhealthy_reason).
const (
	ReasonClock = wire.AgentUnhealthyClock // its clock is off the control plane's beyond MaxClockSkew
	ReasonDNS   = wire.AgentUnhealthyDNS   // every DNS canary failed: it cannot resolve names
	ReasonRoute = wire.AgentUnhealthyRoute // every canary failed: it reaches nothing
)

// Health is the agent's verdict on itself from a round's results and its measured clock
// offset (nil: not measured yet).
func Health(results []*vantagev1.CanaryResult, offset *time.Duration, maxSkew time.Duration) (bool, string) {
	if offset != nil && (*offset > maxSkew || *offset < -maxSkew) {
		return false, ReasonClock
	}
	dns, dnsFailing, failing := 0, 0, 0
	for _, r := range results {
		if !r.GetPassing() {
			failing++
		}
		if r.GetKind() == KindDNS {
			dns++
			if !r.GetPassing() {
				dnsFailing++
			}
		}
	}
	switch {
	case dns > 0 && dnsFailing == dns:
		return false, ReasonDNS
	case len(results) > 0 && failing == len(results):
		return false, ReasonRoute
	}
	return true, ""
}
