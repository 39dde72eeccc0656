package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
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

// testTarget is a provider's API that counts the requests test messages make to it.
type testTarget struct {
	*httptest.Server
	requests atomic.Int64
}

func newTestTarget(t *testing.T) *testTarget {
	tt := &testTarget{}
	tt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tt.requests.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(tt.Close)
	return tt
}

// telegramTo stores a Telegram integration of org whose API is target, and returns its id.
func (h *harness) telegramTo(org uuid.UUID, target string) string {
	h.t.Helper()
	set, errs := integration.Validate(integration.Telegram, integration.Settings{"bot_token": "123:secret",
		"chat_id": "42", "api_url": target})
	if len(errs) > 0 {
		h.t.Fatal(errs)
	}
	in, err := h.st.CreateIntegration(context.Background(), store.SystemActor, org,
		store.NewIntegration{Name: "tg", Type: integration.Telegram, Settings: set})
	if err != nil {
		h.t.Fatal(err)
	}
	return in.ID.String()
}

// TestIntegrationTestRateLimited (F9): test messages were unthrottled — 60 calls made 120
// requests to a host the caller chose. Through two replicas in turn, an integration gets its
// burst of 3 and the organization its burst of 10, once in all; the rest are answered 429 in
// the failure envelope with Retry-After and make no request; the limits refill with time.
func TestIntegrationTestRateLimited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.setNow(start)
	replicas := []*harness{h, h.replica()}
	target := newTestTarget(t)
	test := func(i int, id string) response {
		return replicas[i%2].do(http.MethodPost, "/v1/integrations/"+id+"/test", h.tokenA, nil)
	}

	one := h.telegramTo(h.orgA, target.URL)
	for i := range 6 {
		r := test(i, one)
		if i < integrationTestBurst {
			expectStatus(t, r, http.StatusOK)
			continue
		}
		pvExpectError(t, r, http.StatusTooManyRequests, 429, "rate_limited")
		if ra := r.Header.Get("Retry-After"); ra != "10" {
			t.Fatalf("Retry-After %q, want 10", ra)
		}
		if !strings.Contains(r.FirstError(), "this integration") {
			t.Fatalf("message %q does not say which limit", r.FirstError())
		}
	}
	if n := target.requests.Load(); n != integrationTestBurst {
		t.Fatalf("%d requests reached the target, want %d", n, integrationTestBurst)
	}

	// The organization's limit: 3 of its 10 are spent; other integrations get the other 7.
	others := []string{h.telegramTo(h.orgA, target.URL), h.telegramTo(h.orgA, target.URL), h.telegramTo(h.orgA, target.URL)}
	counts := map[int]int{}
	for i := range 9 {
		r := test(i, others[i%3])
		counts[r.Status]++
		if r.Status == http.StatusTooManyRequests && !strings.Contains(r.FirstError(), "this organization") {
			t.Fatalf("message %q does not say which limit", r.FirstError())
		}
	}
	if counts[http.StatusOK] != integrationTestOrgBurst-integrationTestBurst || counts[http.StatusTooManyRequests] != 2 {
		t.Fatalf("statuses %v: want 7 sent and 2 refused by the organization's limit", counts)
	}
	if n := target.requests.Load(); n != integrationTestOrgBurst {
		t.Fatalf("%d requests reached the target, want %d", n, integrationTestOrgBurst)
	}

	// Another organization is not affected; time refills both limits.
	expectStatus(t, replicas[1].do(http.MethodPost, "/v1/integrations/"+h.telegramTo(h.orgB, target.URL)+"/test",
		h.tokenB, nil), http.StatusOK)
	h.setNow(start.Add(integrationTestEvery))
	expectStatus(t, test(0, one), http.StatusOK)
}
