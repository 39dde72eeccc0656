package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/fleet"
)

// AgentDirectory is the deployment's agents as every replica published them; *fleet.Fleet
// implements it.
type AgentDirectory interface {
	Overview(ctx context.Context) (fleet.Overview, error)
}

var _ AgentDirectory = (*fleet.Fleet)(nil)

// agentsHandler serves GET /v1/agents (a Vantage extension, AGENTS:READ): every live agent of
// the deployment, whichever replica it is connected to, and every region with its agents and
// the active checks that run from it — so that a region whose runs go nowhere is seen.
type agentsHandler struct{ dir AgentDirectory }

func newAgentsHandler(d Deps) *agentsHandler { return &agentsHandler{dir: d.Agents} }

type agentTokenJSON struct {
	ID   string  `json:"id"`
	Name *string `json:"name"`
}

type agentJSON struct {
	ID               string          `json:"id"`
	SessionID        string          `json:"session_id"`
	Regions          []string        `json:"regions"`
	Version          string          `json:"version"`
	Hostname         string          `json:"hostname"`
	Capabilities     []string        `json:"capabilities"`
	Token            *agentTokenJSON `json:"token"`
	Replica          string          `json:"replica"`
	ConnectedSince   string          `json:"connected_since"`
	InFlightJobs     int             `json:"in_flight_jobs"`
	ResultsPerSecond float64         `json:"results_per_second"`
	LastSeenAt       string          `json:"last_seen_at"`
}

type regionJSON struct {
	Region        string  `json:"region"`
	Agents        int     `json:"agents"`
	BrowserAgents int     `json:"browser_agents"`
	ActiveChecks  int     `json:"active_checks"`
	Served        bool    `json:"served"`
	UnservedSince *string `json:"unserved_since"`
	Alerted       bool    `json:"alerted"`
}

type agentsJSON struct {
	Agents  []agentJSON  `json:"agents"`
	Regions []regionJSON `json:"regions"`
}

func (h *agentsHandler) list(c *gin.Context) (int, any, error) {
	if h.dir == nil {
		return 0, nil, &apiError{Status: http.StatusServiceUnavailable, Type: "unavailable", Message: "this replica does not list agents"}
	}
	o, err := h.dir.Overview(c.Request.Context())
	if err != nil {
		return 0, nil, err
	}
	out := agentsJSON{Agents: make([]agentJSON, len(o.Agents)), Regions: make([]regionJSON, len(o.Regions))}
	for i, a := range o.Agents {
		v := agentJSON{ID: a.AgentID, SessionID: a.SessionID.String(), Regions: a.Regions, Version: a.Version,
			Hostname: a.Hostname, Capabilities: a.Capabilities, Replica: a.Replica, ConnectedSince: formatTime(a.ConnectedSince),
			InFlightJobs: a.ProbesRunning, ResultsPerSecond: a.ResultsPerSecond, LastSeenAt: formatTime(a.SeenAt)}
		if v.Capabilities == nil {
			v.Capabilities = []string{}
		}
		if a.TokenID != nil {
			v.Token = &agentTokenJSON{ID: a.TokenID.String(), Name: a.TokenName}
		}
		out.Agents[i] = v
	}
	for i, r := range o.Regions {
		out.Regions[i] = regionJSON{Region: r.Region, Agents: r.Agents, BrowserAgents: r.BrowserAgents, ActiveChecks: r.Checks,
			Served: r.Agents > 0, UnservedSince: formatTimePtr(r.UnservedSince), Alerted: r.Alerted}
	}
	return http.StatusOK, out, nil
}
