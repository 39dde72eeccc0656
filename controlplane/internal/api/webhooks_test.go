package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
)

// webhookTestCheck creates an uptime check in the organization of token and returns its id.
func (h *harness) webhookTestCheck(token, name string) string {
	h.t.Helper()
	r := h.do(http.MethodPost, "/v1/checks", token, `{"name":"`+name+`","url":"https://example.com/`+name+`"}`)
	expectStatus(h.t, r, http.StatusCreated)
	return r.Result()["id"].(string)
}

var webhookSecretPattern = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)

// webhookGolden is golden with the random secret replaced.
func webhookGolden(t *testing.T, name string, raw []byte) {
	t.Helper()
	golden(t, name, webhookSecretPattern.ReplaceAll(raw, []byte("whsec_SECRET")))
}

func TestWebhookCreateValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := h.webhookTestCheck(h.tokenA, "validation")
	expectStatus(t, h.do(http.MethodPost, "/v1/env", h.tokenA, `{"name":"HOOK_HOST","type":"config","value":"hooks.example.com"}`), http.StatusCreated)
	expectStatus(t, h.do(http.MethodPost, "/v1/env", h.tokenA, `{"name":"HOOK_PATH","type":"secret","value":"not a host"}`), http.StatusCreated)
	foreign := h.webhookTestCheck(h.tokenB, "foreign")
	missing := uuid.NewString()
	assoc := `"check_ids":["` + checkID + `"]`
	cases := []struct {
		name, body, want string
	}{
		{"no body", ``, "request body is required"},
		{"not an object", `[]`, "must be a JSON object"},
		{"url missing", `{"events":["uptime.down"],` + assoc + `}`, "url: is required"},
		{"url null", `{"url":null,"events":["uptime.down"],` + assoc + `}`, "url: is required"},
		{"url not a string", `{"url":5,"events":["uptime.down"],` + assoc + `}`, "url: must be a string"},
		{"url relative", `{"url":"/hook","events":["uptime.down"],` + assoc + `}`, "url: must be an absolute http(s) URL"},
		{"url ftp", `{"url":"ftp://example.com/x","events":["uptime.down"],` + assoc + `}`, "url: must be an absolute http(s) URL"},
		{"url too long", `{"url":"https://example.com/` + strings.Repeat("a", 2048) + `","events":["uptime.down"],` + assoc + `}`, "url: must be at most 2048 characters"},
		{"url unknown variable", `{"url":"https://{{NOPE}}/x","events":["uptime.down"],` + assoc + `}`, "{{NOPE}}, which is not an environment variable"},
		{"url invalid once substituted", `{"url":"https://{{HOOK_PATH}}/x","events":["uptime.down"],` + assoc + `}`, "once its variables are substituted"},
		{"events missing", `{"url":"https://example.com",` + assoc + `}`, "events: is required"},
		{"events empty", `{"url":"https://example.com","events":[],` + assoc + `}`, "events: must have at least 1 item"},
		{"events unknown", `{"url":"https://example.com","events":["uptime.sideways"],` + assoc + `}`, `"uptime.sideways" is not an event type`},
		{"events not strings", `{"url":"https://example.com","events":[1],` + assoc + `}`, "events: must be an array of strings"},
		{"description too long", `{"url":"https://example.com","description":"` + strings.Repeat("d", 1025) + `","events":["uptime.up"],` + assoc + `}`, "description: must be at most 1024 characters"},
		{"no association", `{"url":"https://example.com","events":["uptime.up"]}`, "at least one of status_page_ids, check_ids and heartbeat_ids"},
		{"only empty associations", `{"url":"https://example.com","events":["uptime.up"],"check_ids":[],"status_page_ids":[],"heartbeat_ids":null}`, "at least one of"},
		{"unknown check", `{"url":"https://example.com","events":["uptime.up"],"check_ids":["` + missing + `"]}`, "check_ids: unknown check " + missing},
		{"check of another organization", `{"url":"https://example.com","events":["uptime.up"],"check_ids":["` + foreign + `"]}`, "check_ids: unknown check " + foreign},
		{"check id not a uuid", `{"url":"https://example.com","events":["uptime.up"],"check_ids":["chk_1"]}`, "check_ids: unknown check chk_1"},
		{"unknown status page", `{"url":"https://example.com","events":["status_page.incident.started"],"status_page_ids":["` + missing + `"]}`, "status_page_ids: unknown status page " + missing},
		{"unknown heartbeat", `{"url":"https://example.com","events":["heartbeat.down"],"heartbeat_ids":["` + missing + `"]}`, "heartbeat_ids: unknown heartbeat " + missing},
		{"unknown property", `{"url":"https://example.com","events":["uptime.up"],` + assoc + `,"secret":"whsec_x"}`, "secret: unknown property"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, tc.body)
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}
	r := h.do(http.MethodGet, "/v1/webhooks", h.tokenA, nil)
	if n := r.Body["result_info"].(map[string]any)["total_count"]; n != 0.0 {
		t.Fatalf("a refused create stored a webhook: total %v", n)
	}
}

func TestWebhookLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := h.webhookTestCheck(h.tokenA, "api")
	other := h.webhookTestCheck(h.tokenA, "www")
	expectStatus(t, h.do(http.MethodPost, "/v1/env", h.tokenA, `{"name":"HOOK_TOKEN","type":"secret","value":"s3cr3t"}`), http.StatusCreated)

	created := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, `{"url":"https://hooks.example.com/in/{{HOOK_TOKEN}}",
		"description":"Ops channel","events":["uptime.down","uptime.up","uptime.down"],"check_ids":["`+checkID+`","`+checkID+`"]}`)
	expectStatus(t, created, http.StatusCreated)
	res := created.Result()
	id := res["id"].(string)
	if s, _ := res["secret"].(string); !regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{32}$`).MatchString(s) {
		t.Fatalf("secret %q", res["secret"])
	}
	if res["url"] != "https://hooks.example.com/in/{{HOOK_TOKEN}}" {
		t.Fatalf("the URL template must be stored unresolved: %v", res["url"])
	}
	webhookGolden(t, "webhook_create", created.Raw)

	got := h.do(http.MethodGet, "/v1/webhooks/"+id, h.tokenA, nil)
	expectStatus(t, got, http.StatusOK)
	if _, leaked := got.Result()["secret"]; leaked {
		t.Fatal("GET returns the secret")
	}
	webhookGolden(t, "webhook_get", got.Raw)

	patched := h.do(http.MethodPatch, "/v1/webhooks/"+id, h.tokenA, `{"description":null,"events":["uptime.up"],"check_ids":["`+other+`","`+checkID+`"]}`)
	expectStatus(t, patched, http.StatusOK)
	webhookGolden(t, "webhook_update", patched.Raw)
	if p := patched.Result(); p["description"] != nil || len(p["checks"].([]any)) != 2 {
		t.Fatalf("patched %v", p)
	}

	expectStatus(t, h.do(http.MethodPost, "/v1/webhooks", h.tokenA, `{"url":"https://b.example.com","events":["uptime.down"],"check_ids":["`+other+`"]}`), http.StatusCreated)
	list := h.do(http.MethodGet, "/v1/webhooks?per_page=1", h.tokenA, nil)
	expectStatus(t, list, http.StatusOK)
	webhookGolden(t, "webhook_list", list.Raw)
	search := h.do(http.MethodGet, "/v1/webhooks?search=HOOKS.EXAMPLE", h.tokenA, nil)
	if items := search.Items(); len(items) != 1 || items[0]["id"] != id {
		t.Fatalf("search: %s", search.Raw)
	}

	// A deleted check leaves the association.
	expectStatus(t, h.do(http.MethodDelete, "/v1/checks/"+other, h.tokenA, nil), http.StatusOK)
	if checks := h.do(http.MethodGet, "/v1/webhooks/"+id, h.tokenA, nil).Result()["checks"].([]any); len(checks) != 1 {
		t.Fatalf("checks after deleting one: %v", checks)
	}

	del := h.do(http.MethodDelete, "/v1/webhooks/"+id, h.tokenA, nil)
	expectStatus(t, del, http.StatusOK)
	webhookGolden(t, "webhook_delete", del.Raw)
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks/"+id, h.tokenA, nil), http.StatusNotFound)

	var actions []string
	rows, err := h.st.Pool().Query(context.Background(), `SELECT audit_action FROM audit_events
		WHERE org_id = $1 AND auditable_type = 'Webhook' AND auditable_id = $2 ORDER BY created_at, id`, h.orgA, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		actions = append(actions, a)
	}
	if strings.Join(actions, ",") != "webhook.created,webhook.updated,webhook.deleted" {
		t.Fatalf("audit: %v", actions)
	}
}

func TestWebhookUpdateValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := h.webhookTestCheck(h.tokenA, "u")
	r := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, `{"url":"https://example.com","events":["uptime.down"],"check_ids":["`+checkID+`"]}`)
	expectStatus(t, r, http.StatusCreated)
	path := "/v1/webhooks/" + r.Result()["id"].(string)
	cases := []struct{ name, body, want string }{
		{"empty body", `{}`, "must change at least one field"},
		{"events empty", `{"events":[]}`, "events: must have at least 1 item"},
		{"events null", `{"events":null}`, "events: must be an array of strings, not null"},
		{"url null", `{"url":null}`, "url: must be a string, not null"},
		{"url invalid", `{"url":"example.com"}`, "url: must be an absolute http(s) URL"},
		{"last association removed", `{"check_ids":[]}`, "at least one status page, check or heartbeat"},
		{"unknown check", `{"check_ids":["` + uuid.NewString() + `"]}`, "unknown check"},
		{"unknown property", `{"events":["uptime.up"],"enabled":true}`, "enabled: unknown property"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPatch, path, h.tokenA, tc.body)
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}
	if got := h.do(http.MethodGet, path, h.tokenA, nil).Result(); len(got["checks"].([]any)) != 1 || len(got["events"].([]any)) != 1 {
		t.Fatalf("a refused update changed the webhook: %v", got)
	}
}

func TestWebhookPlanPermissionsAndIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := h.webhookTestCheck(h.tokenA, "iso")
	body := `{"url":"https://example.com","events":["uptime.down"],"check_ids":["` + checkID + `"]}`
	created := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, body)
	expectStatus(t, created, http.StatusCreated)
	id := created.Result()["id"].(string)

	free := h.do(http.MethodPost, "/v1/webhooks", h.tokenB, `{"url":"https://example.com","events":["uptime.down"],"check_ids":["`+h.webhookTestCheck(h.tokenB, "free")+`"]}`)
	expectStatus(t, free, http.StatusForbidden)
	if !strings.Contains(free.FirstError(), "paid plan") {
		t.Fatalf("free plan: %s", free.Raw)
	}
	golden(t, "webhook_free_plan", free.Raw)

	paid, err := h.st.CreateOrganization(context.Background(), "Org C", "paid")
	if err != nil {
		t.Fatal(err)
	}
	tokenC := h.token(paid.ID, auth.AllGrants()...)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/v1/webhooks/" + id},
		{http.MethodPatch, "/v1/webhooks/" + id},
		{http.MethodDelete, "/v1/webhooks/" + id},
		{http.MethodGet, "/v1/webhooks/" + id + "/deliveries"},
		{http.MethodPost, "/v1/webhooks/" + id + "/deliveries/" + uuid.NewString() + "/resend"},
	} {
		r := h.do(tc.method, tc.path, tokenC, `{"description":"x"}`)
		expectStatus(t, r, http.StatusNotFound)
	}
	if items := h.do(http.MethodGet, "/v1/webhooks", tokenC, nil).Items(); len(items) != 0 {
		t.Fatalf("another organization lists %v", items)
	}

	read := h.token(h.orgA, "WEBHOOKS:READ")
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks/"+id, read, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodPatch, "/v1/webhooks/"+id, read, `{"description":"x"}`), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodPost, "/v1/webhooks", read, body), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks", h.token(h.orgA, "UPTIME_CHECKS:EDIT"), nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks", "", nil), http.StatusUnauthorized)
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks/short", h.tokenA, nil), http.StatusBadRequest)
	expectStatus(t, h.do(http.MethodGet, "/v1/webhooks/not-a-uuid-at-all", h.tokenA, nil), http.StatusNotFound)
}

// insertWebhookDelivery writes a delivery as the notifier would, with its attempts.
func (h *harness) insertWebhookDelivery(webhookID, status string, codes ...int) string {
	h.t.Helper()
	ctx := context.Background()
	id, event := uuid.New(), uuid.New()
	now := time.Now()
	_, err := h.st.Pool().Exec(ctx, `INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, webhook_id,
		status, attempts, tries, next_attempt_at, last_status_code, created_at)
		VALUES ($1, $2, $3, 'uptime.down', 'webhook', $4, $4, $5, $6, $6, $7, $8, $7)`,
		id, h.orgA, event, webhookID, status, len(codes), now, codes[len(codes)-1])
	if err != nil {
		h.t.Fatal(err)
	}
	for i, code := range codes {
		var errText *string
		if code >= 300 {
			s := fmt.Sprintf("the receiver answered HTTP %d", code)
			errText = &s
		}
		if _, err := h.st.Pool().Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, number, attempted_at, latency_ms, status_code, error)
			VALUES ($1, $2, $3, 12.5, $4, $5)`, id, i+1, now.Add(time.Duration(i)*time.Second), code, errText); err != nil {
			h.t.Fatal(err)
		}
	}
	return id.String()
}

