// Package fleet is every replica's view of all the deployment's agents. Agents connect to any
// control-plane replica, so each replica knows only its own share; the fleet makes the whole
// visible:
//
//   - every PublishInterval each replica writes the agent streams it serves to PostgreSQL
//     (agent_sessions, with seen_at), and forgets the ones that closed; rows a replica stopped
//     refreshing for Expiry (it died) are ignored and deleted by the next replica to publish;
//   - Overview reads every replica's rows, for GET /v1/agents;
//   - vantage_region_agents{region} is the number of live agents per region, every region
//     listed (0 included), the same on every replica;
//   - every WatchInterval each replica compares the regions active checks run from with the
//     regions live agents serve. A region without an agent is recorded as unserved
//     (unserved_regions); after UnservedGrace, agent.region_unserved is queued for every
//     organization whose checks use it, and agent.region_served when an agent serves it
//     again. The store lets one replica of those racing queue them, so each goes out once.
//
// A region that checks use and no agent serves is not a failure of the checks (their runs in
// that region go nowhere, and a region without an agent never flips a check): it is the
// operators' to fix, and these are how they learn of it.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Store is what the fleet needs from the database; *store.Store implements it.
type Store interface {
	PublishAgentSessions(ctx context.Context, replicaID uuid.UUID, sessions []store.AgentSession, expiredBefore time.Time) error
	LiveAgentSessions(ctx context.Context, cutoff time.Time) ([]store.AgentSession, error)
	RegionsInUse(ctx context.Context) (map[string]int, error)
	UnservedRegions(ctx context.Context) ([]store.UnservedRegion, error)
	MarkRegionUnserved(ctx context.Context, region string, since time.Time) error
	AlertUnservedRegion(ctx context.Context, region string, cutoff time.Time, build store.RegionEvents) (bool, error)
	MarkRegionServed(ctx context.Context, region string, build store.RegionEvents) (bool, error)
}

var _ Store = (*store.Store)(nil)

// LocalAgent is one agent stream open on this replica, as the ingest server knows it.
type LocalAgent struct {
	SessionID     uuid.UUID
	AgentID       string
	TokenID       *uuid.UUID // nil: the shared token
	Regions       []string
	Version       string
	Hostname      string
	Capabilities  []string
	ConnectedAt   time.Time
	Results       uint64 // results the stream accepted so far
	ProbesRunning uint32 // as the agent reported with its last result
}

// Config tunes the fleet. Zero values take the documented defaults.
type Config struct {
	// ReplicaName names this replica in Overview (VANTAGE_REPLICA_NAME). Default the host name.
	ReplicaName string
	// PublishInterval is how often this replica writes its agent streams. Default 5s.
	PublishInterval time.Duration
	// Expiry is how long a replica's rows count after it last wrote them. Default 30s.
	Expiry time.Duration
	// WatchInterval is how often unserved regions are looked for. Default 15s.
	WatchInterval time.Duration
	// UnservedGrace is how long a region checks use may lack agents before
	// agent.region_unserved goes out (VANTAGE_REGION_UNSERVED_GRACE). Default 2m.
	UnservedGrace time.Duration
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.PublishInterval, 5*time.Second)
	def(&c.Expiry, 30*time.Second)
	def(&c.WatchInterval, 15*time.Second)
	if c.UnservedGrace < 0 {
		c.UnservedGrace = 0
	}
	if c.ReplicaName == "" {
		c.ReplicaName, _ = os.Hostname()
	}
}

// Deps are the fleet's collaborators.
type Deps struct {
	Store Store // required
	// Local lists the agent streams open on this replica (the ingest registry). Required.
	Local func() []LocalAgent
	// Logger receives the fleet's log; the caller sets its component. Default: discarded.
	Logger *slog.Logger
	// Registerer receives vantage_region_agents. Default: a private registry.
	Registerer prometheus.Registerer
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Fleet publishes this replica's agents and watches every replica's; see the package doc.
type Fleet struct {
	cfg       Config
	st        Store
	local     func() []LocalAgent
	log       *slog.Logger
	now       func() time.Time
	replicaID uuid.UUID
	agents    *prometheus.GaugeVec

	mu     sync.Mutex
	last   map[uuid.UUID]sample // results counted at the previous publish, by session
	gauged []string             // the regions vantage_region_agents has a series of
}

// sample is a stream's result count at one publish.
type sample struct {
	results uint64
	at      time.Time
}

// New returns a fleet; Run publishes and watches.
func New(cfg Config, deps Deps) (*Fleet, error) {
	if deps.Store == nil || deps.Local == nil {
		return nil, errors.New("fleet: Store and Local are required")
	}
	cfg.defaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	f := &Fleet{cfg: cfg, st: deps.Store, local: deps.Local, log: deps.Logger, now: deps.Now,
		replicaID: uuid.New(), last: map[uuid.UUID]sample{},
		agents: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vantage_region_agents",
			Help: "Live agents serving each region, on every control-plane replica (every region listed, 0 included); a region that checks use at 0 has its runs go nowhere."},
			[]string{"region"})}
	if err := deps.Registerer.Register(f.agents); err != nil {
		return nil, fmt.Errorf("fleet: register metrics: %w", err)
	}
	return f, nil
}

// Run publishes every PublishInterval and watches regions every
// WatchInterval until ctx ends; then it removes this replica's rows. Database trouble is
// logged and retried, never returned.
func (f *Fleet) Run(ctx context.Context) error {
	publish := time.NewTicker(f.cfg.PublishInterval)
	defer publish.Stop()
	watch := time.NewTicker(f.cfg.WatchInterval)
	defer watch.Stop()
	f.step(ctx, f.publish, "publish this replica's agents")
	f.step(ctx, f.watch, "watch the regions")
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := f.st.PublishAgentSessions(sctx, f.replicaID, nil, f.now().Add(-f.cfg.Expiry)); err != nil {
				f.log.Warn("cannot remove this replica's agents; they expire on their own", "err", err)
			}
			return nil
		case <-publish.C:
			f.step(ctx, f.publish, "publish this replica's agents")
		case <-watch.C:
			f.step(ctx, f.watch, "watch the regions")
		}
	}
}

