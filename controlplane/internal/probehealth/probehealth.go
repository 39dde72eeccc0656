// Package probehealth notices when a region's probes are the problem, not the targets
// (docs/detection.md "Probe-health-aware evaluation"). Every Interval it reads, per region, the
// final attempts of the last Window: the checks the region probed and those it failed in a run
// that another region passed ("lone" failures). A region whose lone failures reach MinChecks
// checks of at least MinOrgs organizations and at least MinFraction of the checks it probed is
// marked unhealthy: the evaluator leaves its results out of verdicts (they are still stored,
// and the unhealthy period flags them) until it is healthy again, after ClearRounds rounds in a
// row below the rule. Each change is logged, counted in /metrics and queued as agent.unhealthy /
// agent.healthy for the organizations whose checks use the region.
//
// Canaries mark a region sooner, before any tenant check is judged on its results: every agent
// probes a few canary targets every few seconds and reports the round on its stream (Canary).
// A region all of whose agents' recent rounds fail, while another region's pass, is marked
// unhealthy at once, with the cause "canary" (CanaryBroken); "checks" is the rule above. Canary
// rounds live in PostgreSQL, so every replica judges with every agent's.
package probehealth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Thresholds are the rule's parameters.
type Thresholds struct {
	Window      time.Duration // results looked at; default 2m
	MinChecks   int           // lone failures (distinct checks) that make a region suspect; default 5
	MinOrgs     int           // of at least this many organizations; default 2
	MinFraction float64       // and at least this share of the checks the region probed; default 0.5
	ClearRounds int           // rounds in a row below the rule before an unhealthy region is healthy; default 3
	// CanaryFresh is how old an agent's last canary round may be and still count; default 20s
	// (four rounds at the agents' default 5s interval).
	CanaryFresh time.Duration
}

func (t *Thresholds) defaults() {
	if t.Window <= 0 {
		t.Window = 2 * time.Minute
	}
	if t.MinChecks <= 0 {
		t.MinChecks = 5
	}
	if t.MinOrgs <= 0 {
		t.MinOrgs = 2
	}
	if t.MinFraction <= 0 {
		t.MinFraction = 0.5
	}
	if t.ClearRounds <= 0 {
		t.ClearRounds = 3
	}
	if t.CanaryFresh <= 0 {
		t.CanaryFresh = 20 * time.Second
	}
}

// Causes of a region's unhealthy mark (store.RegionHealth.Cause, GET /v1/regions/unhealthy).
const (
	CauseChecks = "checks" // tenants' checks fail there while other regions pass them (Broken)
	CauseCanary = "canary" // its agents' canaries fail while other regions' pass (CanaryBroken)
)

// Broken is the rule: whether a region's figures say its probes, not the targets, fail.
func Broken(s store.RegionFailureStats, t Thresholds) bool {
	return s.Lone >= t.MinChecks && s.Orgs >= t.MinOrgs && s.Checks > 0 &&
		float64(s.Lone) >= t.MinFraction*float64(s.Checks)
}

// Store is what the monitor reads and writes; *store.Store implements it.
type Store interface {
	RegionFailureStats(ctx context.Context, since time.Time) ([]store.RegionFailureStats, error)
	SetRegionHealth(ctx context.Context, region string, unhealthy bool, cause, reason string, build store.RegionEvents) (bool, error)
	UnhealthyRegions(ctx context.Context) ([]store.RegionHealth, error)
	SaveCanary(ctx context.Context, r store.CanaryReport) error
	RecentCanaries(ctx context.Context, since time.Time) ([]store.CanaryReport, error)
	DeleteStaleCanaries(ctx context.Context, before time.Time) error
}

var _ Store = (*store.Store)(nil)

// Monitor applies the rule every Interval.
type Monitor struct {
	log      *slog.Logger
	st       Store
	now      func() time.Time
	t        Thresholds
	interval time.Duration
	mu       sync.Mutex     // orders Round and Canary, which streams call
	calm     map[string]int // rounds in a row below the rule, per unhealthy region
	gauge    *prometheus.GaugeVec
	changes  *prometheus.CounterVec
	canaries *prometheus.CounterVec
}

// New returns a Monitor; interval ≤ 0 means 5s. reg may be nil.
func New(log *slog.Logger, st Store, now func() time.Time, reg prometheus.Registerer, t Thresholds, interval time.Duration) (*Monitor, error) {
	t.defaults()
	if interval <= 0 {
		interval = 5 * time.Second
	}
	m := &Monitor{log: log.With("component", "probehealth"), st: st, now: now, t: t, interval: interval, calm: map[string]int{},
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vantage_region_unhealthy",
			Help: "1 while a region's probes are judged broken and its results are left out of verdicts."}, []string{"region"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_region_health_changes_total",
			Help: "Regions marked unhealthy or healthy again, by state."}, []string{"state"}),
		canaries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_canary_rounds_total",
			Help: "Agents' canary rounds received, by outcome (pass, fail, agent_unhealthy)."}, []string{"outcome"})}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.gauge, m.changes, m.canaries} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("probe health metrics: %w", err)
			}
		}
	}
	return m, nil
}

