package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestDependsOnCycleUnderConcurrency: PATCH A.depends_on=[B] and PATCH B.depends_on=[A] sent at
// once, round after round, through the real router. Each round, one of the two may succeed and
// the other must be refused with a 400 naming depends_on; no round may end with both edges,
// a cycle. Without the lock on the organization's dependency graph both cycle checks read the
// graph before either edge committed, and most rounds ended in a cycle.
func TestDependsOnCycleUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "name", "A"))
	b := ckID(t, h, "/v1/checks/tcp", ckWith(ckTCPBody(), "name", "B"))
	patch := func(id string, deps []string) (int, string) {
		body, _ := json.Marshal(map[string]any{"depends_on": deps})
		req := httptest.NewRequest(http.MethodPatch, "/v1/checks/"+id, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.tokenA)
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for round := range 20 {
		var wg sync.WaitGroup
		codes, bodies := make([]int, 2), make([]string, 2)
		for i, p := range [][2]string{{a, b}, {b, a}} {
			wg.Go(func() { codes[i], bodies[i] = patch(p[0], []string{p[1]}) })
		}
		wg.Wait()
		for i := range codes {
			if codes[i] != http.StatusOK && (codes[i] != http.StatusBadRequest || !bytes.Contains([]byte(bodies[i]), []byte("depends_on"))) {
				t.Fatalf("round %d: PATCH %d answered %d: %s", round, i, codes[i], bodies[i])
			}
		}
		depA := h.do(http.MethodGet, "/v1/checks/"+a, h.tokenA, nil).Result()["depends_on"].([]any)
		depB := h.do(http.MethodGet, "/v1/checks/"+b, h.tokenA, nil).Result()["depends_on"].([]any)
		if len(depA) > 0 && len(depB) > 0 {
			t.Fatalf("round %d: a cycle: A depends on %v and B on %v (answers %v)", round, depA, depB, codes)
		}
		if codes[0] == codes[1] {
			t.Fatalf("round %d: both PATCHes answered %d, want one 200 and one 400", round, codes[0])
		}
		// Clear both for the next round.
		for _, id := range []string{a, b} {
			if code, body := patch(id, []string{}); code != http.StatusOK {
				t.Fatalf("round %d: clearing %s: %d %s", round, id, code, body)
			}
		}
	}
}
