package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newLoginAPI serves a login that hands out a token and items for its bearer; while broken,
// the items answer 503.
func newLoginAPI(t *testing.T) (*httptest.Server, *atomic.Bool) {
	t.Helper()
	var healthy atomic.Bool
	healthy.Store(true)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": "t-42"})
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Authorization") != "Bearer t-42" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":1},{"id":2}]`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &healthy
}

// TestMultistepCheckEndToEnd: a multistep check runs on an agent WITHOUT a browser through the
// real pipeline (API, scheduler, NATS, agent, ingest, evaluator), goes DOWN when a step of
// its API journey fails and UP again when it passes, with one alert each way.
func TestMultistepCheckEndToEnd(t *testing.T) {
	parallel(t)
	api, healthy := newLoginAPI(t)
	s := newStack(t)
	const region = "cloud:us-west-1"
	s.startAgent(t, "agent-no-browser", region)
	begin := time.Now()

	script := `import { test, expect } from '@playwright/test';
test('login then list', async ({ request }) => {
  const token = await test.step('login', async () => {
    const r = await request.post('` + api.URL + `/login', { data: { user: 'e2e' } });
    await expect(r).toBeOK();
    return (await r.json()).token;
  });
  await test.step('list', async () => {
    const items = await request.get('` + api.URL + `/items', { headers: { Authorization: 'Bearer ' + token } });
    await expect(items).toBeOK();
    expect(await items.json()).toHaveLength(2);
  });
});
`
	id := s.createCheck(t, "/v1/checks/multistep", map[string]any{
		"name": "e2e api journey", "script": script, "test_regions": []string{region}, "timeout": 5000,
		"confirmation_period_seconds": 0, "recovery_period_seconds": 0, "reminder_alert_interval_minutes": -1,
	})
	s.setInterval(t, id, fastInterval)
	s.waitStatus(t, id, "UP", 30*time.Second)
	for _, r := range s.results(t, "multistep", id, begin) {
		if !r.Passing {
			t.Errorf("result %s while healthy: %s", r.ID, str(r.ResultSummary))
		}
	}

	healthy.Store(false)
	seen := s.waitStatus(t, id, "DOWN", fastInterval*time.Second+slack)
	mustOnlySee(t, seen, "UP", "VERIFYING", "DOWN")
	if got := s.outbox(t, id, "uptime.down"); got != 1 {
		t.Errorf("uptime.down outbox rows: %d, want 1", got)
	}
	var failed int
	for _, r := range s.results(t, "multistep", id, begin) {
		if r.Passing {
			continue
		}
		failed++
		if sum := str(r.ResultSummary); !strings.Contains(sum, "list") || !strings.Contains(sum, "expect(response).toBeOK()") || !strings.Contains(sum, "check.spec.ts:10:") {
			t.Errorf("failing result %s: summary %q, want the step, the matcher and the line", r.ID, sum)
		}
	}
	if failed == 0 {
		t.Error("no failing result after the API broke")
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND NOT passing AND failure_source = 'ASSERTION' AND failure_type = 'ASSERTION_FAILED'`, id); n == 0 {
		t.Error("no failing result classified ASSERTION / ASSERTION_FAILED")
	}

	healthy.Store(true)
	seen = s.waitStatus(t, id, "UP", fastInterval*time.Second+slack)
	mustOnlySee(t, seen, "DOWN", "RECOVERING", "UP")
	if got := s.outbox(t, id, "uptime.up"); got != 1 {
		t.Errorf("uptime.up outbox rows: %d, want 1", got)
	}
	if got := s.outbox(t, id, "uptime.down"); got != 1 {
		t.Errorf("uptime.down outbox rows after recovery: %d, want still 1", got)
	}
	if inc := s.incidents(t, "multistep", id); len(inc) != 1 || inc[0].EndedAt == nil {
		t.Errorf("incidents: %+v, want one, closed", inc)
	}
	if dups := s.duplicateResults(t, id); len(dups) > 0 {
		t.Errorf("results stored more than once: %v", dups)
	}
}
