package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestStatusPageComponents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "comps")
	base := "/v1/status_pages/" + page + "/components"

	created := h.spCall(t, http.MethodPost, base, map[string]any{"name": "API"}, http.StatusCreated)
	golden(t, "status_page_component_create", created.Raw)
	api := created.Result()["id"].(string)
	web := h.spCall(t, http.MethodPost, base, map[string]any{"name": "Web", "status": "MAJOR_OUTAGE", "display_uptime": false, "display_metrics": false}, http.StatusCreated).Result()
	if web["status"] != "MAJOR_OUTAGE" || web["display_uptime"] != false || web["sort_order"] != float64(1) {
		t.Fatalf("create with fields: %v", web)
	}

	check := h.spCall(t, http.MethodPost, "/v1/checks/uptime", map[string]any{"name": "api", "url": "https://example.com"}, http.StatusCreated).Result()["id"].(string)
	otherCheck := h.do(http.MethodPost, "/v1/checks/uptime", h.tokenB, map[string]any{"name": "b", "url": "https://example.com"}).Result()["id"].(string)
	group := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/groups", map[string]any{"name": "Backend"}, http.StatusCreated).Result()["id"].(string)

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"create: name required", "POST", base, `{}`, 400, "name: is required"},
		{"create: empty name", "POST", base, `{"name":""}`, 400, "name: must be 1"},
		{"create: bad status", "POST", base, `{"name":"x","status":"BROKEN"}`, 400, "status: must be one of"},
		{"create: unknown property", "POST", base, `{"name":"x","check_ids":[]}`, 400, "check_ids: unknown property"},
		{"create: page of other org", "POST", "/v1/status_pages/" + uuid.NewString() + "/components", `{"name":"x"}`, 404, "not found"},
		{"patch: bad status", "PATCH", base + "/" + api, `{"status":"UP"}`, 400, "status:"},
		{"patch: unknown check", "PATCH", base + "/" + api, map[string]any{"check_ids": []string{uuid.NewString()}}, 400, "check_ids:"},
		{"patch: other org's check", "PATCH", base + "/" + api, map[string]any{"check_ids": []string{otherCheck}}, 400, "check_ids:"},
		{"patch: malformed check id", "PATCH", base + "/" + api, `{"check_ids":["x"]}`, 400, "check_ids:"},
		{"patch: unknown heartbeat", "PATCH", base + "/" + api, map[string]any{"heartbeat_id": uuid.NewString()}, 400, "heartbeat_id:"},
		{"patch: unknown group", "PATCH", base + "/" + api, map[string]any{"group_id": uuid.NewString()}, 400, "group_id:"},
		{"patch: short component id", "PATCH", base + "/1234", `{"name":"x"}`, 400, "at least 8"},
		{"get: unknown component", "GET", base + "/" + uuid.NewString(), nil, 404, "status page component not found"},
		{"list: search", "GET", base + "?search=we", nil, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, h.tokenA, tc.body)
			expectStatus(t, r, tc.status)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}
	if items := h.spCall(t, http.MethodGet, base+"?search=we", nil, 200).Items(); len(items) != 1 || items[0]["name"] != "Web" {
		t.Fatalf("search: %v", items)
	}

	// Link a check: the component follows it, and status can no longer be set by hand.
	linked := h.spCall(t, http.MethodPatch, base+"/"+api, map[string]any{"check_ids": []string{check}, "group_id": group}, http.StatusOK)
	golden(t, "status_page_component_linked", linked.Raw)
	r := h.do(http.MethodPatch, base+"/"+api, h.tokenA, `{"status":"MAJOR_OUTAGE"}`)
	expectStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(r.ErrorText(), "override_status") {
		t.Fatalf("errors %q", r.ErrorText())
	}
	over := h.spCall(t, http.MethodPatch, base+"/"+api, `{"status":"MAJOR_OUTAGE","override_status":true}`, http.StatusOK).Result()
	if over["status"] != "MAJOR_OUTAGE" || over["override_status"] != true {
		t.Fatalf("override: %v", over)
	}
	unl := h.spCall(t, http.MethodPatch, base+"/"+api, `{"check_ids":[],"group_id":null,"override_status":false}`, http.StatusOK).Result()
	if len(unl["check_ids"].([]any)) != 0 || unl["group_id"] != nil {
		t.Fatalf("unlink: %v", unl)
	}

	// Other organizations see nothing.
	expectStatus(t, h.do(http.MethodGet, base+"/"+api, h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, base, h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodDelete, base+"/"+api, h.tokenB, nil), http.StatusNotFound)

	h.spCall(t, http.MethodDelete, base+"/"+web["id"].(string), nil, http.StatusOK)
	h.spCall(t, http.MethodGet, base+"/"+web["id"].(string), nil, http.StatusNotFound)
	for _, a := range []string{"status_page_component.created", "status_page_component.updated", "status_page_component.deleted"} {
		if h.auditCount(t, a) == 0 {
			t.Errorf("no %s audit event", a)
		}
	}
}

