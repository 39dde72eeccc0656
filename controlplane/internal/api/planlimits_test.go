package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// TestStatusPagePlanLimits: on a free plan (org B), a custom domain, a password and
// allowed_ips are refused with 403 naming the feature, on create and update, and a page takes
// at most statuspage.FreeSubscribersPerPage subscribers; a paid plan (org A) has none of these
// limits.
func TestStatusPagePlanLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for name, tc := range map[string]struct {
		field string
		value any
		want  string
	}{
		"custom domain": {"custom_domain", "https://status.free.test", "custom domains require a paid plan"},
		"password":      {"password", "hunter22", "private (password-protected) status pages require a paid plan"},
		"allowed_ips":   {"allowed_ips", []string{"10.0.0.0/8"}, "private (IP-restricted) status pages require a paid plan"},
	} {
		body := map[string]any{"name": "Free", "subdomain": "free-" + strings.ReplaceAll(name, " ", "-"), tc.field: tc.value}
		r := h.do(http.MethodPost, "/v1/status_pages", h.tokenB, body)
		if r.Status != http.StatusForbidden || !strings.Contains(r.ErrorText(), tc.want) {
			t.Errorf("%s on create: %d %s", name, r.Status, r.Raw)
		}
		body["subdomain"] = "paid-" + strings.ReplaceAll(name, " ", "-")
		expectStatus(t, h.do(http.MethodPost, "/v1/status_pages", h.tokenA, body), http.StatusCreated)
	}
	r := h.do(http.MethodPost, "/v1/status_pages", h.tokenB, map[string]any{"name": "Free", "subdomain": "free-plain"})
	expectStatus(t, r, http.StatusCreated)
	id := r.Result()["id"].(string)
	r = h.do(http.MethodPatch, "/v1/status_pages/"+id, h.tokenB, map[string]any{"name": "Free", "subdomain": "free-plain", "custom_domain": "status.free.test"})
	if r.Status != http.StatusForbidden || !strings.Contains(r.ErrorText(), "custom_domain") {
		t.Fatalf("custom domain on update: %d %s", r.Status, r.Raw)
	}
	// Clearing a paid feature is allowed on any plan.
	expectStatus(t, h.do(http.MethodPatch, "/v1/status_pages/"+id, h.tokenB, map[string]any{"name": "Free", "subdomain": "free-plain",
		"password": nil, "allowed_ips": []string{}}), http.StatusOK)

	for i := range statuspage.FreeSubscribersPerPage {
		expectStatus(t, h.do(http.MethodPost, "/v1/status_pages/"+id+"/subscribers", h.tokenB,
			map[string]any{"email_address": fmt.Sprintf("s%d@example.com", i)}), http.StatusCreated)
	}
	r = h.do(http.MethodPost, "/v1/status_pages/"+id+"/subscribers", h.tokenB, map[string]any{"email_address": "one-too-many@example.com"})
	if r.Status != http.StatusForbidden || !strings.Contains(r.ErrorText(), "free plan") {
		t.Fatalf("subscriber past the free limit: %d %s", r.Status, r.Raw)
	}
	if r.Body["errors"].([]any)[0].(map[string]any)["type"] != "plan_limit_reached" {
		t.Fatalf("type: %s", r.Raw)
	}
}
