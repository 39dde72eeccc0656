package ingest

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Agent is one registered agent stream.
type Agent struct {
	SessionID string
	AgentID   string
	Regions   []string
	Version   string
	Capacity  uint32
	Hostname  string
	// Capabilities are what the agent runs beyond HTTP, DNS and TCP (wire.CapabilityBrowser).
	Capabilities []string
	// Caps are the stream capabilities both sides have (wire.Agreed): what the stream may
	// carry. Protocol is the version that stands for them, for agents that predate names.
	Caps        wire.Capabilities
	Protocol    uint32
	Peer        string
	ConnectedAt time.Time
	// TokenID is the agent token the stream authenticated with (nil: the shared token), and
	// TokenName its name.
	TokenID   *uuid.UUID
	TokenName string
	// Stats counts what the stream carried; shared by the copies Agents returns.
	Stats *AgentStats
	// Health is the agent's last verdict on itself (its canary rounds); shared likewise.
	Health *AgentHealth
}

// AgentHealth is what an agent last said of itself in a canary round: unhealthy when it
// cannot resolve names, has no route, or its clock is skewed. Results of an unhealthy agent
// are stored but left out of verdicts.
type AgentHealth struct {
	mu        sync.Mutex
	unhealthy string // the reason; "" while healthy
}

func (h *AgentHealth) set(healthy bool, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unhealthy = ""
	if !healthy {
		h.unhealthy = cmp.Or(reason, "unknown")
	}
}

// Unhealthy is why the agent last said it is unhealthy; "" when it did not.
func (h *AgentHealth) Unhealthy() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unhealthy
}

// AgentStats is what one stream carried so far.
type AgentStats struct {
	results       atomic.Uint64
	probesRunning atomic.Uint32
}

// observe counts a result the stream accepted and the agent's running probes it reported.
func (s *AgentStats) observe(r *vantagev1.CheckResult) {
	s.results.Add(1)
	s.probesRunning.Store(r.GetAgentProbesRunning())
}

// Results is how many results the stream accepted.
func (s *AgentStats) Results() uint64 { return s.results.Load() }

// ProbesRunning is how many probes the agent was running at its last result.
func (s *AgentStats) ProbesRunning() uint32 { return s.probesRunning.Load() }

// Registry tracks the agents connected to this replica and the regions they serve. Agents
// connect to any replica, so each replica knows its own share.
type Registry struct {
	mu     sync.Mutex
	agents map[string]Agent // by session id
	gauge  *prometheus.GaugeVec
	// browsers counts the connected agents with a browser, by region: browser jobs of a
	// region without one expire unrun.
	browsers *prometheus.GaugeVec
}

func newRegistry() *Registry {
	return &Registry{
		agents: map[string]Agent{},
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vantage_ingest_agents",
			Help: "Agents connected to this replica, by region they serve."}, []string{"region"}),
		browsers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vantage_ingest_browser_agents",
			Help: "Agents with a browser connected to this replica, by region they serve; a region's browser checks run only where this is above zero."}, []string{"region"}),
	}
}

func (r *Registry) add(a Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents[a.SessionID] = a
	for _, region := range a.Regions {
		r.gauge.WithLabelValues(region).Inc()
		if a.HasBrowser() {
			r.browsers.WithLabelValues(region).Inc()
		}
	}
}

func (r *Registry) remove(sessionID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.agents[sessionID]
	if !ok {
		return
	}
	delete(r.agents, sessionID)
	for _, region := range a.Regions {
		r.gauge.WithLabelValues(region).Dec()
		if a.HasBrowser() {
			r.browsers.WithLabelValues(region).Dec()
		}
	}
}

// HasBrowser reports whether the agent registered with a browser, and so runs browser jobs.
func (a Agent) HasBrowser() bool { return slices.Contains(a.Capabilities, wire.CapabilityBrowser) }

// LiveRegions returns how many agents serve each region (regions without agents are absent).
func (r *Registry) LiveRegions() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, a := range r.agents {
		for _, region := range a.Regions {
			out[region]++
		}
	}
	return out
}

// Agents returns the connected agents, oldest connection first.
func (r *Registry) Agents() []Agent {
	r.mu.Lock()
	out := make([]Agent, 0, len(r.agents))
	for _, a := range r.agents {
		a.Regions = slices.Clone(a.Regions)
		out = append(out, a)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Agent) int {
		if c := a.ConnectedAt.Compare(b.ConnectedAt); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return out
}
