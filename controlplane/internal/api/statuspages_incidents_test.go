package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// outboxEvents returns the event types queued for an incident, oldest first, and the last payload.
func (h *harness) outboxEvents(t *testing.T, incident string) ([]string, map[string]any) {
	t.Helper()
	rows, err := h.st.Pool().Query(context.Background(), `SELECT event_type, payload, status_page_id IS NOT NULL FROM outbox
		WHERE org_id = $1 AND incident_id = $2 ORDER BY created_at, id`, h.orgA, incident)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var types []string
	var last map[string]any
	for rows.Next() {
		var typ string
		var payload []byte
		var hasPage bool
		if err := rows.Scan(&typ, &payload, &hasPage); err != nil {
			t.Fatal(err)
		}
		if !hasPage {
			t.Fatalf("outbox row %s without status_page_id", typ)
		}
		types = append(types, typ)
		last = map[string]any{}
		if err := json.Unmarshal(payload, &last); err != nil {
			t.Fatal(err)
		}
	}
	return types, last
}

func TestStatusPageIncidents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "incidents")
	api, web := h.newComponent(t, page, "API"), h.newComponent(t, page, "Web")
	base := "/v1/status_pages/" + page + "/incidents"

	for _, tc := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"title required", `{"description":"d","status":"INVESTIGATING"}`, 400, "title: is required"},
		{"empty title", `{"title":"","description":"d","status":"INVESTIGATING"}`, 400, "title: must be 1 to 256"},
		{"long title", map[string]any{"title": strings.Repeat("t", 257), "description": "d", "status": "INVESTIGATING"}, 400, "title: must be 1 to 256"},
		{"description required", `{"title":"t","status":"INVESTIGATING"}`, 400, "description: is required"},
		{"status required", `{"title":"t","description":"d"}`, 400, "status: is required"},
		{"maintenance status refused on create", `{"title":"t","description":"d","status":"SCHEDULED"}`, 400, "status: must be one of"},
		{"component status enum", map[string]any{"title": "t", "description": "d", "status": "UPDATE", "components": []map[string]any{{"id": api, "status": "DOWN"}}}, 400, "components[0].status"},
		{"component id required", `{"title":"t","description":"d","status":"UPDATE","components":[{"status":"MAJOR_OUTAGE"}]}`, 400, "components[0].id: is required"},
		{"component of no page", map[string]any{"title": "t", "description": "d", "status": "UPDATE", "components": []map[string]any{{"id": uuid.NewString(), "status": "MAJOR_OUTAGE"}}}, 400, "components[0].id"},
		{"unknown property", `{"title":"t","description":"d","status":"UPDATE","impact":"MAJOR_OUTAGE"}`, 400, "impact: unknown property"},
		{"empty description is allowed", `{"title":"t","description":"","status":"UPDATE"}`, 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, base, h.tokenA, tc.body)
			expectStatus(t, r, tc.status)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}

	created := h.spCall(t, http.MethodPost, base, map[string]any{"title": "API errors", "description": "We are looking into it",
		"status": "INVESTIGATING", "components": []map[string]any{{"id": api, "status": "MAJOR_OUTAGE"}, {"id": web, "status": "DEGRADED_PERFORMANCE"}}}, http.StatusCreated)
	golden(t, "status_page_incident_create", created.Raw)
	inc := created.Result()
	id := inc["id"].(string)
	if inc["impact"] != "MAJOR_OUTAGE" || inc["ended"] != nil {
		t.Fatalf("created incident: %v", inc)
	}
	if st := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/components/"+api, nil, 200).Result()["status"]; st != "MAJOR_OUTAGE" {
		t.Fatalf("component status %v after incident creation", st)
	}
	ubase := base + "/" + id + "/updates"

	// Updates: validation.
	for _, tc := range []struct {
		name   string
		body   any
		status int
	}{
		{"status required", `{"description":"d"}`, 400},
		{"status enum", `{"status":"DONE","description":"d"}`, 400},
		{"description min 1", `{"status":"UPDATE","description":""}`, 400},
		{"bad date", `{"status":"UPDATE","description":"d","date_happened":"yesterday"}`, 400},
		{"too precise date", `{"status":"UPDATE","description":"d","date_happened":"2026-01-01T00:00:00.0001Z"}`, 400},
		{"component status enum", map[string]any{"status": "UPDATE", "description": "d", "components_affected": []map[string]any{{"id": api, "status": "FINE"}}}, 400},
		{"unknown incident", `{"status":"UPDATE","description":"d"}`, 404},
	} {
		t.Run("update "+tc.name, func(t *testing.T) {
			path := ubase
			if tc.status == 404 {
				path = base + "/" + uuid.NewString() + "/updates"
			}
			expectStatus(t, h.do(http.MethodPost, path, h.tokenA, tc.body), tc.status)
		})
	}

	upd := h.spCall(t, http.MethodPost, ubase, map[string]any{"status": "IDENTIFIED", "description": "Bad deploy",
		"components_affected": []map[string]any{{"id": api, "status": "PARTIAL_OUTAGE"}}}, http.StatusCreated)
	golden(t, "status_page_incident_update_create", upd.Raw)
	ch := upd.Result()["components"].([]any)[0].(map[string]any)
	if ch["old_status"] != "MAJOR_OUTAGE" || ch["new_status"] != "PARTIAL_OUTAGE" || ch["name"] != "API" {
		t.Fatalf("recorded change: %v", ch)
	}
	resolved := h.spCall(t, http.MethodPost, ubase, map[string]any{"status": "RESOLVED", "description": "Fixed",
		"components_affected": []map[string]any{{"id": api, "status": "OPERATIONAL"}, {"id": web, "status": "OPERATIONAL"}}}, http.StatusCreated).Result()
	full := h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK)
	golden(t, "status_page_incident_get", full.Raw)
	got := full.Result()
	if got["ended"] == nil || got["latest_update"].(map[string]any)["id"] != resolved["id"] || len(got["updates"].([]any)) != 3 || len(got["components"].([]any)) != 2 {
		t.Fatalf("resolved incident: %v", got)
	}
	// A later non-final update clears ended; an earlier one (by date_happened) does not.
	early := h.spCall(t, http.MethodPost, ubase, `{"status":"MONITORING","description":"back-dated","date_happened":"2020-01-01T00:00:00Z"}`, http.StatusCreated).Result()
	if h.spCall(t, http.MethodGet, base+"/"+id, nil, 200).Result()["ended"] == nil {
		t.Fatal("a back-dated update reopened the incident")
	}
	h.spCall(t, http.MethodPatch, ubase+"/"+early["id"].(string), `{"date_happened":"2099-01-01T00:00:00Z"}`, http.StatusOK)
	reopened := h.spCall(t, http.MethodGet, base+"/"+id, nil, 200).Result()
	if _, has := reopened["ended"]; has || reopened["latest_update"].(map[string]any)["id"] != early["id"] {
		t.Fatalf("moving a MONITORING update last should clear ended: %v", reopened)
	}
	h.spCall(t, http.MethodDelete, ubase+"/"+early["id"].(string), nil, http.StatusOK)
	if h.spCall(t, http.MethodGet, base+"/"+id, nil, 200).Result()["ended"] == nil {
		t.Fatal("deleting the last update should make RESOLVED latest again")
	}
	one := h.spCall(t, http.MethodGet, ubase+"/"+resolved["id"].(string), nil, http.StatusOK).Result()
	if one["status"] != "RESOLVED" {
		t.Fatalf("get update: %v", one)
	}
	if items := h.spCall(t, http.MethodGet, ubase+"?search=deploy", nil, 200).Items(); len(items) != 1 {
		t.Fatalf("update search: %v", items)
	}
	expectStatus(t, h.do(http.MethodPatch, ubase+"/"+resolved["id"].(string), h.tokenA, `{"description":""}`), http.StatusBadRequest)
	expectStatus(t, h.do(http.MethodGet, ubase+"/"+uuid.NewString(), h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, ubase+"/short", h.tokenA, nil), http.StatusBadRequest)

	// PATCH needs title and impact.
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"title and impact", `{"title":"API errors (fixed)","impact":"PARTIAL_OUTAGE"}`, 200},
		{"impact missing", `{"title":"x"}`, 400},
		{"title missing", `{"impact":"NO_IMPACT"}`, 400},
		{"impact enum", `{"title":"x","impact":"OPERATIONAL"}`, 400},
		{"title too long", `{"title":"` + strings.Repeat("x", 257) + `","impact":"NO_IMPACT"}`, 400},
	} {
		t.Run("patch "+tc.name, func(t *testing.T) { expectStatus(t, h.do(http.MethodPatch, base+"/"+id, h.tokenA, tc.body), tc.status) })
	}

	events, payload := h.outboxEvents(t, id)
	want := "status_page.incident.started,status_page.incident.updated,status_page.incident.resolved,status_page.incident.updated,status_page.incident.updated,status_page.incident.updated,status_page.incident.updated"
	if strings.Join(events, ",") != want {
		t.Fatalf("outbox events\n got %v\nwant %s", events, want)
	}
	if payload["event"] != "status_page.incident.updated" || payload["status_page"].(map[string]any)["id"] != page ||
		payload["incident"].(map[string]any)["title"] != "API errors (fixed)" || payload["occurred_at"] == nil {
		t.Fatalf("payload: %v", payload)
	}

	quick := h.spCall(t, http.MethodPost, base, `{"title":"Blip","description":"","status":"RESOLVED","notify_subscribers":false}`, http.StatusCreated).Result()
	if quick["impact"] != "NO_IMPACT" || quick["ended"] == nil || len(quick["components"].([]any)) != 0 {
		t.Fatalf("an incident created RESOLVED without components: %v", quick)
	}
	if ev, _ := h.outboxEvents(t, quick["id"].(string)); strings.Join(ev, ",") != "status_page.incident.started" {
		t.Fatalf("outbox of an incident created resolved: %v", ev)
	}
	paged := h.spCall(t, http.MethodGet, base+"?per_page=1&page=2", nil, http.StatusOK)
	if info := paged.Body["result_info"].(map[string]any); len(paged.Items()) != 1 || info["total_count"] != float64(3) || info["page"] != float64(2) {
		t.Fatalf("pagination: %s", paged.Raw)
	}
	if r := h.do(http.MethodPost, "/v1/status_pages/"+uuid.NewString()+"/incidents", h.tokenA, `{"title":"t","description":"d","status":"UPDATE"}`); r.Status != 404 || r.FirstError() != "status page not found" {
		t.Fatalf("incident on a missing page: %s", r.Raw)
	}
	list := h.spCall(t, http.MethodGet, base+"?search=fixed", nil, http.StatusOK)
	golden(t, "status_page_incident_list", list.Raw)
	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"other org list", "GET", base, 404},
		{"other org get", "GET", base + "/" + id, 404},
		{"other org updates", "GET", ubase, 404},
		{"other org delete", "DELETE", base + "/" + id, 404},
	} {
		t.Run(tc.name, func(t *testing.T) { expectStatus(t, h.do(tc.method, tc.path, h.tokenB, nil), tc.status) })
	}
	expectStatus(t, h.do(http.MethodGet, base+"/1234567", h.tokenA, nil), http.StatusBadRequest)
	h.spCall(t, http.MethodDelete, base+"/"+id, nil, http.StatusOK)
	h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusNotFound)
	for _, a := range []string{"status_page_incident.created", "status_page_incident.updated", "status_page_incident.deleted",
		"status_page_incident_update.created", "status_page_incident_update.updated", "status_page_incident_update.deleted"} {
		if h.auditCount(t, a) == 0 {
			t.Errorf("no %s audit event", a)
		}
	}
}