func TestStatusPageComponentHeartbeatLink(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "hb")
	comp := h.newComponent(t, page, "Cron")
	hb := uuid.New()
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO heartbeats (id, org_id, name, state, report_period, grace_period) VALUES ($1, $2, 'cron', 'DOWN', 60, 60)`, hb, h.orgA); err != nil {
		t.Fatal(err)
	}
	r := h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, map[string]any{"heartbeat_id": hb.String()}, http.StatusOK).Result()
	if r["heartbeat_id"] != hb.String() || r["status"] != "MAJOR_OUTAGE" {
		t.Fatalf("a component linked to a DOWN heartbeat: %v", r)
	}
	r = h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, `{"heartbeat_id":null}`, http.StatusOK).Result()
	if r["heartbeat_id"] != nil {
		t.Fatalf("unlink: %v", r)
	}
	// Another organization's heartbeat cannot be linked.
	r2 := h.do(http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, h.tokenB, map[string]any{"heartbeat_id": hb.String()})
	expectStatus(t, r2, http.StatusNotFound)
}

func TestStatusPageGroupsAndSortOrders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "groups")
	pbase := "/v1/status_pages/" + page
	a, b, c := h.newComponent(t, page, "A"), h.newComponent(t, page, "B"), h.newComponent(t, page, "C")

	g1 := h.spCall(t, http.MethodPost, pbase+"/groups", map[string]any{"name": "Core", "description": "core services"}, http.StatusCreated)
	golden(t, "status_page_group_create", g1.Raw)
	gid := g1.Result()["id"].(string)
	g2 := h.spCall(t, http.MethodPost, pbase+"/groups", map[string]any{"name": "Edge"}, http.StatusCreated).Result()
	if g2["sort_order"] != float64(1) {
		t.Fatalf("second group sort_order %v, want 1", g2["sort_order"])
	}
	g2id := g2["id"].(string)
	patched := h.spCall(t, http.MethodPatch, pbase+"/groups/"+gid, `{"description":null,"name":"Core services"}`, http.StatusOK).Result()
	if patched["description"] != nil || patched["name"] != "Core services" {
		t.Fatalf("group patch: %v", patched)
	}
	h.spCall(t, http.MethodPatch, pbase+"/components/"+c, map[string]any{"group_id": gid}, http.StatusOK)

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"group: name required", "POST", pbase + "/groups", `{"description":"x"}`, 400},
		{"group: empty name", "PATCH", pbase + "/groups/" + gid, `{"name":""}`, 400},
		{"group: unknown", "GET", pbase + "/groups/" + uuid.NewString(), nil, 404},
		{"group: short id", "GET", pbase + "/groups/abc", nil, 400},
		{"components: exactly the ungrouped ones", "PUT", pbase + "/components/sort-order", map[string]any{"component_ids": []string{b, a}}, 200},
		{"components: missing one", "PUT", pbase + "/components/sort-order", map[string]any{"component_ids": []string{b}}, 400},
		{"components: a grouped one", "PUT", pbase + "/components/sort-order", map[string]any{"component_ids": []string{b, a, c}}, 400},
		{"components: unknown id", "PUT", pbase + "/components/sort-order", map[string]any{"component_ids": []string{b, a, uuid.NewString()}}, 400},
		{"components: duplicate", "PUT", pbase + "/components/sort-order", map[string]any{"component_ids": []string{b, b, a}}, 400},
		{"components: body required", "PUT", pbase + "/components/sort-order", `{}`, 400},
		{"groups: all of them", "PUT", pbase + "/groups/sort-order", map[string]any{"group_ids": []string{g2id, gid}}, 200},
		{"groups: missing one", "PUT", pbase + "/groups/sort-order", map[string]any{"group_ids": []string{gid}}, 400},
		{"group components: exactly its own", "PUT", pbase + "/groups/" + gid + "/sort-order", map[string]any{"component_ids": []string{c}}, 200},
		{"group components: not a member", "PUT", pbase + "/groups/" + gid + "/sort-order", map[string]any{"component_ids": []string{a}}, 400},
		{"group components: unknown group", "PUT", pbase + "/groups/" + uuid.NewString() + "/sort-order", map[string]any{"component_ids": []string{}}, 404},
		{"other org: sort", "PUT", pbase + "/groups/sort-order", map[string]any{"group_ids": []string{g2id, gid}}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := h.tokenA
			if strings.HasPrefix(tc.name, "other org") {
				token = h.tokenB
			}
			expectStatus(t, h.do(tc.method, tc.path, token, tc.body), tc.status)
		})
	}
	order := h.spCall(t, http.MethodPut, pbase+"/components/sort-order", map[string]any{"component_ids": []string{b, a}}, 200)
	golden(t, "status_page_sort_order", order.Raw)
	list := h.spCall(t, http.MethodGet, pbase+"/components", nil, 200).Items()
	var names []string
	for _, it := range list {
		names = append(names, it["name"].(string))
	}
	if strings.Join(names, ",") != "B,A,C" {
		t.Fatalf("component order %v, want B,A,C (ungrouped first, then groups)", names)
	}
	groups := h.spCall(t, http.MethodGet, pbase+"/groups", nil, 200).Items()
	if groups[0]["id"] != g2id || groups[0]["sort_order"] != float64(0) {
		t.Fatalf("group order: %v", groups)
	}

	// Deleting a group ungroups its components, appended after the ungrouped ones.
	h.spCall(t, http.MethodDelete, pbase+"/groups/"+gid, nil, 200)
	comp := h.spCall(t, http.MethodGet, pbase+"/components/"+c, nil, 200).Result()
	if comp["group_id"] != nil || comp["sort_order"] != float64(2) {
		t.Fatalf("after group delete: %v", comp)
	}
	for _, a := range []string{"status_page_component_group.created", "status_page_component_group.updated", "status_page_component_group.deleted",
		"status_page.components_sorted", "status_page.groups_sorted", "status_page_component_group.components_sorted"} {
		if h.auditCount(t, a) == 0 {
			t.Errorf("no %s audit event", a)
		}
	}
}
