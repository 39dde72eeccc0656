package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestAuditLogsList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := make([]string, 3)
	for i := range ids {
		r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody(fmt.Sprintf("Robot %d", i), "WEBHOOKS:READ"))
		expectStatus(t, r, http.StatusCreated)
		ids[i] = r.Result()["id"].(string)
	}
	expectStatus(t, h.do(http.MethodDelete, "/v1/tokens/"+ids[0], h.tokenA, nil), http.StatusOK)
	// orgA now has: the harness token's creation (System), 3 creations and 1 deletion (ApiToken).

	r := h.do(http.MethodGet, "/v1/audit_logs", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	items := r.Items()
	info := r.Body["result_info"].(map[string]any)
	if !reflect.DeepEqual(info, map[string]any{"page": 1.0, "per_page": 20.0, "count": 5.0, "total_count": 5.0}) {
		t.Fatalf("result_info %v", info)
	}
	for _, e := range items {
		expectKeys(t, "audit event", e, "id", "type", "actor_id", "actor_type", "actor_display_name",
			"auditable_id", "auditable_type", "auditable_display_name", "target_id", "target_type",
			"target_display_name", "audit_action", "action", "location", "remote_ip", "created_at", "metadata")
		if e["type"] != "AuditLogEvent" || !timePattern.MatchString(e["created_at"].(string)) {
			t.Fatalf("event %v", e)
		}
	}
	var actions []string
	for _, e := range items {
		actions = append(actions, e["audit_action"].(string)+" "+e["auditable_display_name"].(string))
	}
	want := []string{"api_token.deleted Robot 0", "api_token.created Robot 2", "api_token.created Robot 1",
		"api_token.created Robot 0", "api_token.created test"}
	if !reflect.DeepEqual(actions, want) {
		t.Fatalf("newest first: got %v, want %v", actions, want)
	}
	del := items[0]
	if del["actor_type"] != "ApiToken" || del["actor_display_name"] != "test" || del["action"] != "deleted" ||
		del["auditable_type"] != "ApiToken" || del["auditable_id"] != ids[0] || del["target_type"] != "Organisation" ||
		del["target_id"] != h.orgA.String() || del["target_display_name"] != "Org A" || del["metadata"] != nil ||
		del["location"] != nil || del["remote_ip"] == nil {
		t.Fatalf("delete event %v", del)
	}
	if sys := items[4]; sys["actor_type"] != "System" || sys["actor_id"] != nil || sys["remote_ip"] != nil {
		t.Fatalf("system event %v", sys)
	}
	golden(t, "audit_logs_list", r.Raw)

	// Paging.
	r = h.do(http.MethodGet, "/v1/audit_logs?per_page=2&page=3", h.tokenA, nil)
	if len(r.Items()) != 1 || r.Items()[0]["auditable_display_name"] != "test" {
		t.Fatalf("page 3: %s", r.Raw)
	}
	for _, q := range []string{"?page=0", "?per_page=-1", "?page=x", "?search=" + strings.Repeat("a", 256), "?search=a%00"} {
		expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs"+q, h.tokenA, nil), http.StatusBadRequest)
	}

	// Search: case-insensitive substring of the action, the type and the display names.
	search := map[string]int{
		"DELETED":     1, // audit_action
		"apitoken":    5, // auditable_type
		"robot 1":     1, // auditable_display_name
		"vantage":     1, // actor_display_name of the System actor
		"Org A":       0, // the target is not searched
		"%":           0, // wildcards are literal
		"no such row": 0,
	}
	for q, n := range search {
		r := h.do(http.MethodGet, "/v1/audit_logs?search="+url.QueryEscape(q), h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		if got := len(r.Items()); got != n || r.Body["result_info"].(map[string]any)["total_count"] != float64(n) {
			t.Errorf("search %q: %d items, want %d", q, got, n)
		}
	}

	// Organization B sees only its own log.
	r = h.do(http.MethodGet, "/v1/audit_logs", h.tokenB, nil)
	if len(r.Items()) != 1 || r.Items()[0]["target_id"] != h.orgB.String() {
		t.Fatalf("org B's log: %s", r.Raw)
	}
}

func TestAuditLogsMetadata(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Metadata is written by other resources' mutations; insert one event with it directly.
	_, err := h.st.Pool().Exec(context.Background(), `INSERT INTO audit_events (id, org_id, actor_type, auditable_type,
		audit_action, action, metadata) VALUES (gen_random_uuid(), $1, 'System', 'Check', 'check.moved', 'moved', $2)`,
		h.orgA, map[string]any{"from_project_id": nil, "to_project_id": "p1", "n": 2})
	if err != nil {
		t.Fatal(err)
	}
	r := h.do(http.MethodGet, "/v1/audit_logs?search=check.moved", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	want := map[string]any{"from_project_id": nil, "to_project_id": "p1", "n": 2.0}
	if len(r.Items()) != 1 || !reflect.DeepEqual(r.Items()[0]["metadata"], want) {
		t.Fatalf("metadata: %s", r.Raw)
	}
}