// Round applies both rules once: a region is broken when its checks' lone failures
// (Broken) or its canaries (CanaryBroken) say so, and healthy again after ClearRounds rounds
// in a row where neither does.
func (m *Monitor) Round(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	stats, err := m.st.RegionFailureStats(ctx, now.Add(-m.t.Window))
	if err != nil {
		return err
	}
	canaries, err := m.st.RecentCanaries(ctx, now.Add(-m.t.CanaryFresh))
	if err != nil {
		return err
	}
	if err := m.st.DeleteStaleCanaries(ctx, now.Add(-staleCanaries)); err != nil {
		return err
	}
	unhealthy, err := m.st.UnhealthyRegions(ctx)
	if err != nil {
		return err
	}
	isUnhealthy := map[string]bool{}
	for _, r := range unhealthy {
		isUnhealthy[r.Region] = true
	}
	broken := CanaryBroken(canaries)
	for _, s := range stats {
		if _, ok := broken[s.Region]; !ok && Broken(s, m.t) {
			broken[s.Region] = BrokenRegion{Cause: CauseChecks, Reason: fmt.Sprintf(
				"%d of the %d checks it probed in the last %s failed there while another region passed them (%d organizations)",
				s.Lone, s.Checks, m.t.Window, s.Orgs)}
		}
	}
	for region, b := range broken {
		m.calm[region] = 0
		if !isUnhealthy[region] {
			if err := m.set(ctx, region, true, b.Cause, b.Reason); err != nil {
				return err
			}
		}
	}
	for region := range isUnhealthy {
		if _, ok := broken[region]; ok {
			continue
		}
		m.calm[region]++ // nothing says it is broken this round
		if m.calm[region] >= m.t.ClearRounds {
			if err := m.set(ctx, region, false, "", ""); err != nil {
				return err
			}
			delete(m.calm, region)
		}
	}
	for region := range isUnhealthy {
		m.gauge.WithLabelValues(region).Set(1)
	}
	return nil
}

// staleCanaries: canary rows of agents silent for longer are deleted.
const staleCanaries = time.Hour

// Canary records an agent's canary round and, at once, marks unhealthy a region that the
// canaries now say is broken (the rest of the rule, clearing, is Round's). Ingest calls it
// for every round an agent reports.
func (m *Monitor) Canary(ctx context.Context, r store.CanaryReport) error {
	outcome := "pass"
	switch {
	case !r.AgentHealthy:
		outcome = "agent_unhealthy"
	case canaryFails(r):
		outcome = "fail"
	}
	m.canaries.WithLabelValues(outcome).Inc()
	if err := m.st.SaveCanary(ctx, r); err != nil {
		return err
	}
	if outcome == "pass" {
		return nil // a passing round can only break other regions, whose own failing round will
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	canaries, err := m.st.RecentCanaries(ctx, m.now().Add(-m.t.CanaryFresh))
	if err != nil {
		return err
	}
	broken := CanaryBroken(canaries)
	if len(broken) == 0 {
		return nil
	}
	unhealthy, err := m.st.UnhealthyRegions(ctx)
	if err != nil {
		return err
	}
	isUnhealthy := map[string]bool{}
	for _, u := range unhealthy {
		isUnhealthy[u.Region] = true
	}
	for _, region := range r.Regions {
		b, ok := broken[region]
		if !ok || isUnhealthy[region] {
			continue
		}
		m.calm[region] = 0
		if err := m.set(ctx, region, true, b.Cause, b.Reason); err != nil {
			return err
		}
	}
	return nil
}

func (m *Monitor) set(ctx context.Context, region string, unhealthy bool, cause, reason string) error {
	now := m.now()
	typ := event.TypeAgentHealthy
	if unhealthy {
		typ = event.TypeAgentUnhealthy
	}
	changed, err := m.st.SetRegionHealth(ctx, region, unhealthy, cause, reason, func(since time.Time, orgs []store.RegionOrg) []store.OutboxEvent {
		out := make([]store.OutboxEvent, 0, len(orgs))
		for _, o := range orgs {
			c := event.RegionHealthChange{OccurredAt: now, Region: region, UnhealthySince: since, Reason: reason, Checks: o.Checks}
			var ev event.Event = event.AgentHealthy{RegionHealthChange: c}
			if unhealthy {
				ev = event.AgentUnhealthy{RegionHealthChange: c}
			}
			out = append(out, store.OutboxEvent{OrgID: o.OrgID, Event: ev, AlertPriority: "HIGH", CreatedAt: now})
		}
		return out
	})
	if err != nil || !changed {
		return err
	}
	if unhealthy {
		m.gauge.WithLabelValues(region).Set(1)
		m.changes.WithLabelValues("unhealthy").Inc()
		m.log.Warn("region marked unhealthy: its probes fail where other regions' pass; its results are left out of verdicts",
			"region", region, "cause", cause, "reason", reason, "event", typ)
	} else {
		m.gauge.WithLabelValues(region).Set(0)
		m.changes.WithLabelValues("healthy").Inc()
		m.log.Info("region healthy again: its results count in verdicts", "region", region, "event", typ)
	}
	return nil
}

// Run applies the rule every interval until ctx ends; a failed round is logged and retried.
// A round reads the window's final attempts, whose number grows with the fleet and its
// rates: the pause after a round is at least ten times the round's own duration, so that the
// rule takes at most a tenth of the database's time however many results the window holds
// (at 5,000 results/s a round takes about a second, and rounds come every ten seconds).
func (m *Monitor) Run(ctx context.Context) error {
	t := time.NewTimer(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		start := time.Now()
		if err := m.Round(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("probe health round failed", "err", err)
		}
		t.Reset(max(m.interval, roundPauseFactor*time.Since(start)))
	}
}

// roundPauseFactor: a round's pause is at least this many times its duration.
const roundPauseFactor = 10
