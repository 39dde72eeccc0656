package store

import (
	"context"
	"fmt"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// CanaryReport is one agent's last round of canary probes (docs/detection.md "Canaries").
type CanaryReport struct {
	AgentID    string
	Regions    []string
	CheckedAt  time.Time // the agent's clock
	ReceivedAt time.Time // the control plane's
	Targets    int
	Failing    int
	// FailingTargets names the targets that failed, as the agent configured them.
	FailingTargets []string
	// AgentHealthy is the agent's verdict on itself; AgentReason says why not ("dns", "route",
	// "clock").
	AgentHealthy  bool
	AgentReason   string
	ClockOffsetMs int64
}

// SaveCanary records an agent's canary round, replacing its previous one.
func (s *Store) SaveCanary(ctx context.Context, r CanaryReport) error {
	failing := r.FailingTargets
	if failing == nil {
		failing = []string{}
	}
	err := s.q.UpsertCanary(ctx, dbsqlc.UpsertCanaryParams{AgentID: r.AgentID, Regions: r.Regions, CheckedAt: r.CheckedAt,
		ReceivedAt: r.ReceivedAt, Targets: int32(r.Targets), Failing: int32(r.Failing), FailingTargets: failing,
		AgentHealthy: r.AgentHealthy, AgentReason: r.AgentReason, ClockOffsetMs: r.ClockOffsetMs})
	if err != nil {
		return fmt.Errorf("save canary of agent %s: %w", r.AgentID, err)
	}
	return nil
}

// RecentCanaries returns the agents' canary rounds received since since, one per agent.
func (s *Store) RecentCanaries(ctx context.Context, since time.Time) ([]CanaryReport, error) {
	rows, err := s.q.RecentCanaries(ctx, since)
	if err != nil {
		return nil, fmt.Errorf("recent canaries: %w", err)
	}
	out := make([]CanaryReport, len(rows))
	for i, r := range rows {
		out[i] = CanaryReport{AgentID: r.AgentID, Regions: r.Regions, CheckedAt: r.CheckedAt, ReceivedAt: r.ReceivedAt,
			Targets: int(r.Targets), Failing: int(r.Failing), FailingTargets: r.FailingTargets, AgentHealthy: r.AgentHealthy,
			AgentReason: r.AgentReason, ClockOffsetMs: r.ClockOffsetMs}
	}
	return out, nil
}

// DeleteStaleCanaries forgets the canary rounds of agents silent since before.
func (s *Store) DeleteStaleCanaries(ctx context.Context, before time.Time) error {
	if err := s.q.DeleteStaleCanaries(ctx, before); err != nil {
		return fmt.Errorf("delete stale canaries: %w", err)
	}
	return nil
}

// LastCanaries are, per region, when its agents' last canary round was received (the
// evaluator's hold-off, docs/detection.md "Hold-off").
func (p *PipelineTx) LastCanaries(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	rows, err := p.q().RecentCanaries(ctx, since)
	if err != nil {
		return nil, fmt.Errorf("recent canaries: %w", err)
	}
	out := map[string]time.Time{}
	for _, r := range rows {
		for _, region := range r.Regions {
			if r.ReceivedAt.After(out[region]) {
				out[region] = r.ReceivedAt
			}
		}
	}
	return out, nil
}
