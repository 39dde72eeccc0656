package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// regionalTarget answers 200 "ok", except to probes whose User-Agent names the failing region
// ("Vantage/<version> (+region <region>)"), which get a 500: a target that fails for one region
// only, told apart by the User-Agent every probe sends.
type regionalTarget struct {
	URL     string
	failing atomic.Value // string: the region that gets 500s, "" for none
}

func newRegionalTarget(t *testing.T) *regionalTarget {
	t.Helper()
	rt := &regionalTarget{}
	rt.failing.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := rt.failing.Load().(string); f != "" && strings.Contains(r.UserAgent(), "(+region "+f+")") {
			http.Error(w, "unhealthy here", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	rt.URL = srv.URL + "/health"
	return rt
}

// webhookSink records the event documents POSTed to it.
type webhookSink struct {
	URL  string
	mu   sync.Mutex
	docs []map[string]any
}

func newWebhookSink(t *testing.T) *webhookSink {
	t.Helper()
	ws := &webhookSink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var doc map[string]any
		if json.Unmarshal(b, &doc) == nil {
			ws.mu.Lock()
			ws.docs = append(ws.docs, doc)
			ws.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	ws.URL = srv.URL + "/hook"
	return ws
}

// of returns the documents of type typ about check id.
func (ws *webhookSink) of(typ string, id uuid.UUID) []map[string]any {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []map[string]any
	for _, d := range ws.docs {
		data, _ := d["data"].(map[string]any)
		c, _ := data["check"].(map[string]any)
		if d["type"] == typ && c != nil && c["id"] == id.String() {
			out = append(out, d)
		}
	}
	return out
}

type checkRegionJSON struct {
	Region        string  `json:"region"`
	Status        string  `json:"status"`
	LastCheckedAt *string `json:"last_checked_at"`
	LastResult    *struct {
		Passing bool `json:"passing"`
	} `json:"last_result"`
}

func (s *stack) regions(t *testing.T, id uuid.UUID) map[string]string {
	t.Helper()
	var out []checkRegionJSON
	s.mustCall(t, http.MethodGet, "/v1/checks/"+id.String()+"/regions", nil, &out)
	m := map[string]string{}
	for _, r := range out {
		m[r.Region] = r.Status
	}
	return m
}

// TestRegionalDegradationAndQuorum: a target that fails only for cloud:eu-west-2 (told apart
// by the probes' User-Agent). A check with the default quorum (majority of three) stays UP, its
// regional view shows that region DOWN, its status-page component DEGRADED_PERFORMANCE, and
// uptime.degraded is delivered once to its webhook; a check with quorum "any" on the same
// target goes DOWN, one with quorum 2 stays UP. Once the region passes again uptime.restored
// is delivered, and the "any" check is UP again.
func TestRegionalDegradationAndQuorum(t *testing.T) {
	parallel(t)
	target := newRegionalTarget(t)
	sink := newWebhookSink(t)
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")
	s.exec(t, `UPDATE organizations SET plan = 'paid'`)

	const confirm, recovery = 4, 4
	const bad = "cloud:eu-west-2"
	regions := []string{"cloud:us-east-1", bad, "cloud:ap-southeast-2"}
	newCheck := func(name string, quorum any) uuid.UUID {
		body := map[string]any{"name": name, "url": target.URL, "test_regions": regions,
			"confirmation_period_seconds": confirm, "recovery_period_seconds": recovery,
			"reminder_alert_interval_minutes": -1, "timeout": 5000}
		if quorum != nil {
			body["region_quorum"] = quorum
		}
		id := s.createCheck(t, "/v1/checks", body)
		s.setInterval(t, id, fastInterval)
		return id
	}
	majority, anyQ, two := newCheck("majority", nil), newCheck("any", "any"), newCheck("two", 2)
	s.mustCall(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": sink.URL,
		"events":    []string{"uptime.down", "uptime.up", "uptime.degraded", "uptime.restored"},
		"check_ids": []string{majority.String(), anyQ.String()}}, nil)
	var page struct {
		ID string `json:"id"`
	}
	s.mustCall(t, http.MethodPost, "/v1/status_pages", map[string]any{"name": "Acme", "subdomain": "acme-" + randomHex(4)}, &page)
	var comp struct {
		ID string `json:"id"`
	}
	s.mustCall(t, http.MethodPost, "/v1/status_pages/"+page.ID+"/components", map[string]any{"name": "API"}, &comp)
	s.mustCall(t, http.MethodPatch, "/v1/status_pages/"+page.ID+"/components/"+comp.ID,
		map[string]any{"check_ids": []string{majority.String()}}, nil)
	for _, id := range []uuid.UUID{majority, anyQ, two} {
		s.waitStatus(t, id, "UP", 30*time.Second)
	}

	broke := time.Now()
	target.failing.Store(bad)
	seen := s.waitStatus(t, anyQ, "DOWN", fastInterval*time.Second+confirm*time.Second+slack)
	t.Logf(`quorum "any": DOWN %s after one region broke; statuses %v`, time.Since(broke).Round(time.Millisecond), seen)
	testwait.Eventually(t, fastInterval*time.Second+confirm*time.Second+slack, func() error {
		if n := len(sink.of("uptime.degraded", majority)); n != 1 {
			return fmt.Errorf("uptime.degraded deliveries: %d, want 1", n)
		}
		return nil
	})
	t.Logf("uptime.degraded delivered %s after the region broke", time.Since(broke).Round(time.Millisecond))
	for _, id := range []uuid.UUID{majority, two} {
		if st, err := s.status(id); err != nil || st != "UP" {
			t.Errorf("check %s with one failing region of three: %s (%v), want UP", id, st, err)
		}
	}
	if got := s.regions(t, majority); got[bad] != "DOWN" || got["cloud:us-east-1"] != "UP" || got["cloud:ap-southeast-2"] != "UP" {
		t.Errorf("regional view %v, want %s DOWN and the others UP", got, bad)
	}
	deg := sink.of("uptime.degraded", majority)[0]
	data := deg["data"].(map[string]any)
	if fr, _ := data["failing_regions"].([]any); len(fr) != 1 || fr[0] != bad {
		t.Errorf("uptime.degraded failing_regions = %v, want [%s]", data["failing_regions"], bad)
	}
	if rs, _ := data["regions"].([]any); len(rs) != 3 {
		t.Errorf("uptime.degraded regions = %v, want the three regions", data["regions"])
	}
	if data["reason"] != "regional" {
		t.Errorf("uptime.degraded reason = %v, want regional", data["reason"])
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		if n := s.count(t, `SELECT count(*) FROM status_page_components WHERE id = $1 AND status = 'DEGRADED_PERFORMANCE'`, comp.ID); n != 1 {
			return fmt.Errorf("component of the degraded check is not DEGRADED_PERFORMANCE")
		}
		return nil
	})
	if n := len(sink.of("uptime.down", majority)); n != 0 {
		t.Errorf("uptime.down for the majority check: %d, want none", n)
	}

	healed := time.Now()
	target.failing.Store("")
	testwait.Eventually(t, fastInterval*time.Second+slack, func() error {
		if n := len(sink.of("uptime.restored", majority)); n != 1 {
			return fmt.Errorf("uptime.restored deliveries: %d, want 1", n)
		}
		return nil
	})
	t.Logf("uptime.restored delivered %s after the region healed", time.Since(healed).Round(time.Millisecond))
	s.waitStatus(t, anyQ, "UP", fastInterval*time.Second+recovery*time.Second+slack)
	if n := len(sink.of("uptime.degraded", majority)); n != 1 {
		t.Errorf("uptime.degraded deliveries after recovery: %d, want still 1", n)
	}
	if got := s.regions(t, majority); got[bad] != "UP" {
		t.Errorf("regional view after recovery %v, want %s UP", got, bad)
	}
	if n := len(sink.of("uptime.degraded", anyQ)); n != 0 {
		t.Errorf(`uptime.degraded for the "any" check (it went DOWN instead): %d, want none`, n)
	}
}

// TestDependencies: a parent check and two children that depend on it. The targets of both
// break: the parent goes DOWN and alerts once; the children go DOWN with their incidents marked
// caused by the parent and no alert. The parent's target heals while the children's does not:
// the children, still DOWN, alert then; once their target heals they alert UP.
func TestDependencies(t *testing.T) {
	parallel(t)
	parentTarget, childTarget := newHTTPTarget(t, true), newHTTPTarget(t, true)
	sink := newWebhookSink(t)
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")
	s.exec(t, `UPDATE organizations SET plan = 'paid'`)
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	newCheck := func(name, url string, confirm int, deps []string) uuid.UUID {
		id := s.createCheck(t, "/v1/checks", map[string]any{"name": name, "url": url, "test_regions": regions,
			"confirmation_period_seconds": confirm, "recovery_period_seconds": 2, "reminder_alert_interval_minutes": -1,
			"timeout": 5000, "depends_on": deps})
		s.setInterval(t, id, fastInterval)
		return id
	}
	parent := newCheck("database", parentTarget.URL, 2, []string{})
	// The children confirm for longer, so that the parent is DOWN before they are.
	children := []uuid.UUID{newCheck("api", childTarget.URL, 8, []string{parent.String()}),
		newCheck("web", childTarget.URL, 8, []string{parent.String()})}
	all := append([]string{parent.String()}, children[0].String(), children[1].String())
	s.mustCall(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": sink.URL,
		"events": []string{"uptime.down", "uptime.up"}, "check_ids": all}, nil)
	// A cycle is a 400.
	if code, body, err := s.do(http.MethodPatch, "/v1/checks/"+parent.String(), map[string]any{"depends_on": []string{children[0].String()}}); err != nil || code != http.StatusBadRequest {
		t.Errorf("a dependency cycle: %d %s %v, want 400", code, body, err)
	}
	for _, id := range append([]uuid.UUID{parent}, children...) {
		s.waitStatus(t, id, "UP", 30*time.Second)
	}

	parentTarget.healthy.Store(false)
	childTarget.healthy.Store(false)
	s.waitStatus(t, parent, "DOWN", fastInterval*time.Second+2*time.Second+slack)
	for _, c := range children {
		s.waitStatus(t, c, "DOWN", fastInterval*time.Second+8*time.Second+slack)
		if n := s.count(t, `SELECT count(*) FROM check_incidents WHERE check_id = $1 AND ended_at IS NULL AND caused_by = $2`, c, parent); n != 1 {
			t.Errorf("child %s: its open incident is not marked caused by the parent", c)
		}
	}
	time.Sleep(3 * time.Second) // deliveries of anything that was queued
	if n := len(sink.of("uptime.down", parent)); n != 1 {
		t.Errorf("uptime.down of the parent: %d deliveries, want 1", n)
	}
	for _, c := range children {
		if n := len(sink.of("uptime.down", c)); n != 0 {
			t.Errorf("uptime.down of child %s while the parent is DOWN: %d deliveries, want none", c, n)
		}
	}

	parentTarget.healthy.Store(true)
	s.waitStatus(t, parent, "UP", fastInterval*time.Second+2*time.Second+slack)
	testwait.Eventually(t, fastInterval*time.Second+slack, func() error {
		for _, c := range children {
			if n := len(sink.of("uptime.down", c)); n != 1 {
				return fmt.Errorf("uptime.down of child %s still DOWN after the parent recovered: %d deliveries, want 1", c, n)
			}
		}
		return nil
	})
	childTarget.healthy.Store(true)
	for _, c := range children {
		s.waitStatus(t, c, "UP", fastInterval*time.Second+2*time.Second+slack)
	}
	testwait.Eventually(t, slack, func() error {
		for _, c := range children {
			if n := len(sink.of("uptime.up", c)); n != 1 {
				return fmt.Errorf("uptime.up of child %s: %d deliveries, want 1", c, n)
			}
		}
		return nil
	})
}

