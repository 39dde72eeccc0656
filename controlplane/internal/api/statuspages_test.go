package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// statusPages is the status pages' domain over st with the clock now (nil: time.Now), built as
// serve.go builds it.
func statusPages(t testing.TB, st *store.Store, now func() time.Time) *statuspage.Service {
	t.Helper()
	sp, err := statuspage.New(statuspage.Config{}, statuspage.Deps{Store: st, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// spCall sends a request as org A and checks the status; it returns the response.
func (h *harness) spCall(t *testing.T, method, path string, body any, status int) response {
	t.Helper()
	r := h.do(method, path, h.tokenA, body)
	expectStatus(t, r, status)
	return r
}

// newPage creates a status page in org A and returns its id.
func (h *harness) newPage(t *testing.T, subdomain string) string {
	t.Helper()
	r := h.spCall(t, http.MethodPost, "/v1/status_pages", map[string]any{"name": "Acme " + subdomain, "subdomain": subdomain}, http.StatusCreated)
	return r.Result()["id"].(string)
}

// newComponent creates a component on page and returns its id.
func (h *harness) newComponent(t *testing.T, page, name string) string {
	t.Helper()
	r := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/components", map[string]any{"name": name}, http.StatusCreated)
	return r.Result()["id"].(string)
}

// auditCount counts audit events of org A with the given action.
func (h *harness) auditCount(t *testing.T, action string) int {
	t.Helper()
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE org_id = $1 AND audit_action = $2`, h.orgA, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStatusPageCRUD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := "/v1/status_pages"

	created := h.spCall(t, http.MethodPost, base, map[string]any{"name": "Acme", "subdomain": "acme",
		"custom_domain": "https://Status.Example.com/path", "description": "Our services", "hide_from_search_engines": true}, http.StatusCreated)
	golden(t, "status_page_create", created.Raw)
	id := created.Result()["id"].(string)
	if got := created.Result()["custom_domain"]; got != "status.example.com" {
		t.Fatalf("custom_domain %v, want the host only", got)
	}
	// Only a verified domain is exclusive (TestCustomDomainUnverifiedClaimsCoexist): verify it.
	if _, err := h.st.Pool().Exec(context.Background(), `UPDATE status_pages SET custom_domain_verified_at = now() WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"name required", `{"subdomain":"x1"}`, 400, "name: is required"},
		{"subdomain required", `{"name":"x"}`, 400, "subdomain: is required"},
		{"empty name", `{"name":"","subdomain":"x1"}`, 400, "name: must be 1 to 100"},
		{"long name", map[string]any{"name": strings.Repeat("n", 101), "subdomain": "x1"}, 400, "name: must be 1 to 100"},
		{"subdomain starting with hyphen", `{"name":"x","subdomain":"-x"}`, 400, "subdomain:"},
		{"subdomain too long", map[string]any{"name": "x", "subdomain": strings.Repeat("a", 64)}, 400, "subdomain:"},
		{"subdomain with dot", `{"name":"x","subdomain":"a.b"}`, 400, "subdomain:"},
		{"bad custom domain", `{"name":"x","subdomain":"x1","custom_domain":"ftp://x.example.com"}`, 400, "custom_domain:"},
		{"password too long", map[string]any{"name": "x", "subdomain": "x1", "password": strings.Repeat("p", 4097)}, 400, "password: must be at most 4096"},
		{"bad allowed ip", `{"name":"x","subdomain":"x1","allowed_ips":["10.0.0.0/8","nope"]}`, 400, "allowed_ips:"},
		{"unknown property", `{"name":"x","subdomain":"x1","theme":"dark"}`, 400, "theme: unknown property"},
		{"subdomain taken", `{"name":"x","subdomain":"ACME"}`, 409, "subdomain"},
		{"custom domain verified elsewhere", `{"name":"x","subdomain":"x2","custom_domain":"status.example.com"}`, 409, "custom_domain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, base, h.tokenA, tc.body)
			expectStatus(t, r, tc.status)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}

	got := h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK)
	golden(t, "status_page_get", got.Raw)
	list := h.spCall(t, http.MethodGet, base+"?search=acm", nil, http.StatusOK)
	golden(t, "status_page_list", list.Raw)

	// Update: POST (the contract) and PATCH (the Terraform provider) on the item path.
	upd := h.spCall(t, http.MethodPost, base+"/"+id, map[string]any{"name": "Acme Inc", "subdomain": "acme-inc", "password": "s3cret"}, http.StatusOK)
	golden(t, "status_page_update", upd.Raw)
	page := h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK).Result()
	if page["has_password"] != true || page["description"] != "Our services" || page["hide_from_search_engines"] != true || page["custom_domain"] != "status.example.com" {
		t.Fatalf("update lost fields it did not name, or did not set the password: %v", page)
	}
	h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"name": "Acme", "subdomain": "acme", "password": nil, "allowed_ips": []string{"192.0.2.1/24"}}, http.StatusOK)
	page = h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK).Result()
	if page["has_password"] != false || page["allowed_ips"].([]any)[0] != "192.0.2.0/24" {
		t.Fatalf("PATCH did not clear the password or set allowed_ips: %v", page)
	}
	h.spCall(t, http.MethodPatch, base+"/"+id, `{"name":"Acme","subdomain":"acme","allowed_ips":null}`, http.StatusOK)
	if page = h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK).Result(); page["allowed_ips"] != nil {
		t.Fatalf("allowed_ips null should lift the restriction: %v", page)
	}
	r := h.do(http.MethodPost, base+"/"+id, h.tokenA, map[string]any{"name": "only name"})
	expectStatus(t, r, http.StatusBadRequest)

	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"short id", "GET", base + "/1234567", h.tokenA, nil, 400},
		{"unknown id", "GET", base + "/12345678", h.tokenA, nil, 404},
		{"other organization get", "GET", base + "/" + id, h.tokenB, nil, 404},
		{"other organization update", "POST", base + "/" + id, h.tokenB, `{"name":"x","subdomain":"zz"}`, 404},
		{"other organization delete", "DELETE", base + "/" + id, h.tokenB, nil, 404},
		{"no credentials", "GET", base, "", nil, 401},
		{"read-only token cannot create", "POST", base, h.token(h.orgA, "STATUS_PAGES:READ"), `{"name":"x","subdomain":"ro"}`, 403},
		{"other area token", "GET", base, h.token(h.orgA, "UPTIME_CHECKS:EDIT"), nil, 403},
		{"read token lists", "GET", base, h.token(h.orgA, "STATUS_PAGES:READ"), nil, 200},
		{"bad page", "GET", base + "?page=0", h.tokenA, nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectStatus(t, h.do(tc.method, tc.path, tc.token, tc.body), tc.status)
		})
	}
	if n := len(h.do(http.MethodGet, base, h.tokenB, nil).Items()); n != 0 {
		t.Fatalf("org B sees %d pages of org A", n)
	}

	h.spCall(t, http.MethodDelete, base+"/"+id, nil, http.StatusOK)
	h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusNotFound)
	for _, action := range []string{"status_page.created", "status_page.updated", "status_page.deleted"} {
		if h.auditCount(t, action) == 0 {
			t.Errorf("no %s audit event", action)
		}
	}
}

