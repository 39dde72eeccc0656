package ingest

import (
	"context"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// canary takes an agent's canary round (capability "canaries"): it hands the round to the
// probe-health rule, records a skewed clock for the stream's later results, and answers with
// the control plane's clock, which the agent measures its skew against. A round that cannot be
// recorded is logged, not fatal to the stream: the next comes in seconds.
//
// Only a skewed clock excludes the agent's own results at once: the agent measured it against
// this control plane's clock. An agent that reaches none of its canaries (no route, no names)
// may be broken, or its canaries may be misconfigured — on every agent alike; its round counts
// in the region rule, which marks the region only while another region's canaries pass, so a
// bad canary setting can never silence the whole fleet.
func (s *Server) canary(ctx context.Context, agent Agent, c *vantagev1.CanaryReport, control chan<- *vantagev1.ControlMessage) {
	now := s.now()
	skewed := !c.GetAgentHealthy() && c.GetAgentUnhealthyReason() == wire.AgentUnhealthyClock
	agent.Health.set(!skewed, c.GetAgentUnhealthyReason())
	if s.canaries != nil {
		r := store.CanaryReport{AgentID: agent.AgentID, Regions: agent.Regions, CheckedAt: time.UnixMilli(c.GetCheckedAtUnixMs()),
			ReceivedAt: now, Targets: len(c.GetResults()), AgentHealthy: c.GetAgentHealthy(),
			AgentReason: c.GetAgentUnhealthyReason(), ClockOffsetMs: c.GetClockOffsetMs()}
		for _, t := range c.GetResults() {
			if !t.GetPassing() {
				r.Failing++
				r.FailingTargets = append(r.FailingTargets, t.GetTarget())
			}
		}
		if err := s.canaries.Canary(ctx, r); err != nil && ctx.Err() == nil {
			s.log.Warn("canary round not recorded", "agent_id", agent.AgentID, "err", err)
		}
	}
	ack := &vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_CanaryAck{CanaryAck: &vantagev1.CanaryAck{
		ServerTimeUnixMs: s.now().UnixMilli()}}}
	select {
	case control <- ack:
	default: // the previous answer has not gone out yet: the agent measures at the next
	}
}

// excludeUnhealthyAgent marks the result of an agent that says it is unhealthy as the agent's
// own failure: it is stored, and left out of verdicts and of the probe-health statistics, as
// a crashed browser's result is (wire.FailureSourceAgent).
func excludeUnhealthyAgent(row *store.ResultRow, why string) {
	src, typ := wire.FailureSourceAgent, "AGENT_UNHEALTHY"
	row.FailureSource, row.FailureType = &src, &typ
	if row.ResultSummary == nil { // the probe's own summary, when it has one, stays
		summary := "left out of verdicts: the agent reported itself unhealthy (" + why + ")"
		row.ResultSummary = &summary
	}
}