// TestProbeHealth: the agent of cloud:eu-west-2 is replaced by one cut off from the targets
// (it refuses private addresses, as an agent whose route to them is dropped fails every
// probe). Checks with quorum "any" would go DOWN on that region's failures alone; instead the
// region is marked unhealthy (agent.unhealthy delivered), its results are left out, and no
// check goes DOWN. With a healthy agent back, the region is cleared.
func TestProbeHealth(t *testing.T) {
	parallel(t)
	const broken = "cloud:eu-west-2"
	target := newHTTPTarget(t, true)
	sink := newWebhookSink(t)
	s := newStackWith(t, map[string]string{"VANTAGE_PROBE_HEALTH_WINDOW": "10s",
		"VANTAGE_PROBE_HEALTH_MIN_CHECKS": "3", "VANTAGE_PROBE_HEALTH_MIN_ORGS": "1"})
	s.startAgent(t, "agent-good", "cloud:us-east-1", "cloud:ap-southeast-2")
	euAgent := s.startAgent(t, "agent-eu", broken)
	s.exec(t, `UPDATE organizations SET plan = 'paid'`)
	var ids []uuid.UUID
	for i := range 4 {
		id := s.createCheck(t, "/v1/checks", map[string]any{"name": fmt.Sprintf("svc %d", i), "url": target.URL,
			"test_regions": []string{"cloud:us-east-1", broken, "cloud:ap-southeast-2"}, "region_quorum": "any",
			"confirmation_period_seconds": 20, "recovery_period_seconds": 2, "reminder_alert_interval_minutes": -1, "timeout": 5000})
		s.setInterval(t, id, fastInterval)
		ids = append(ids, id)
	}
	s.mustCall(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": sink.URL,
		"events": []string{"agent.unhealthy", "agent.healthy", "uptime.down"}, "check_ids": []string{ids[0].String()}}, nil)
	for _, id := range ids {
		s.waitStatus(t, id, "UP", 30*time.Second)
	}

	euAgent.kill(t)
	cut := time.Now()
	cutAgent := s.startAgentWith(t, "agent-eu-cut", map[string]string{"VANTAGE_BROWSER_PATH": "none",
		"VANTAGE_ALLOW_PRIVATE_TARGETS": "false"}, broken)
	unhealthy := func() int {
		return s.count(t, `SELECT count(*) FROM region_health WHERE region = $1 AND unhealthy_since IS NOT NULL`, broken)
	}
	testwait.Eventually(t, 60*time.Second, func() error {
		if unhealthy() != 1 {
			return fmt.Errorf("%s not marked unhealthy", broken)
		}
		return nil
	})
	took := time.Since(cut)
	t.Logf("%s marked unhealthy %s after its agent was cut off from the targets", broken, took.Round(time.Millisecond))
	var regions []map[string]any
	s.mustCall(t, http.MethodGet, "/v1/regions/unhealthy", nil, &regions)
	if len(regions) != 1 || regions[0]["region"] != broken {
		t.Errorf("GET /v1/regions/unhealthy = %v", regions)
	}
	// The checks stay up: watch past their confirmation period.
	deadline := time.Now().Add(25 * time.Second)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			if st, err := s.status(id); err == nil && st == "DOWN" {
				t.Fatalf("check %s went DOWN because its probe location broke", id)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if n := s.outbox(t, ids[0], "uptime.down"); n != 0 {
		t.Errorf("uptime.down queued: %d", n)
	}
	testwait.Eventually(t, 10*time.Second, func() error {
		ws := newWebhookSinkDocs(sink, "agent.unhealthy")
		if ws != 1 {
			return fmt.Errorf("agent.unhealthy deliveries: %d, want 1", ws)
		}
		return nil
	})
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE region = $1 AND NOT passing AND checked_at > $2`, broken, cut); n == 0 {
		t.Error("no failing result of the broken region was stored")
	}

	cutAgent.kill(t)
	back := time.Now()
	s.startAgent(t, "agent-eu-back", broken)
	testwait.Eventually(t, 90*time.Second, func() error {
		if unhealthy() != 0 {
			return fmt.Errorf("%s still unhealthy", broken)
		}
		return nil
	})
	t.Logf("%s healthy again %s after a working agent came back", broken, time.Since(back).Round(time.Millisecond))
	testwait.Eventually(t, 10*time.Second, func() error {
		if n := newWebhookSinkDocs(sink, "agent.healthy"); n != 1 {
			return fmt.Errorf("agent.healthy deliveries: %d, want 1", n)
		}
		return nil
	})
	for _, id := range ids {
		if st, err := s.status(id); err != nil || st != "UP" {
			t.Errorf("check %s: %s %v, want UP", id, st, err)
		}
	}
}

// newWebhookSinkDocs counts the documents of type typ the sink received.
func newWebhookSinkDocs(ws *webhookSink, typ string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, d := range ws.docs {
		if d["type"] == typ {
			n++
		}
	}
	return n
}

// TestDegradedWhenSlow: a target that answers 200 after 800 ms while told to be slow, and at
// once otherwise, watched by a check with degraded_response_time_ms 300 from three regions. The
// check never leaves UP: once slow for its confirmation period, uptime.degraded (reason slow,
// the three regions slow) is delivered once, its status-page component turns
// DEGRADED_PERFORMANCE and GET shows degraded.reasons ["slow"]; fast again, uptime.restored
// (reason slow) is delivered once, degraded is null, and no uptime.down is ever sent.
func TestDegradedWhenSlow(t *testing.T) {
	parallel(t)
	var slow atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			time.Sleep(800 * time.Millisecond)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	sink := newWebhookSink(t)
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")
	s.exec(t, `UPDATE organizations SET plan = 'paid'`)

	const confirm = 4
	id := s.createCheck(t, "/v1/checks", map[string]any{"name": "slow", "url": srv.URL + "/health",
		"test_regions":                []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"},
		"confirmation_period_seconds": confirm, "recovery_period_seconds": 4, "reminder_alert_interval_minutes": -1,
		"timeout": 5000, "degraded_response_time_ms": 300})
	s.setInterval(t, id, fastInterval)
	s.mustCall(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": sink.URL,
		"events":    []string{"uptime.down", "uptime.up", "uptime.degraded", "uptime.restored"},
		"check_ids": []string{id.String()}}, nil)
	var page, comp struct {
		ID string `json:"id"`
	}
	s.mustCall(t, http.MethodPost, "/v1/status_pages", map[string]any{"name": "Acme", "subdomain": "slow-" + randomHex(4)}, &page)
	s.mustCall(t, http.MethodPost, "/v1/status_pages/"+page.ID+"/components", map[string]any{"name": "API"}, &comp)
	s.mustCall(t, http.MethodPatch, "/v1/status_pages/"+page.ID+"/components/"+comp.ID,
		map[string]any{"check_ids": []string{id.String()}}, nil)
	s.waitStatus(t, id, "UP", 30*time.Second)
	degraded := func() any {
		var c struct {
			Degraded any `json:"degraded"`
		}
		s.mustCall(t, http.MethodGet, "/v1/checks/"+id.String(), nil, &c)
		return c.Degraded
	}
	if d := degraded(); d != nil {
		t.Fatalf("degraded of a fast check = %v, want null", d)
	}

	slowed := time.Now()
	slow.Store(true)
	testwait.Eventually(t, fastInterval*time.Second+confirm*time.Second+slack, func() error {
		if n := len(sink.of("uptime.degraded", id)); n != 1 {
			return fmt.Errorf("uptime.degraded deliveries: %d, want 1", n)
		}
		return nil
	})
	t.Logf("uptime.degraded (slow) delivered %s after the target slowed", time.Since(slowed).Round(time.Millisecond))
	data := sink.of("uptime.degraded", id)[0]["data"].(map[string]any)
	if data["reason"] != "slow" {
		t.Errorf("uptime.degraded reason = %v, want slow", data["reason"])
	}
	if sr, _ := data["slow_regions"].([]any); len(sr) != 3 {
		t.Errorf("uptime.degraded slow_regions = %v, want the three regions", data["slow_regions"])
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		if n := s.count(t, `SELECT count(*) FROM status_page_components WHERE id = $1 AND status = 'DEGRADED_PERFORMANCE'`, comp.ID); n != 1 {
			return fmt.Errorf("component of the slow check is not DEGRADED_PERFORMANCE")
		}
		return nil
	})
	if d, _ := degraded().(map[string]any); d == nil || fmt.Sprint(d["reasons"]) != "[slow]" {
		t.Errorf("degraded of the slow check = %v, want reasons [slow]", d)
	}
	if st, err := s.status(id); err != nil || st != "UP" {
		t.Errorf("slow check: %s (%v), want UP", st, err)
	}

	healed := time.Now()
	slow.Store(false)
	testwait.Eventually(t, fastInterval*time.Second+slack, func() error {
		if n := len(sink.of("uptime.restored", id)); n != 1 {
			return fmt.Errorf("uptime.restored deliveries: %d, want 1", n)
		}
		return nil
	})
	t.Logf("uptime.restored (slow) delivered %s after the target was fast again", time.Since(healed).Round(time.Millisecond))
	if r := sink.of("uptime.restored", id)[0]["data"].(map[string]any)["reason"]; r != "slow" {
		t.Errorf("uptime.restored reason = %v, want slow", r)
	}
	// Two more runs: nothing else is raised once the check is fast again.
	time.Sleep(2 * fastInterval * time.Second)
	if d := degraded(); d != nil {
		t.Errorf("degraded after recovery = %v, want null", d)
	}
	if n, m := len(sink.of("uptime.degraded", id)), len(sink.of("uptime.restored", id)); n != 1 || m != 1 {
		t.Errorf("uptime.degraded, uptime.restored deliveries: %d, %d; want 1 each", n, m)
	}
	if n := len(sink.of("uptime.down", id)) + len(sink.of("uptime.up", id)); n != 0 {
		t.Errorf("uptime.down/up deliveries for a slow but passing check: %d, want none", n)
	}
	if st, err := s.status(id); err != nil || st != "UP" {
		t.Errorf("check after recovery: %s (%v), want UP", st, err)
	}
}