func (f *Fleet) step(ctx context.Context, fn func(context.Context) error, what string) {
	if err := fn(ctx); err != nil && ctx.Err() == nil {
		f.log.Warn("cannot "+what+"; retrying", "err", err)
	}
}

// publish writes this replica's streams, each with its results per second since the last
// publish, and refreshes vantage_region_agents from every replica's.
func (f *Fleet) publish(ctx context.Context) error {
	now := f.now()
	local := f.local()
	sessions := make([]store.AgentSession, len(local))
	f.mu.Lock()
	next := make(map[uuid.UUID]sample, len(local))
	for i, a := range local {
		rate := 0.0
		if prev, ok := f.last[a.SessionID]; ok && now.After(prev.at) && a.Results >= prev.results {
			rate = float64(a.Results-prev.results) / now.Sub(prev.at).Seconds()
		}
		next[a.SessionID] = sample{results: a.Results, at: now}
		sessions[i] = store.AgentSession{SessionID: a.SessionID, Replica: f.cfg.ReplicaName, AgentID: a.AgentID,
			TokenID: a.TokenID, Regions: a.Regions, Version: a.Version, Hostname: a.Hostname, Capabilities: a.Capabilities,
			ConnectedAt: a.ConnectedAt, ProbesRunning: int32(min(a.ProbesRunning, 1<<31-1)), ResultsPerSecond: rate, SeenAt: now}
	}
	f.last = next
	f.mu.Unlock()
	if err := f.st.PublishAgentSessions(ctx, f.replicaID, sessions, now.Add(-f.cfg.Expiry)); err != nil {
		return err
	}
	live, err := f.st.LiveAgentSessions(ctx, now.Add(-f.cfg.Expiry))
	if err != nil {
		return err
	}
	counts := regionCounts(live)
	regions := allRegions(counts, nil)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.gauged {
		if !slices.Contains(regions, r) {
			f.agents.DeleteLabelValues(r)
		}
	}
	for _, r := range regions {
		f.agents.WithLabelValues(r).Set(float64(counts[r].agents))
	}
	f.gauged = regions
	return nil
}

// watch records the regions checks use without a live agent, and queues their events.
func (f *Fleet) watch(ctx context.Context) error {
	now := f.now()
	inUse, err := f.st.RegionsInUse(ctx)
	if err != nil {
		return err
	}
	live, err := f.st.LiveAgentSessions(ctx, now.Add(-f.cfg.Expiry))
	if err != nil {
		return err
	}
	counts := regionCounts(live)
	recorded, err := f.st.UnservedRegions(ctx)
	if err != nil {
		return err
	}
	for _, u := range recorded {
		if counts[u.Region].agents > 0 || inUse[u.Region] == 0 {
			queued, err := f.st.MarkRegionServed(ctx, u.Region, f.events(now, event.TypeRegionServed, u.Region))
			if err != nil {
				return err
			}
			if queued {
				f.log.Info("region served again: agent.region_served queued", "region", u.Region, "unserved_since", u.Since)
			}
		}
	}
	for _, r := range slices.Sorted(maps.Keys(inUse)) {
		if counts[r].agents > 0 {
			continue
		}
		if err := f.st.MarkRegionUnserved(ctx, r, now); err != nil {
			return err
		}
		alerted, err := f.st.AlertUnservedRegion(ctx, r, now.Add(-f.cfg.UnservedGrace), f.events(now, event.TypeRegionUnserved, r))
		if err != nil {
			return err
		}
		if alerted {
			f.log.Warn("no live agent serves a region that active checks use: agent.region_unserved queued; their runs there go nowhere",
				"region", r, "checks", inUse[r])
		}
	}
	return nil
}

// events builds the events of typ about region for the organizations whose checks use it.
func (f *Fleet) events(now time.Time, typ, region string) store.RegionEvents {
	return func(since time.Time, orgs []store.RegionOrg) []store.OutboxEvent {
		out := make([]store.OutboxEvent, 0, len(orgs))
		for _, o := range orgs {
			c := event.RegionChange{OccurredAt: now, Region: region, UnservedSince: since, Checks: o.Checks}
			var ev event.Event = event.RegionUnserved{RegionChange: c}
			if typ == event.TypeRegionServed {
				ev = event.RegionServed{RegionChange: c}
			}
			out = append(out, store.OutboxEvent{OrgID: o.OrgID, Event: ev, AlertPriority: "HIGH", CreatedAt: now})
		}
		return out
	}
}

// regionCount is what live agents give a region.
type regionCount struct{ agents, browsers int }

func regionCounts(live []store.AgentSession) map[string]regionCount {
	out := map[string]regionCount{}
	for _, a := range live {
		for _, r := range a.Regions {
			c := out[r]
			c.agents++
			if slices.Contains(a.Capabilities, wire.CapabilityBrowser) {
				c.browsers++
			}
			out[r] = c
		}
	}
	return out
}

// allRegions is every region of check.Regions, and any other an agent serves or a check uses.
func allRegions(counts map[string]regionCount, inUse map[string]int) []string {
	set := map[string]bool{}
	for _, r := range check.Regions {
		set[r] = true
	}
	for r := range counts {
		set[r] = true
	}
	for r := range inUse {
		set[r] = true
	}
	return slices.Sorted(maps.Keys(set))
}