func TestStatusPageSubscribers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "subs")
	comp := h.newComponent(t, page, "API")
	otherPage := h.newPage(t, "subs-other")
	otherComp := h.newComponent(t, otherPage, "Elsewhere")
	base := "/v1/status_pages/" + page + "/subscribers"

	created := h.spCall(t, http.MethodPost, base, `{"email_address":"ops@example.com"}`, http.StatusCreated)
	golden(t, "status_page_subscriber_create", created.Raw)
	sub := created.Result()
	if sub["confirmed"] != false || sub["component_subscription_mode"] != "ALL_COMPONENTS" || len(sub["component_ids"].([]any)) != 0 {
		t.Fatalf("defaults: %v", sub)
	}
	var hashed bool
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT confirmation_token_hash IS NOT NULL FROM status_page_subscribers WHERE id = $1`, sub["id"]).Scan(&hashed); err != nil || !hashed {
		t.Fatalf("no confirmation token hash stored (%v)", err)
	}

	for _, tc := range []struct {
		name   string
		body   any
		status int
	}{
		{"selected components", map[string]any{"email_address": "dev@example.com", "component_subscription_mode": "SELECTED_COMPONENTS", "component_ids": []string{comp}}, 201},
		{"duplicate", `{"email_address":"ops@example.com"}`, 409},
		{"duplicate, other case", `{"email_address":"OPS@example.com"}`, 409},
		{"invalid e-mail", `{"email_address":"not-an-email"}`, 400},
		{"display name form", `{"email_address":"Ops <ops2@example.com>"}`, 400},
		{"no domain dot", `{"email_address":"ops@localhost"}`, 400},
		{"e-mail required", `{}`, 400},
		{"mode enum", `{"email_address":"a@example.com","component_subscription_mode":"SOME"}`, 400},
		{"selected needs components", `{"email_address":"a@example.com","component_subscription_mode":"SELECTED_COMPONENTS"}`, 400},
		{"all with components", map[string]any{"email_address": "a@example.com", "component_ids": []string{comp}}, 400},
		{"component of another page", map[string]any{"email_address": "a@example.com", "component_subscription_mode": "SELECTED_COMPONENTS", "component_ids": []string{otherComp}}, 400},
		{"unknown property", `{"email_address":"a@example.com","name":"x"}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) { expectStatus(t, h.do(http.MethodPost, base, h.tokenA, tc.body), tc.status) })
	}

	list := h.spCall(t, http.MethodGet, base+"?search=ops", nil, http.StatusOK)
	golden(t, "status_page_subscriber_list", list.Raw)

	// Another organization's page: 403 on list, create and delete (api/openapi); a missing page: 404.
	subPath := base + "/" + sub["id"].(string)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"other org list", "GET", base, nil, 403},
		{"other org create", "POST", base, `{"email_address":"x@example.com"}`, 403},
		{"other org delete", "DELETE", subPath, nil, 403},
		{"missing page list", "GET", "/v1/status_pages/" + uuid.NewString() + "/subscribers", nil, 404},
		{"missing page create", "POST", "/v1/status_pages/" + uuid.NewString() + "/subscribers", `{"email_address":"x@example.com"}`, 404},
		{"short page id", "GET", "/v1/status_pages/abc/subscribers", nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) { expectStatus(t, h.do(tc.method, tc.path, h.tokenB, tc.body), tc.status) })
	}
	if r := h.do(http.MethodDelete, base+"/"+uuid.NewString(), h.tokenA, nil); r.Status != http.StatusNotFound || r.FirstError() != "subscriber not found" {
		t.Fatalf("delete of a missing subscriber: %d %s", r.Status, r.Raw)
	}
	if r := h.do(http.MethodGet, "/v1/status_pages/"+uuid.NewString()+"/subscribers", h.tokenA, nil); r.FirstError() != "status page not found" {
		t.Fatalf("list of a missing page: %s", r.Raw)
	}
	expectStatus(t, h.do(http.MethodDelete, base+"/short", h.tokenA, nil), http.StatusBadRequest)
	h.spCall(t, http.MethodDelete, subPath, nil, http.StatusOK)
	expectStatus(t, h.do(http.MethodDelete, subPath, h.tokenA, nil), http.StatusNotFound)
	// Deleting a component drops it from selections.
	h.spCall(t, http.MethodDelete, "/v1/status_pages/"+page+"/components/"+comp, nil, http.StatusOK)
	if items := h.spCall(t, http.MethodGet, base, nil, 200).Items(); len(items) != 1 || len(items[0]["component_ids"].([]any)) != 0 {
		t.Fatalf("after component delete: %v", items)
	}
	for _, a := range []string{"status_page_subscriber.created", "status_page_subscriber.deleted"} {
		if h.auditCount(t, a) == 0 {
			t.Errorf("no %s audit event", a)
		}
	}
}
