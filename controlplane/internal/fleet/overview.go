package fleet

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Overview is every live agent of the deployment and every region, as GET /v1/agents shows
// them.
type Overview struct {
	Agents  []AgentView
	Regions []RegionView
}

// AgentView is one live agent stream.
type AgentView struct {
	AgentID          string
	SessionID        uuid.UUID
	Regions          []string
	Version          string
	Hostname         string
	Capabilities     []string
	TokenID          *uuid.UUID // nil: the shared token
	TokenName        *string
	Replica          string // the replica it is connected to
	ConnectedSince   time.Time
	ProbesRunning    int
	ResultsPerSecond float64
	SeenAt           time.Time // when its replica last published it
}

// RegionView is one region: its live agents and the active checks that run from it.
type RegionView struct {
	Region        string
	Agents        int
	BrowserAgents int
	Checks        int
	// UnservedSince is when the region, used by checks, was last found without an agent;
	// nil while it is served (or unused). Alerted reports whether agent.region_unserved went
	// out.
	UnservedSince *time.Time
	Alerted       bool
}

// Overview reads every replica's live agents and every region's state.
func (f *Fleet) Overview(ctx context.Context) (Overview, error) {
	live, err := f.st.LiveAgentSessions(ctx, f.now().Add(-f.cfg.Expiry))
	if err != nil {
		return Overview{}, err
	}
	inUse, err := f.st.RegionsInUse(ctx)
	if err != nil {
		return Overview{}, err
	}
	unserved, err := f.st.UnservedRegions(ctx)
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Agents: make([]AgentView, len(live))}
	for i, a := range live {
		o.Agents[i] = AgentView{AgentID: a.AgentID, SessionID: a.SessionID, Regions: a.Regions, Version: a.Version,
			Hostname: a.Hostname, Capabilities: a.Capabilities, TokenID: a.TokenID, TokenName: a.TokenName, Replica: a.Replica,
			ConnectedSince: a.ConnectedAt, ProbesRunning: int(a.ProbesRunning), ResultsPerSecond: a.ResultsPerSecond, SeenAt: a.SeenAt}
	}
	counts := regionCounts(live)
	for _, r := range allRegions(counts, inUse) {
		v := RegionView{Region: r, Agents: counts[r].agents, BrowserAgents: counts[r].browsers, Checks: inUse[r]}
		for _, u := range unserved {
			if u.Region == r {
				since := u.Since
				v.UnservedSince, v.Alerted = &since, u.AlertedAt != nil
			}
		}
		o.Regions = append(o.Regions, v)
	}
	return o, nil
}