func TestStatusPageSummary(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "public")
	api := h.newComponent(t, page, "API")
	web := h.newComponent(t, page, "Web")

	r := h.spCall(t, http.MethodGet, "/v1/status_pages/public/summary", nil, http.StatusOK)
	if r.Result()["status"].(map[string]any)["description"] != "All Systems Operational" {
		t.Fatalf("summary: %s", r.Raw)
	}
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+web, map[string]any{"status": "DEGRADED_PERFORMANCE"}, http.StatusOK)
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "API down", "description": "Looking",
		"status": "INVESTIGATING", "components": []map[string]any{{"id": api, "status": "PARTIAL_OUTAGE"}}}, http.StatusCreated)

	// No credentials at all, and the subdomain is matched case-insensitively.
	r = h.do(http.MethodGet, "/v1/status_pages/PUBLIC/summary", "", nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "status_page_summary", r.Raw)
	if got := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page, nil, 200).Result()["status"]; got != "MINOR_SERVICE_OUTAGE" {
		t.Fatalf("page status %v, want MINOR_SERVICE_OUTAGE", got)
	}

	private := h.newPage(t, "private")
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+private, map[string]any{"name": "P", "subdomain": "private", "password": "pw"}, 200)
	restricted := h.newPage(t, "restricted")
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+restricted, map[string]any{"name": "R", "subdomain": "restricted", "allowed_ips": []string{"10.0.0.1"}}, 200)
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"unknown page", "/v1/status_pages/nosuchpage/summary", 404},
		{"password-protected page", "/v1/status_pages/private/summary", 404},
		{"IP-restricted page", "/v1/status_pages/restricted/summary", 404},
		{"invalid subdomain", "/v1/status_pages/-bad-/summary", 404},
	} {
		t.Run(tc.name, func(t *testing.T) { expectStatus(t, h.do(http.MethodGet, tc.path, "", nil), tc.status) })
	}
	// The authenticated routes beside the public one still need credentials.
	expectStatus(t, h.do(http.MethodGet, "/v1/status_pages/"+page+"/components", "", nil), http.StatusUnauthorized)
	expectStatus(t, h.do(http.MethodGet, "/v1/status_pages/"+page, "", nil), http.StatusUnauthorized)
}

func TestStatusPagePermissionsByMethod(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "perm")
	read := h.token(h.orgA, "STATUS_PAGES:READ")
	edit := h.token(h.orgA, "STATUS_PAGES:EDIT")
	expectStatus(t, h.do(http.MethodGet, "/v1/status_pages/"+page+"/incidents", read, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodPost, "/v1/status_pages/"+page+"/components", read, `{"name":"x"}`), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodPost, "/v1/status_pages/"+page+"/components", edit, `{"name":"x"}`), http.StatusCreated)
	expectStatus(t, h.do(http.MethodGet, "/v1/status_pages/"+page+"/groups", edit, nil), http.StatusOK)
	_ = auth.StatusPages
}
