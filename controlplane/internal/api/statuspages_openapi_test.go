package api

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestOpenAPIDescribesStatusPageResponses makes the status page operations answer with their
// documented statuses; the harness validates every answer against the document.
func TestOpenAPIDescribesStatusPageResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := func(method, route, path, token string, body any, status int) map[string]any {
		t.Helper()
		r := h.do(strings.ToUpper(method), path, token, body)
		expectStatus(t, r, status)
		return r.Result()
	}
	a := h.tokenA
	const B = "/v1/status_pages"
	const P = B + "/{status_page_id}"
	page := call("post", B, B, a, `{"name":"Docs","subdomain":"docs","custom_domain":"https://status.docs.example"}`, 201)["id"].(string)
	pp := B + "/" + page
	call("get", B, B, a, nil, 200)
	call("get", P, pp, a, nil, 200)
	call("post", P, pp, a, `{"name":"Docs","subdomain":"docs","description":"d"}`, 200)
	call("patch", P, pp, a, `{"name":"Docs","subdomain":"docs"}`, 200)
	call("post", B, B, a, `{"name":"Docs","subdomain":"docs"}`, 409)
	call("get", P, B+"/short", a, nil, 400)
	call("get", P, pp, "", nil, 401)
	call("get", P, pp, h.token(h.orgA), nil, 403)
	call("get", P, B+"/"+uuid.NewString(), a, nil, 404)

	comp := call("post", P+"/components", pp+"/components", a, `{"name":"API"}`, 201)["id"].(string)
	pc := pp + "/components/" + comp
	call("get", P+"/components", pp+"/components", a, nil, 200)
	call("get", P+"/components/{status_page_component_id}", pc, a, nil, 200)
	group := call("post", P+"/groups", pp+"/groups", a, `{"name":"Core"}`, 201)["id"].(string)
	pg := pp + "/groups/" + group
	call("patch", P+"/components/{status_page_component_id}", pc, a, `{"group_id":"`+group+`"}`, 200)
	call("get", P+"/groups", pp+"/groups", a, nil, 200)
	call("get", P+"/groups/{group_id}", pg, a, nil, 200)
	call("patch", P+"/groups/{group_id}", pg, a, `{"description":"core"}`, 200)
	call("put", P+"/groups/sort-order", pp+"/groups/sort-order", a, `{"group_ids":["`+group+`"]}`, 200)
	call("put", P+"/groups/{group_id}/sort-order", pg+"/sort-order", a, `{"component_ids":["`+comp+`"]}`, 200)
	call("put", P+"/components/sort-order", pp+"/components/sort-order", a, `{"component_ids":[]}`, 200)
	call("put", P+"/components/sort-order", pp+"/components/sort-order", a, `{"component_ids":["`+comp+`"]}`, 400)

	inc := call("post", P+"/incidents", pp+"/incidents", a, `{"title":"Down","description":"d","status":"INVESTIGATING","components":[{"id":"`+comp+`","status":"MAJOR_OUTAGE"}]}`, 201)["id"].(string)
	pi := pp + "/incidents/" + inc
	const I = P + "/incidents/{status_page_incident_id}"
	call("get", P+"/incidents", pp+"/incidents", a, nil, 200)
	call("get", I, pi, a, nil, 200)
	call("patch", I, pi, a, `{"title":"Down","impact":"MAJOR_OUTAGE"}`, 200)
	upd := call("post", I+"/updates", pi+"/updates", a, `{"status":"RESOLVED","description":"ok","components_affected":[{"id":"`+comp+`","status":"OPERATIONAL"}]}`, 201)["id"].(string)
	call("get", I+"/updates", pi+"/updates", a, nil, 200)
	call("get", I+"/updates/{incident_update_id}", pi+"/updates/"+upd, a, nil, 200)
	call("patch", I+"/updates/{incident_update_id}", pi+"/updates/"+upd, a, `{"description":"fixed"}`, 200)
	call("delete", I+"/updates/{incident_update_id}", pi+"/updates/"+upd, a, nil, 200)

	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	m := call("post", P+"/scheduled_maintenance", pp+"/scheduled_maintenance", a, `{"title":"M","description":"d","start_date":"`+start+`","duration_minutes":5,"components_affected":["`+comp+`"]}`, 201)["id"].(string)
	pm := pp + "/scheduled_maintenance/" + m
	const M = P + "/scheduled_maintenance/{scheduled_maintenance_id}"
	call("get", M, pm, a, nil, 200)
	call("patch", M, pm, a, `{"duration_minutes":10}`, 200)
	call("get", P+"/incidents", pp+"/incidents", a, nil, 200)
	call("get", P+"/summary", B+"/docs/summary", "", nil, 200)
	call("get", P+"/summary", B+"/nope/summary", "", nil, 404)
	call("delete", M, pm, a, nil, 200)

	sub := call("post", P+"/subscribers", pp+"/subscribers", a, `{"email_address":"a@example.com"}`, 201)["id"].(string)
	call("post", P+"/subscribers", pp+"/subscribers", a, `{"email_address":"a@example.com"}`, 409)
	call("get", P+"/subscribers", pp+"/subscribers", a, nil, 200)
	call("get", P+"/subscribers", pp+"/subscribers", h.tokenB, nil, 403)
	call("delete", P+"/subscribers/{subscriber_id}", pp+"/subscribers/"+sub, a, nil, 200)

	call("delete", I, pi, a, nil, 200)
	call("delete", P+"/groups/{group_id}", pg, a, nil, 200)
	call("delete", P+"/components/{status_page_component_id}", pc, a, nil, 200)
	call("delete", P, pp, a, nil, 200)
}
