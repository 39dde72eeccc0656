package api

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// respKeys is the sorted field names of a JSON object.
func respKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func expectKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := respKeys(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: fields %v, want %v", what, got, want)
	}
}

// tokenBody is a create body with the given grants ("AREA:LEVEL").
func tokenBody(name string, grants ...string) map[string]any {
	gs := []map[string]any{}
	for _, g := range grants {
		a, l, _ := strings.Cut(g, ":")
		gs = append(gs, map[string]any{"scope": a, "permission": l})
	}
	return map[string]any{"name": name, "grants": gs}
}

func TestTokensLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := time.Now()

	r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody("deploy bot", "UPTIME_CHECKS:EDIT", "PEOPLE:READ"))
	expectStatus(t, r, http.StatusCreated)
	created := r.Result()
	expectKeys(t, "create", created, "id", "name", "expiresAfter", "createdAt", "token")
	secret, _ := created["token"].(string)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(secret, auth.SecretPrefix) || created["name"] != "deploy bot" {
		t.Fatalf("create: %s", r.Raw)
	}
	exp, err := time.Parse(time.RFC3339, created["expiresAfter"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(before); d < 364*24*time.Hour || d > 366*24*time.Hour {
		t.Fatalf("default expiry is %v away, want 365 days", d)
	}

	// The secret works, for what it grants only.
	r = h.do(http.MethodGet, "/v1/tokens/verify", secret, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["id"] != id || r.Result()["status"] != "active" {
		t.Fatalf("verify: %s", r.Raw)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs", secret, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", secret, nil), http.StatusForbidden)

	// get: the record, never the secret.
	r = h.do(http.MethodGet, "/v1/tokens/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	expectKeys(t, "get", r.Result(), "id", "name", "expiresAfter", "createdAt", "grants")
	want := []any{
		map[string]any{"scope": "UPTIME_CHECKS", "permission": "EDIT"},
		map[string]any{"scope": "PEOPLE", "permission": "READ"},
	}
	if !reflect.DeepEqual(r.Result()["grants"], want) {
		t.Fatalf("grants %v, want %v", r.Result()["grants"], want)
	}
	if r.Result()["createdAt"] != created["createdAt"] || r.Result()["expiresAfter"] != created["expiresAfter"] {
		t.Fatalf("get %s differs from create %v", r.Raw, created)
	}
	if strings.Contains(string(r.Raw), secret) {
		t.Fatal("get leaks the secret")
	}

	// list: the nested shape, newest first, no secret.
	r = h.do(http.MethodGet, "/v1/tokens", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if _, has := r.Body["result_info"]; has {
		t.Fatalf("token list must not have an outer result_info: %s", r.Raw)
	}
	res := r.Result()
	expectKeys(t, "list result", res, "result", "result_info")
	info := res["result_info"].(map[string]any)
	expectKeys(t, "list result_info", info, "page", "per_page", "total_count", "total_pages")
	if info["page"] != 1.0 || info["per_page"] != 10.0 || info["total_count"] != 2.0 || info["total_pages"] != 1.0 {
		t.Fatalf("result_info %v", info)
	}
	items := res["result"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["id"] != id {
		t.Fatalf("list is not newest first: %s", r.Raw)
	}
	for _, it := range items {
		expectKeys(t, "list item", it.(map[string]any), "id", "name", "expiresAfter", "createdAt", "grants")
	}
	if strings.Contains(string(r.Raw), secret) {
		t.Fatal("list leaks the secret")
	}
	golden(t, "tokens_list", r.Raw)

	// delete, then the token is gone and refused.
	r = h.do(http.MethodDelete, "/v1/tokens/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if !reflect.DeepEqual(r.Result(), map[string]any{"id": id, "deleted": true}) {
		t.Fatalf("delete: %s", r.Raw)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs", secret, nil), http.StatusUnauthorized)
	r = h.do(http.MethodGet, "/v1/tokens/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusNotFound)
	if r.FirstError() != "token not found" {
		t.Fatalf("message %q", r.FirstError())
	}
	expectStatus(t, h.do(http.MethodDelete, "/v1/tokens/"+id, h.tokenA, nil), http.StatusNotFound)
}

func TestTokensCreateValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	grants := `[{"scope":"WEBHOOKS","permission":"READ"}]`
	cases := []struct {
		name string
		body string
		want string // substring of the error text
	}{
		{"not an object", `[]`, "must be a JSON object"},
		{"empty body", ``, "request body is required"},
		{"broken JSON", `{"name":`, "not valid JSON"},
		{"name missing", `{"grants":` + grants + `}`, "name: is required"},
		{"name null", `{"name":null,"grants":` + grants + `}`, "name: is required"},
		{"name blank", `{"name":"  ","grants":` + grants + `}`, "name: must not be blank"},
		{"name too long", `{"name":"` + strings.Repeat("é", 256) + `","grants":` + grants + `}`, "name: must be at most 255 characters"},
		{"name with NUL", `{"name":"a\u0000b","grants":` + grants + `}`, "must not contain NUL characters"},
		{"name not a string", `{"name":5,"grants":` + grants + `}`, "name: must be a string"},
		{"grants missing", `{"name":"x"}`, "grants: is required"},
		{"grants empty", `{"name":"x","grants":[]}`, "grants: must hold at least one grant"},
		{"grants not an array", `{"name":"x","grants":"all"}`, "grants: must be an array of objects"},
		{"grant not an object", `{"name":"x","grants":["WEBHOOKS:READ"]}`, "grants[0]: must be an object"},
		{"unknown scope", `{"name":"x","grants":[{"scope":"BILLING","permission":"READ"}]}`, "grants[0].scope: must be one of UPTIME_CHECKS"},
		{"lower-case scope", `{"name":"x","grants":[{"scope":"webhooks","permission":"READ"}]}`, "grants[0].scope: must be one of"},
		{"bad permission", `{"name":"x","grants":[{"scope":"WEBHOOKS","permission":"WRITE"}]}`, "grants[0].permission: must be READ or EDIT"},
		{"permission missing", `{"name":"x","grants":[{"scope":"WEBHOOKS"}]}`, "grants[0].permission: is required"},
		{"grant extra field", `{"name":"x","grants":[{"scope":"WEBHOOKS","permission":"READ","org":"y"}]}`, "grants[0].org: unknown property"},
		{"duplicate scope", `{"name":"x","grants":[{"scope":"WEBHOOKS","permission":"READ"},{"scope":"WEBHOOKS","permission":"EDIT"}]}`, "grants[1].scope: WEBHOOKS is granted more than once"},
		{"unknown property", `{"name":"x","grants":` + grants + `,"expires_at":null}`, "expires_at: unknown property"},
		{"expiresAt in the past", `{"name":"x","grants":` + grants + `,"expiresAt":"2020-01-01T00:00:00Z"}`, "expiresAt: must be in the future"},
		{"expiresAt not a date", `{"name":"x","grants":` + grants + `,"expiresAt":"next year"}`, "expiresAt: must be an ISO 8601 date-time"},
		{"expiresAt without zone", `{"name":"x","grants":` + grants + `,"expiresAt":"2999-01-01T00:00:00"}`, "expiresAt: must be an ISO 8601 date-time"},
		{"expiresAt a number", `{"name":"x","grants":` + grants + `,"expiresAt":4102444800}`, "expiresAt: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tc.body)
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q do not mention %q", r.ErrorText(), tc.want)
			}
		})
	}

	// Several problems are reported at once, one errors[] item each.
	r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, `{"grants":[],"extra":1}`)
	expectStatus(t, r, http.StatusBadRequest)
	if n := len(r.Body["errors"].([]any)); n != 3 {
		t.Fatalf("%d errors, want 3 (name, grants, extra): %s", n, r.Raw)
	}
}

func TestTokensExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	grants := []map[string]any{{"scope": "WEBHOOKS", "permission": "READ"}}

	r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, map[string]any{"name": "forever", "grants": grants, "expiresAt": nil})
	expectStatus(t, r, http.StatusCreated)
	if v, has := r.Result()["expiresAfter"]; !has || v != nil {
		t.Fatalf("expiresAt null must never expire: %s", r.Raw)
	}
	r = h.do(http.MethodGet, "/v1/tokens/"+r.Result()["id"].(string), h.tokenA, nil)
	if v, has := r.Result()["expiresAfter"]; !has || v != nil {
		t.Fatalf("get: %s", r.Raw)
	}

	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
	r = h.do(http.MethodPost, "/v1/tokens", h.tokenA, map[string]any{"name": "two days", "grants": grants,
		"expiresAt": at.Format("2006-01-02T15:04:05.000-07:00")})
	expectStatus(t, r, http.StatusCreated)
	if r.Result()["expiresAfter"] != formatTime(at) {
		t.Fatalf("expiresAfter %v, want %s", r.Result()["expiresAfter"], formatTime(at))
	}
}