func TestWebhookDeliveriesAndResend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := h.webhookTestCheck(h.tokenA, "deliv")
	created := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, `{"url":"https://example.com","events":["uptime.down"],"check_ids":["`+checkID+`"]}`)
	id := created.Result()["id"].(string)
	failed := h.insertWebhookDelivery(id, "FAILED", 500, 500)
	pending := h.insertWebhookDelivery(id, "PENDING", 503)

	list := h.do(http.MethodGet, "/v1/webhooks/"+id+"/deliveries", h.tokenA, nil)
	expectStatus(t, list, http.StatusOK)
	items := list.Items()
	if len(items) != 2 || len(items[1]["attempts"].([]any))+len(items[0]["attempts"].([]any)) != 3 {
		t.Fatalf("deliveries: %s", list.Raw)
	}
	golden(t, "webhook_deliveries", list.Raw)

	r := h.do(http.MethodPost, "/v1/webhooks/"+id+"/deliveries/"+failed+"/resend", h.tokenA, nil)
	expectStatus(t, r, http.StatusAccepted)
	if res := r.Result(); res["status"] != "PENDING" || res["next_attempt_at"] == nil || res["attempt_count"] != 2.0 {
		t.Fatalf("resent: %s", r.Raw)
	}
	r = h.do(http.MethodPost, "/v1/webhooks/"+id+"/deliveries/"+pending+"/resend", h.tokenA, nil)
	expectStatus(t, r, http.StatusConflict)
	r = h.do(http.MethodPost, "/v1/webhooks/"+id+"/deliveries/"+uuid.NewString()+"/resend", h.tokenA, nil)
	expectStatus(t, r, http.StatusNotFound)
	if r.FirstError() != "delivery not found" {
		t.Fatalf("not found: %s", r.Raw)
	}

	for _, c := range []struct {
		method, route, path, body string
		status                    int
	}{
		{"get", "/v1/webhooks", "/v1/webhooks", "", 200},
		{"get", "/v1/webhooks/{webhook_id}", "/v1/webhooks/" + id, "", 200},
		{"patch", "/v1/webhooks/{webhook_id}", "/v1/webhooks/" + id, `{"description":"d"}`, 200},
		{"patch", "/v1/webhooks/{webhook_id}", "/v1/webhooks/" + id, `{"events":[]}`, 400},
		{"post", "/v1/webhooks", "/v1/webhooks", `{"url":"x"}`, 400},
		{"delete", "/v1/webhooks/{webhook_id}", "/v1/webhooks/" + id, "", 200},
		{"get", "/v1/webhooks/{webhook_id}", "/v1/webhooks/" + id, "", 404},
		{"get", "/v1/webhooks/{webhook_id}/deliveries", "/v1/webhooks/" + id + "/deliveries", "", 404},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		r := h.do(strings.ToUpper(c.method), c.path, h.tokenA, body)
		expectStatus(t, r, c.status)
	}
}

