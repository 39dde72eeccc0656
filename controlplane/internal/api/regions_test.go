package api

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestCheckRegions: every test region in order, NO_DATA until it reports, then its last
// result; a check of another organization is a 404.
func TestCheckRegions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/tcp", ckWith(ckTCPBody(), "test_regions", []string{"cloud:us-east-1", "cloud:eu-west-2"}))
	r := h.do(http.MethodGet, "/v1/checks/"+id+"/regions", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	items, _ := r.Body["result"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["status"] != "NO_DATA" || items[0].(map[string]any)["region"] != "cloud:us-east-1" {
		t.Fatalf("regions before any result: %s", r.Raw)
	}
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO check_regions (org_id, check_id, region, passing, checked_at, result_id, response_time_ms, result_summary)
		VALUES ($1, $2, 'cloud:eu-west-2', false, $3, gen_random_uuid(), 12, 'connection refused')`, h.orgA, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	r = h.do(http.MethodGet, "/v1/checks/"+id+"/regions", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	eu := r.Body["result"].([]any)[1].(map[string]any)
	last, _ := eu["last_result"].(map[string]any)
	if eu["status"] != "DOWN" || eu["last_checked_at"] == nil || last == nil || last["result_summary"] != "connection refused" {
		t.Errorf("cloud:eu-west-2 after a failing result: %v", eu)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/"+id+"/regions", h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/checks/short/regions", h.tokenA, nil), http.StatusBadRequest)
}

// TestUnhealthyRegions: the operators' view lists the regions marked unhealthy; an
// organization's token without AGENTS:READ is refused.
func TestUnhealthyRegions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO region_health (region, unhealthy_since, reason, cause, changed_at)
		VALUES ('cloud:eu-west-2', now(), 'lone failures', 'checks', now()), ('cloud:us-east-1', NULL, '', 'checks', now()),
		('cloud:ap-southeast-2', now(), 'its canaries fail', 'canary', now())`); err != nil {
		t.Fatal(err)
	}
	ops := h.token(h.orgA, "AGENTS:READ")
	r := h.do(http.MethodGet, "/v1/regions/unhealthy", ops, nil)
	expectStatus(t, r, http.StatusOK)
	items, _ := r.Body["result"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["region"] != "cloud:ap-southeast-2" || items[0].(map[string]any)["cause"] != "canary" ||
		items[1].(map[string]any)["region"] != "cloud:eu-west-2" || items[1].(map[string]any)["cause"] != "checks" {
		t.Errorf("unhealthy regions: %s", r.Raw)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/regions/unhealthy", h.tokenA, nil), http.StatusForbidden)
}
