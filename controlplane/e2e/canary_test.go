package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// Canaries (docs/detection.md "Canaries", "Hold-off"). Every test runs three regions; the
// agents probe a local "control plane endpoint" (VANTAGE_CANARY_URL) and a local TCP canary
// (VANTAGE_CANARY_TARGETS) every 5 s, the default. A region is broken by an agent run with
// VANTAGE_ALLOW_PRIVATE_TARGETS=false: every loopback target and canary is refused to it.

const (
	brokenRegion   = "cloud:ap-southeast-2"
	canaryInterval = 5 * time.Second // the agents' default
)

var canaryRegions = []string{"cloud:us-east-1", "cloud:eu-west-2", brokenRegion}

// canaryStack starts a stack whose agents have local canaries.
type canaryStack struct {
	*stack
	targets string // VANTAGE_CANARY_TARGETS
}

func newCanaryStack(t *testing.T) *canaryStack {
	t.Helper()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(endpoint.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	s := newStackWith(t, map[string]string{"VANTAGE_CANARY_URL": endpoint.URL + "/healthz"})
	return &canaryStack{stack: s, targets: "tcp://" + lis.Addr().String()}
}

// agent starts an agent of region with the stack's canaries and env.
func (s *canaryStack) agent(t *testing.T, name, region string, env map[string]string) *agent {
	t.Helper()
	full := map[string]string{"VANTAGE_BROWSER_PATH": "none", "VANTAGE_CANARY_TARGETS": s.targets}
	for k, v := range env {
		full[k] = v
	}
	return s.startAgentWith(t, name, full, region)
}

// healthyAgents starts a working agent in every region but the broken one, and waits for
// their first canary rounds: a fleet that runs, where a location then breaks.
func (s *canaryStack) healthyAgents(t *testing.T) {
	t.Helper()
	s.agent(t, "agent-us", "cloud:us-east-1", nil)
	s.agent(t, "agent-eu", "cloud:eu-west-2", nil)
	testwait.Eventually(t, 3*canaryInterval, func() error {
		if n := s.count(t, `SELECT count(*) FROM agent_canaries WHERE failing = 0 AND agent_healthy`); n != 2 {
			return fmt.Errorf("%d passing canary rounds, want 2", n)
		}
		return nil
	})
}

// waitUnhealthy waits until region is marked unhealthy and returns the mark's since and cause.
func (s *canaryStack) waitUnhealthy(t *testing.T, region string, within time.Duration) (time.Time, string, string) {
	t.Helper()
	var since time.Time
	var cause, reason string
	testwait.Eventually(t, within, func() error {
		err := s.db.QueryRow(t.Context(), `SELECT unhealthy_since, cause, reason FROM region_health
			WHERE region = $1 AND unhealthy_since IS NOT NULL`, region).Scan(&since, &cause, &reason)
		if err != nil {
			return fmt.Errorf("%s not marked unhealthy: %w", region, err)
		}
		return nil
	})
	return since, cause, reason
}

// TestCanaryZeroChecks: with no tenant check at all, a region whose agent reaches nothing is
// marked unhealthy from its canaries within the canary interval plus one round.
func TestCanaryZeroChecks(t *testing.T) {
	parallel(t)
	s := newCanaryStack(t)
	s.healthyAgents(t)
	s.agent(t, "agent-ap-cut", brokenRegion, map[string]string{"VANTAGE_ALLOW_PRIVATE_TARGETS": "false"})
	ready := time.Now()
	since, cause, reason := s.waitUnhealthy(t, brokenRegion, 3*canaryInterval)
	took := since.Sub(ready)
	t.Logf("%s marked unhealthy %s after its broken agent registered, with 0 checks (cause %s: %s)",
		brokenRegion, took.Round(time.Millisecond), cause, reason)
	if took > 2*canaryInterval {
		t.Errorf("marked %s after the agent registered, want within the canary interval plus one round (%s)", took, 2*canaryInterval)
	}
	if cause != "canary" {
		t.Errorf("cause %q, want canary", cause)
	}
	if n := s.count(t, `SELECT count(*) FROM checks`); n != 0 {
		t.Fatalf("%d checks exist, want none", n)
	}
	var regions []map[string]any
	s.mustCall(t, http.MethodGet, "/v1/regions/unhealthy", nil, &regions)
	if len(regions) != 1 || regions[0]["region"] != brokenRegion || regions[0]["cause"] != "canary" {
		t.Errorf("GET /v1/regions/unhealthy = %v", regions)
	}
	for _, r := range canaryRegions[:2] {
		if n := s.count(t, `SELECT count(*) FROM region_health WHERE region = $1 AND unhealthy_since IS NOT NULL`, r); n != 0 {
			t.Errorf("healthy region %s marked unhealthy", r)
		}
	}
}

// TestCanaryNoFalseAlert: twelve checks, half of them with quorum "any" and every one with no
// confirmation period (DOWN on the first failing verdict: the harshest case), created after the
// region broke and before it was judged: none goes DOWN, no alert is queued or delivered.
func TestCanaryNoFalseAlert(t *testing.T) {
	parallel(t)
	s := newCanaryStack(t)
	target := newHTTPTarget(t, true)
	sink := newWebhookSink(t)
	s.healthyAgents(t)
	s.agent(t, "agent-ap-cut", brokenRegion, map[string]string{"VANTAGE_ALLOW_PRIVATE_TARGETS": "false"})
	broke := time.Now()
	var ids []uuid.UUID
	for i := range 12 {
		body := map[string]any{"name": fmt.Sprintf("svc %d", i), "url": target.URL, "test_regions": canaryRegions,
			"confirmation_period_seconds": 0, "reminder_alert_interval_minutes": -1, "timeout": 3000}
		if i%2 == 0 {
			body["region_quorum"] = "any"
		}
		ids = append(ids, s.createCheck(t, "/v1/checks", body))
	}
	s.setIntervals(t, ids, fastInterval)
	created := time.Now()
	idStrings := make([]string, len(ids))
	for i, id := range ids {
		idStrings[i] = id.String()
	}
	s.mustCall(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": sink.URL, "events": []string{"uptime.down"},
		"check_ids": idStrings}, nil)
	since, cause, _ := s.waitUnhealthy(t, brokenRegion, 3*canaryInterval)
	if !created.Before(since) {
		t.Fatalf("the checks were created (%s) after the region was judged (%s): the test proves nothing", created, since)
	}
	t.Logf("%s marked unhealthy (%s) %s after its broken agent registered, with 12 checks created %s after",
		brokenRegion, cause, since.Sub(broke).Round(time.Millisecond), created.Sub(broke).Round(time.Millisecond))
	// Watch well past the first runs of every check.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			if st, err := s.status(id); err == nil && st == "DOWN" {
				t.Fatalf("check %s went DOWN because its probe location broke", id)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if n := s.count(t, `SELECT count(*) FROM outbox WHERE event_type = 'uptime.down'`); n != 0 {
		t.Errorf("uptime.down queued %d times", n)
	}
	if n := newWebhookSinkDocs(sink, "uptime.down"); n != 0 {
		t.Errorf("uptime.down delivered %d times", n)
	}
	for _, id := range ids {
		if st, err := s.status(id); err != nil || st != "UP" {
			t.Errorf("check %s: %s %v, want UP", id, st, err)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE region = $1 AND NOT passing`, brokenRegion); n == 0 {
		t.Error("no failing result of the broken region was stored")
	}
}

// TestCanaryHoldOffOutages: a real outage seen from every region goes DOWN without a hold; one
// seen from one healthy region only (the target refuses that region's User-Agent), under
// quorum "any", goes DOWN after the hold-off, not suppressed. The times are logged.
func TestCanaryHoldOffOutages(t *testing.T) {
	parallel(t)
	s := newCanaryStack(t)
	everywhere := newHTTPTarget(t, true)
	oneRegion := newRegionalTarget(t)
	s.healthyAgents(t)
	s.agent(t, "agent-ap", brokenRegion, nil)
	const confirmation = 4
	mk := func(name, url string) uuid.UUID {
		id := s.createCheck(t, "/v1/checks", map[string]any{"name": name, "url": url, "test_regions": canaryRegions,
			"region_quorum": "any", "confirmation_period_seconds": confirmation, "reminder_alert_interval_minutes": -1,
			"timeout": 3000})
		s.setInterval(t, id, fastInterval)
		s.waitStatus(t, id, "UP", 30*time.Second)
		return id
	}
	all, one := mk("everywhere", everywhere.URL), mk("one region", oneRegion.URL)
	broke := time.Now()
	everywhere.healthy.Store(false)
	oneRegion.failing.Store(brokenRegion)
	down := map[uuid.UUID]time.Duration{}
	testwait.Eventually(t, 60*time.Second, func() error {
		for _, id := range []uuid.UUID{all, one} {
			if _, ok := down[id]; ok {
				continue
			}
			if st, err := s.status(id); err == nil && st == "DOWN" {
				down[id] = time.Since(broke)
			}
		}
		if len(down) < 2 {
			return fmt.Errorf("DOWN so far: %v", down)
		}
		return nil
	})
	t.Logf("outage from every region: DOWN %s after it began; from %s only: DOWN %s after (interval %ds, confirmation %ds, hold-off at most 8s); added %s",
		down[all].Round(time.Millisecond), brokenRegion, down[one].Round(time.Millisecond), fastInterval, confirmation,
		(down[one] - down[all]).Round(time.Millisecond))
	if limit := time.Duration(confirmation+2*fastInterval)*time.Second + 8*time.Second; down[all] > limit {
		t.Errorf("outage from every region: DOWN after %s, want within %s", down[all], limit)
	}
	if n := s.count(t, `SELECT count(*) FROM region_health WHERE unhealthy_since IS NOT NULL`); n != 0 {
		t.Errorf("%d regions marked unhealthy by a target's outage", n)
	}
	if n := s.count(t, `SELECT count(*) FROM outbox WHERE event_type = 'uptime.down'`); n != 2 {
		t.Errorf("uptime.down queued %d times, want 2", n)
	}
}

// TestCanaryClockSkew: an agent whose clock is 20 s ahead of the control plane's (beyond the
// 10 s bound; within the 30 s at which results are refused) reports itself unhealthy: its
// region is marked unhealthy and its results are stored but left out.
func TestCanaryClockSkew(t *testing.T) {
	parallel(t)
	s := newCanaryStack(t)
	target := newHTTPTarget(t, true)
	s.healthyAgents(t)
	s.agent(t, "agent-ap-skewed", brokenRegion, map[string]string{"VANTAGE_TEST_CLOCK_SKEW": "20s"})
	id := s.createCheck(t, "/v1/checks", map[string]any{"name": "svc", "url": target.URL, "test_regions": canaryRegions,
		"region_quorum": "any", "reminder_alert_interval_minutes": -1, "timeout": 3000})
	s.setInterval(t, id, fastInterval)
	_, cause, reason := s.waitUnhealthy(t, brokenRegion, 3*canaryInterval)
	if cause != "canary" || !strings.Contains(reason, "clock") {
		t.Errorf("cause %q reason %q, want canary, naming the clock", cause, reason)
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		if n := s.count(t, `SELECT count(*) FROM check_results WHERE region = $1 AND failure_type = 'AGENT_UNHEALTHY'`, brokenRegion); n == 0 {
			return fmt.Errorf("no result of the skewed agent marked AGENT_UNHEALTHY")
		}
		return nil
	})
	s.waitStatus(t, id, "UP", 30*time.Second)
}