func TestWebhookHeartbeatAndStatusPageAssociations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	hb, page := uuid.New(), uuid.New()
	if _, err := h.st.Pool().Exec(ctx, `INSERT INTO heartbeats (id, org_id, name, grace_period, report_period) VALUES ($1, $2, 'nightly', 300, 3600)`, hb, h.orgA); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Pool().Exec(ctx, `INSERT INTO status_pages (id, org_id, name, subdomain) VALUES ($1, $2, 'Public', 'public-a')`, page, h.orgA); err != nil {
		t.Fatal(err)
	}
	r := h.do(http.MethodPost, "/v1/webhooks", h.tokenA, `{"url":"https://example.com","events":["heartbeat.down","status_page.incident.resolved"],
		"heartbeat_ids":["`+hb.String()+`"],"status_page_ids":["`+page.String()+`"]}`)
	expectStatus(t, r, http.StatusCreated)
	res := r.Result()
	if hbs := res["heartbeats"].([]any); len(hbs) != 1 || hbs[0].(map[string]any)["name"] != "nightly" || hbs[0].(map[string]any)["id"] != hb.String() {
		t.Fatalf("heartbeats %v", res["heartbeats"])
	}
	if pages := res["status_pages"].([]any); len(pages) != 1 || pages[0].(map[string]any)["name"] != "Public" {
		t.Fatalf("status pages %v", res["status_pages"])
	}
	// Another organization cannot associate them.
	paid, err := h.st.CreateOrganization(ctx, "Org C", "paid")
	if err != nil {
		t.Fatal(err)
	}
	r = h.do(http.MethodPost, "/v1/webhooks", h.token(paid.ID, auth.AllGrants()...), `{"url":"https://example.com","events":["heartbeat.down"],"heartbeat_ids":["`+hb.String()+`"]}`)
	expectStatus(t, r, http.StatusBadRequest)
}

func TestRenderCheckForWebhookHidesPassword(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do(http.MethodPost, "/v1/checks/uptime", h.tokenA, `{"name":"auth","url":"https://example.com","auth_username":"u","auth_password":"p4ss"}`)
	expectStatus(t, r, http.StatusCreated)
	id, _ := uuid.Parse(r.Result()["id"].(string))
	c, err := h.st.GetCheck(context.Background(), h.orgA, id, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(RenderCheckForWebhook(c))
	var got map[string]any
	_ = json.Unmarshal(raw, &got)
	if got["id"] != id.String() || got["auth_username"] != "u" || got["auth_password"] != nil || got["check_type"] != "UPTIME" {
		t.Fatalf("rendered %s", raw)
	}
}
