package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

func TestListAgents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, hash := auth.NewAgentSecret()
	tok, err := h.st.CreateAgentToken(ctx, "eu agents", []string{"cloud:eu-west-2"}, hash)
	if err != nil {
		t.Fatal(err)
	}
	// Two replicas published their agents; a third died a minute ago.
	now := time.Now()
	publish := func(replica string, seen time.Time, sessions ...store.AgentSession) {
		for i := range sessions {
			sessions[i].Replica, sessions[i].SeenAt = replica, seen
		}
		if err := h.st.PublishAgentSessions(ctx, uuid.New(), sessions, seen.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	connected := now.Add(-time.Hour).UTC().Truncate(time.Millisecond)
	publish("cp-0", now, store.AgentSession{SessionID: uuid.New(), AgentID: "eu-1", TokenID: &tok.ID, Regions: []string{"cloud:eu-west-2"},
		Version: "1.4.0", Hostname: "eu-1.internal", Capabilities: []string{"browser"}, ConnectedAt: connected,
		ProbesRunning: 3, ResultsPerSecond: 1.5})
	publish("cp-1", now, store.AgentSession{SessionID: uuid.New(), AgentID: "dev", Regions: []string{"cloud:us-east-1"},
		Version: "devel", Hostname: "laptop", ConnectedAt: connected.Add(time.Minute)})
	publish("cp-2", now.Add(-time.Minute), store.AgentSession{SessionID: uuid.New(), AgentID: "gone",
		Regions: []string{"cloud:ap-south-1"}, Hostname: "x", ConnectedAt: connected})
	h.do("POST", "/v1/checks", h.tokenA, map[string]any{"name": "c", "url": "https://example.com",
		"test_regions": []string{"cloud:eu-west-2", "cloud:ap-south-1"}})

	t.Run("organization tokens do not see the deployment", func(t *testing.T) {
		expectStatus(t, h.do("GET", "/v1/agents", h.tokenA, nil), http.StatusForbidden)
		expectStatus(t, h.do("GET", "/v1/agents", "", nil), http.StatusUnauthorized)
	})
	operator := h.token(h.orgB, "AGENTS:READ")
	r := h.do("GET", "/v1/agents", operator, nil)
	expectStatus(t, r, http.StatusOK)
	agents, _ := r.Result()["agents"].([]any)
	if len(agents) != 2 {
		t.Fatalf("agents %v, want the two of live replicas", agents)
	}
	eu, _ := agents[0].(map[string]any)
	token, _ := eu["token"].(map[string]any)
	if eu["id"] != "eu-1" || eu["replica"] != "cp-0" || eu["in_flight_jobs"] != 3.0 || eu["results_per_second"] != 1.5 ||
		eu["connected_since"] != formatTime(connected) || token["id"] != tok.ID.String() || token["name"] != "eu agents" {
		t.Errorf("eu-1: %v", eu)
	}
	if dev, _ := agents[1].(map[string]any); dev["token"] != nil || dev["replica"] != "cp-1" {
		t.Errorf("an agent of the shared token: %v", dev)
	}
	regions := map[string]map[string]any{}
	list, _ := r.Result()["regions"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		regions[m["region"].(string)] = m
	}
	if len(regions) != 8 {
		t.Errorf("%d regions, want every known one", len(regions))
	}
	if eu := regions["cloud:eu-west-2"]; eu["agents"] != 1.0 || eu["browser_agents"] != 1.0 || eu["active_checks"] != 1.0 || eu["served"] != true {
		t.Errorf("eu-west-2: %v", eu)
	}
	if ap := regions["cloud:ap-south-1"]; ap["agents"] != 0.0 || ap["active_checks"] != 1.0 || ap["served"] != false {
		t.Errorf("ap-south-1, whose only agent's replica died: %v", ap)
	}
}