func TestTokensCannotGrantMoreThanCreator(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	creator := h.token(h.orgA, "API_TOKENS:EDIT", "WEBHOOKS:READ", "UPTIME_CHECKS:EDIT")
	cases := []struct {
		name   string
		grants []string
		want   int
		lacks  string
	}{
		{"same level", []string{"WEBHOOKS:READ"}, http.StatusCreated, ""},
		{"EDIT covers READ", []string{"UPTIME_CHECKS:READ", "API_TOKENS:READ"}, http.StatusCreated, ""},
		{"everything it holds", []string{"API_TOKENS:EDIT", "WEBHOOKS:READ", "UPTIME_CHECKS:EDIT"}, http.StatusCreated, ""},
		{"a higher level", []string{"WEBHOOKS:EDIT"}, http.StatusForbidden, "WEBHOOKS:EDIT"},
		{"an area it lacks", []string{"UPTIME_CHECKS:READ", "PEOPLE:READ", "PROJECTS:EDIT"}, http.StatusForbidden, "PEOPLE:READ, PROJECTS:EDIT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/tokens", creator, tokenBody(tc.name, tc.grants...))
			expectStatus(t, r, tc.want)
			if tc.lacks != "" && (!strings.Contains(r.FirstError(), "cannot grant more than its creator") ||
				!strings.HasSuffix(r.FirstError(), "lacks "+tc.lacks)) {
				t.Fatalf("message %q does not name %s", r.FirstError(), tc.lacks)
			}
		})
	}
}

func TestTokensListPagingAndSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 11 {
		r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody(fmt.Sprintf("Worker %02d", i), "WEBHOOKS:READ"))
		expectStatus(t, r, http.StatusCreated)
	}
	expectStatus(t, h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody("100%_done", "WEBHOOKS:READ")), http.StatusCreated)
	// orgA: 12 created + the harness token "test"; orgB's token never shows.

	list := func(query string) (names []string, info map[string]any) {
		t.Helper()
		r := h.do(http.MethodGet, "/v1/tokens"+query, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		for _, it := range r.Result()["result"].([]any) {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		return names, r.Result()["result_info"].(map[string]any)
	}
	names, info := list("")
	if len(names) != 10 || names[0] != "100%_done" || names[1] != "Worker 10" {
		t.Fatalf("first page %v", names)
	}
	if info["total_count"] != 13.0 || info["total_pages"] != 2.0 || info["per_page"] != 10.0 {
		t.Fatalf("result_info %v", info)
	}
	names, info = list("?page=2")
	if len(names) != 3 || names[2] != "test" || info["page"] != 2.0 {
		t.Fatalf("second page %v %v", names, info)
	}
	names, info = list("?per_page=5&page=3")
	if len(names) != 3 || info["total_pages"] != 3.0 {
		t.Fatalf("per_page=5 page 3: %v %v", names, info)
	}
	names, _ = list("?page=9")
	if len(names) != 0 {
		t.Fatalf("past the end: %v", names)
	}
	names, info = list("?search=WORKER%200")
	if len(names) != 10 || info["total_count"] != 10.0 {
		t.Fatalf("case-insensitive search: %v", names)
	}
	names, _ = list("?search=%25_")
	if !reflect.DeepEqual(names, []string{"100%_done"}) {
		t.Fatalf("search must match %%_ literally: %v", names)
	}
	names, _ = list("?search=nothing-like-this")
	if len(names) != 0 {
		t.Fatalf("no match: %v", names)
	}

	for _, q := range []string{"?page=0", "?per_page=abc", "?search=" + strings.Repeat("x", 256), "?search=%00"} {
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens"+q, h.tokenA, nil), http.StatusBadRequest)
	}

	// Another organization's token is not found, exactly like a missing one.
	r := h.do(http.MethodGet, "/v1/tokens", h.tokenB, nil)
	other := r.Result()["result"].([]any)[0].(map[string]any)["id"].(string)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+other, h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodDelete, "/v1/tokens/"+other, h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens/not-a-token-id", h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+other, h.tokenB, nil), http.StatusOK)
}

func TestTokensVerify(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	past := time.Now().Add(-time.Minute)
	expiredSecret, expiredHash := auth.NewSecret()
	if _, err := h.st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: h.orgA, Name: "old",
		Grants: auth.AllGrants(), ExpiresAt: &past, SecretHash: expiredHash}); err != nil {
		t.Fatal(err)
	}
	access := newAccessToken(t, h, "ops@example.com", auth.AllGrants(), nil, h.orgA, h.orgB)
	tokenA := h.do(http.MethodGet, "/v1/tokens?search=test", h.tokenA, nil).Result()["result"].([]any)[0].(map[string]any)["id"]

	cases := []struct {
		name    string
		path    string
		token   string
		status  int
		success bool
		result  map[string]any
		message string
	}{
		{"verify: api token", "/v1/tokens/verify", h.tokenA, 200, true, map[string]any{"id": tokenA, "status": "active"}, ""},
		{"verify: access token has no id", "/v1/tokens/verify", access, 200, true, map[string]any{"status": "active"}, ""},
		{"verify: unknown token", "/v1/tokens/verify", "vtg_unknown", 200, false, nil, "invalid or expired token"},
		{"verify: expired token", "/v1/tokens/verify", expiredSecret, 200, false, nil, "invalid or expired token"},
		{"verify: no header", "/v1/tokens/verify", "", 401, false, nil, "missing bearer token"},
		{"permissions: api token", "/v1/tokens/permissions", h.token(h.orgA, "UPTIME_CHECKS:READ", "WEBHOOKS:EDIT"), 200, true,
			map[string]any{"permissions": []any{"uptime_checks (read)", "webhooks (edit)"}}, ""},
		{"permissions: no grants", "/v1/tokens/permissions", h.token(h.orgA), 200, true, map[string]any{"permissions": []any{}}, ""},
		{"permissions: access token", "/v1/tokens/permissions", access, 200, false, nil, "API tokens only"},
		{"permissions: unknown token", "/v1/tokens/permissions", "vtg_unknown", 200, false, nil, "invalid or expired token"},
		{"permissions: expired token", "/v1/tokens/permissions", expiredSecret, 200, false, nil, "invalid or expired token"},
		{"permissions: no header", "/v1/tokens/permissions", "", 401, false, nil, "missing bearer token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The organization header is ignored here, even when it names an organization the
			// token does not cover.
			r := h.do(http.MethodGet, tc.path, tc.token, nil, "X-Service-Organisation: "+h.orgB.String())
			expectStatus(t, r, tc.status)
			if r.Body["success"] != tc.success {
				t.Fatalf("success %v: %s", r.Body["success"], r.Raw)
			}
			if tc.success && !reflect.DeepEqual(r.Result(), tc.result) {
				t.Fatalf("result %s, want %v", r.Raw, tc.result)
			}
			if !tc.success && !strings.Contains(r.FirstError(), tc.message) {
				t.Fatalf("message %q does not mention %q", r.FirstError(), tc.message)
			}
		})
	}
}
