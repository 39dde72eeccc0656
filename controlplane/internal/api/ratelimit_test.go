package api

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
)

// replica is a second control-plane API on h's database, with its own router, notifier and
// rate limiter (as another replica has), answering through the same OpenAPI validation; its
// clock is h's.
func (h *harness) replica() *harness {
	h.t.Helper()
	tester, err := notifier.New(notifier.Config{PublicURL: "https://vantage.example"}, notifier.Deps{Store: h.st})
	if err != nil {
		h.t.Fatal(err)
	}
	handler, err := New(Deps{Integrations: tester, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: h.st,
		Auth: h.auth, Registry: prometheus.NewRegistry(), Now: h.now, Ready: h.st.Ping})
	if err != nil {
		h.t.Fatal(err)
	}
	return &harness{t: h.t, st: h.st, auth: h.auth, api: handler, handler: validated(h.t, handler),
		orgA: h.orgA, orgB: h.orgB, tokenA: h.tokenA, tokenB: h.tokenB}
}

// TestRateLimitAcrossReplicas sends an organization's requests to two replicas in turn, with
// the clock stopped: together they allow the burst once, not once each, and the organization's
// bucket is shared by every route with a documented 429 on both.
func TestRateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setNow(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	replicas := []*harness{h, h.replica()}
	counts := map[int]int{}
	for i := range 2 * orgRateBurst {
		r := replicas[i%2].do(http.MethodGet, []string{"/v1/projects", "/v1/env"}[i/2%2], h.tokenA, nil)
		counts[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			pvExpectError(t, r, http.StatusTooManyRequests, 429, "rate_limited")
			if ra := r.Header.Get("Retry-After"); ra != "1" {
				t.Fatalf("Retry-After %q, want 1", ra)
			}
		}
	}
	if counts[http.StatusOK] != orgRateBurst || counts[http.StatusTooManyRequests] != orgRateBurst {
		t.Fatalf("statuses %v: want %d of each (the burst once across both replicas)", counts, orgRateBurst)
	}
	// The next token comes 50 ms later, on either replica; the other organization has its own.
	expectStatus(t, replicas[1].do(http.MethodPost, "/v1/checks/"+uuid.NewString()+"/move", h.tokenA,
		map[string]any{"project_id": nil}), http.StatusTooManyRequests)
	h.setNow(h.now().Add(orgRateEvery))
	expectStatus(t, replicas[1].do(http.MethodGet, "/v1/projects", h.tokenA, nil), http.StatusOK)
	expectStatus(t, replicas[0].do(http.MethodGet, "/v1/projects", h.tokenA, nil), http.StatusTooManyRequests)
	expectStatus(t, replicas[0].do(http.MethodGet, "/v1/projects", h.tokenB, nil), http.StatusOK)
}
