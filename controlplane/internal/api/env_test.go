package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestEnvConfigLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	r := h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": "BASE_HOST", "type": "config", "value": "api.example.com"})
	expectStatus(t, r, http.StatusCreated)
	golden(t, "env_create_config", r.Raw)
	v := r.Result()
	id := v["id"].(string)
	if pvKeys(v) != "created_at,has_value,id,name,project_id,type,updated_at,value" ||
		v["value"] != "api.example.com" || v["has_value"] != true || v["project_id"] != nil || v["type"] != "config" {
		t.Fatalf("create: %s", r.Raw)
	}

	r = h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "env_get_config", r.Raw)
	if r.Result()["value"] != "api.example.com" {
		t.Fatalf("get: %s", r.Raw)
	}

	r = h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, map[string]any{"value": "eu.example.com"})
	expectStatus(t, r, http.StatusOK)
	if r.Result()["value"] != "eu.example.com" || r.Result()["name"] != "BASE_HOST" {
		t.Fatalf("patch value: %s", r.Raw)
	}
	r = h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, map[string]any{"name": "HOST"})
	expectStatus(t, r, http.StatusOK)
	golden(t, "env_update_config", r.Raw)
	if r.Result()["value"] != "eu.example.com" || r.Result()["name"] != "HOST" {
		t.Fatalf("patch name: %s", r.Raw)
	}

	r = h.do(http.MethodGet, "/v1/env", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "env_list", r.Raw)
	for _, it := range r.Items() {
		if _, has := it["value"]; has {
			t.Fatalf("list carries values: %s", r.Raw)
		}
	}

	r = h.do(http.MethodDelete, "/v1/env/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "env_delete", r.Raw)
	r = h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil)
	pvExpectError(t, r, http.StatusNotFound, 404, "not_found")
	if r.FirstError() != "environment variable not found" {
		t.Fatalf("404: %s", r.Raw)
	}
	if got := strings.Join(pvAuditActions(t, h, h.orgA, id), " "); got !=
		"environment_variable.created environment_variable.updated environment_variable.updated environment_variable.deleted" {
		t.Fatalf("audit: %s", got)
	}
}

func TestEnvSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const plaintext = "tok_live_2b8f0c5e9a71d4"
	r := h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": "API_TOKEN", "type": "secret", "value": plaintext})
	expectStatus(t, r, http.StatusCreated)
	golden(t, "env_create_secret", r.Raw)
	id := r.Result()["id"].(string)

	responses := []response{r}
	responses = append(responses, h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil))
	responses = append(responses, h.do(http.MethodGet, "/v1/env", h.tokenA, nil))
	responses = append(responses, h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, map[string]any{"value": plaintext + "2"}))
	responses = append(responses, h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, map[string]any{"name": "API_TOKEN_V2"}))
	for i, r := range responses {
		if r.Status >= 300 || bytes.Contains(r.Raw, []byte(plaintext)) || bytes.Contains(r.Raw, []byte(`"value"`)) {
			t.Fatalf("response %d reveals the secret or failed: %s", i, r.Raw)
		}
	}
	golden(t, "env_get_secret", responses[1].Raw)

	// At rest: sealed, the plaintext nowhere in the row nor in the audit log.
	var sealed []byte
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT value_enc FROM env_vars WHERE id = $1`, id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(plaintext)) {
		t.Fatalf("value stored in the clear: %q", sealed)
	}
	var audit string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT coalesce(string_agg(metadata::text, ' '), '') FROM audit_events
		WHERE auditable_id = $1`, id).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(audit, plaintext) {
		t.Fatalf("audit metadata holds the value: %s", audit)
	}

	// The scheduler's view: the value, marked secret, in its scope only.
	got, err := h.st.ResolveVars(context.Background(), h.orgA, nil, []string{"API_TOKEN_V2", "MISSING"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["API_TOKEN_V2"].Value != plaintext+"2" || !got["API_TOKEN_V2"].Secret {
		t.Fatalf("ResolveVars: %+v", got)
	}
	project := uuid.MustParse(pvCreateProject(t, h, h.tokenA, "p"))
	got, err = h.st.ResolveVars(context.Background(), h.orgA, &project, []string{"API_TOKEN_V2"})
	if err != nil || len(got) != 0 {
		t.Fatalf("ResolveVars falls back across scopes: %+v %v", got, err)
	}
	got, err = h.st.ResolveVars(context.Background(), h.orgB, nil, []string{"API_TOKEN_V2"})
	if err != nil || len(got) != 0 {
		t.Fatalf("ResolveVars crosses organizations: %+v %v", got, err)
	}
}

func TestEnvCreateRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := pvCreateProject(t, h, h.tokenA, "p")
	projectB := pvCreateProject(t, h, h.tokenB, "B's")
	ok := func(name string) map[string]any { return map[string]any{"name": name, "type": "config", "value": "v"} }
	with := func(name, k string, v any) map[string]any { b := ok(name); b[k] = v; return b }
	without := func(name, k string) map[string]any { b := ok(name); delete(b, k); return b }
	cases := []struct {
		name string
		body any
		want int
		msg  string
	}{
		{"minimal config", ok("A"), 201, ""},
		{"secret", with("SECRET_ONE", "type", "secret"), 201, ""},
		{"underscore first", ok("_PRIVATE"), 201, ""},
		{"64 characters", ok(strings.Repeat("N", 64)), 201, ""},
		{"empty value", with("EMPTY", "value", ""), 201, ""},
		{"value of 8192 bytes", with("BIG", "value", strings.Repeat("x", 8192)), 201, ""},
		{"value of 8192 bytes of 2-byte characters", with("BIG_UTF8", "value", strings.Repeat("é", 4096)), 201, ""},
		{"in a project", with("SCOPED", "project_id", project), 201, ""},
		{"project_id null is the organization scope", with("ORG_SCOPE", "project_id", nil), 201, ""},

		{"name required", without("", "name"), 400, "name: is required"},
		{"name lower case", ok("api_key"), 400, "name: must match"},
		{"name starting with a digit", ok("1KEY"), 400, "name: must match"},
		{"name with a hyphen", ok("API-KEY"), 400, "name: must match"},
		{"name empty", ok(""), 400, "name: must match"},
		{"name of 65 characters", ok(strings.Repeat("N", 65)), 400, "name: must match"},
		{"name not a string", with("X", "name", 5), 400, "name: must be a string"},
		{"type required", without("X", "type"), 400, "type: is required"},
		{"type unknown", with("X", "type", "plain"), 400, "type: must be one of config, secret"},
		{"type upper case", with("X", "type", "SECRET"), 400, "type: must be one of config, secret"},
		{"value required", without("X", "value"), 400, "value: is required"},
		{"value null", with("X", "value", nil), 400, "value: is required"},
		{"value not a string", with("X", "value", 12), 400, "value: must be a string"},
		{"value over 8192 bytes", with("X", "value", strings.Repeat("x", 8193)), 400, "value: must be at most 8192 bytes"},
		{"value over 8192 bytes in 4097 characters", with("X", "value", strings.Repeat("é", 4097)), 400, "value: must be at most 8192 bytes"},
		{"unknown property", with("X", "secret", true), 400, "secret: unknown property"},
		{"project_id malformed", with("X", "project_id", "nope"), 400, "project_id: must be a project id"},
		{"project_id non-canonical", with("X", "project_id", strings.ToUpper(project)), 400, "project_id: is not a canonical project id"},
		{"project_id not a string", with("X", "project_id", 3), 400, "project_id: must be a string"},
		{"several problems at once", map[string]any{"name": "x", "type": "y"}, 400, "name: must match"},

		{"project_id unknown", with("X", "project_id", uuid.NewString()), 404, "project not found"},
		{"project_id of another organization", with("X", "project_id", projectB), 404, "project not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/env", h.tokenA, tc.body)
			expectStatus(t, r, tc.want)
			if tc.want >= 400 && !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q lack %q", r.ErrorText(), tc.msg)
			}
		})
	}
	r := h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": "x", "type": "y"})
	if n := len(r.Body["errors"].([]any)); n != 3 {
		t.Fatalf("want one error per broken rule: %s", r.Raw)
	}
	golden(t, "env_create_invalid", r.Raw)
}

func TestEnvNameConflicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p1 := pvCreateProject(t, h, h.tokenA, "one")
	p2 := pvCreateProject(t, h, h.tokenA, "two")
	pvCreateVar(t, h, h.tokenA, "", "TOKEN", "config", "org")
	pvCreateVar(t, h, h.tokenA, p1, "TOKEN", "secret", "p1")
	other := pvCreateVar(t, h, h.tokenA, p2, "OTHER", "config", "p2")
	pvCreateVar(t, h, h.tokenB, "", "TOKEN", "config", "org B") // another organization is another namespace

	for _, scope := range []string{"", p1} {
		body := map[string]any{"name": "TOKEN", "type": "config", "value": "again"}
		if scope != "" {
			body["project_id"] = scope
		}
		r := h.do(http.MethodPost, "/v1/env", h.tokenA, body)
		pvExpectError(t, r, http.StatusConflict, 409, "environment_variable_name_conflict")
	}
	// Renaming onto a taken name in the same scope conflicts; onto a name used elsewhere does not.
	r := h.do(http.MethodPatch, "/v1/env/"+other, h.tokenA, map[string]any{"name": "TOKEN"})
	expectStatus(t, r, http.StatusOK)
	clash := pvCreateVar(t, h, h.tokenA, p2, "CLASH", "config", "x")
	r = h.do(http.MethodPatch, "/v1/env/"+clash, h.tokenA, map[string]any{"name": "TOKEN", "value": "y"})
	pvExpectError(t, r, http.StatusConflict, 409, "environment_variable_name_conflict")
	golden(t, "env_name_conflict", r.Raw)
	r = h.do(http.MethodGet, "/v1/env/"+clash, h.tokenA, nil)
	if r.Result()["name"] != "CLASH" || r.Result()["value"] != "x" {
		t.Fatalf("a refused rename changed the variable: %s", r.Raw)
	}
	// Renaming to its own name is no conflict.
	r = h.do(http.MethodPatch, "/v1/env/"+clash, h.tokenA, map[string]any{"name": "CLASH"})
	expectStatus(t, r, http.StatusOK)
}

func TestEnvPatchRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := pvCreateVar(t, h, h.tokenA, "", "KEEP", "config", "v")
	project := pvCreateProject(t, h, h.tokenA, "p")
	cases := []struct {
		name string
		body any
		want int
		msg  string
	}{
		{"empty", map[string]any{}, 400, "must change name or value"},
		{"type", map[string]any{"type": "secret"}, 400, "type: cannot be changed"},
		{"same type", map[string]any{"type": "config", "value": "w"}, 400, "type: cannot be changed"},
		{"project_id", map[string]any{"project_id": project}, 400, "project_id: cannot be changed"},
		{"project_id null", map[string]any{"project_id": nil}, 400, "project_id: cannot be changed"},
		{"unknown property", map[string]any{"value": "w", "note": "x"}, 400, "note: unknown property"},
		{"name null", map[string]any{"name": nil}, 400, "name: must be a string, not null"},
		{"value null", map[string]any{"value": nil}, 400, "value: must be a string, not null"},
		{"bad name", map[string]any{"name": "lower"}, 400, "name: must match"},
		{"value too long", map[string]any{"value": strings.Repeat("é", 4097)}, 400, "value: must be at most 8192 bytes"},
		{"no body", nil, 400, "request body is required"},
		{"value", map[string]any{"value": "w"}, 200, ""},
		{"name and value", map[string]any{"name": "KEEP", "value": "z"}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, tc.body)
			expectStatus(t, r, tc.want)
			if tc.want >= 400 && !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q lack %q", r.ErrorText(), tc.msg)
			}
		})
	}
	r := h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil)
	if v := r.Result(); v["name"] != "KEEP" || v["value"] != "z" || v["type"] != "config" || v["project_id"] != nil {
		t.Fatalf("after patches: %s", r.Raw)
	}
}

func TestEnvPathAndOrgIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := pvCreateVar(t, h, h.tokenA, "", "MINE", "config", "a")
	for _, tc := range []struct {
		name, id, token string
	}{
		{"other organization", id, h.tokenB},
		{"unknown", uuid.NewString(), h.tokenA},
		{"not one of our ids", "x", h.tokenA},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
			t.Run(tc.name+" "+method, func(t *testing.T) {
				r := h.do(method, "/v1/env/"+tc.id, tc.token, map[string]any{"value": "b"})
				pvExpectError(t, r, http.StatusNotFound, 404, "not_found")
			})
		}
	}
	r := h.do(http.MethodGet, "/v1/env", h.tokenB, nil)
	if len(r.Items()) != 0 {
		t.Fatalf("org B lists org A's variables: %s", r.Raw)
	}
	r = h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil)
	if r.Result()["value"] != "a" {
		t.Fatalf("org B changed org A's variable: %s", r.Raw)
	}
	// Permissions: ENVIRONMENT_VARIABLES, READ for GET.
	read := h.token(h.orgA, "ENVIRONMENT_VARIABLES:READ")
	expectStatus(t, h.do(http.MethodGet, "/v1/env/"+id, read, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodPatch, "/v1/env/"+id, read, map[string]any{"value": "b"}), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/env", h.token(h.orgA, "PROJECTS:EDIT"), nil), http.StatusForbidden)
}

func TestEnvListFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := pvCreateProject(t, h, h.tokenA, "p")
	pvCreateVar(t, h, h.tokenA, "", "DB_HOST", "config", "h")
	pvCreateVar(t, h, h.tokenA, "", "DB_PASSWORD", "secret", "p")
	pvCreateVar(t, h, h.tokenA, project, "API_HOST", "config", "a")
	pvCreateVar(t, h, h.tokenA, project, "DB_HOST", "config", "scoped")
	cases := []struct {
		name, query string
		want        string // names, newest first
		status      int
	}{
		{"all", "", "DB_HOST,API_HOST,DB_PASSWORD,DB_HOST", 200},
		{"search is a case-insensitive substring", "?search=host", "DB_HOST,API_HOST,DB_HOST", 200},
		{"search in the middle", "?search=_pass", "DB_PASSWORD", 200},
		{"search without match", "?search=nothing", "", 200},
		{"search with LIKE wildcards is literal", "?search=%25", "", 200},
		{"search of 64 characters", "?search=" + strings.Repeat("a", 64), "", 200},
		{"search of 65 characters", "?search=" + strings.Repeat("a", 65), "", 400},
		{"organization scope", "?project_id=unassigned", "DB_PASSWORD,DB_HOST", 200},
		{"project scope", "?project_id=" + project, "DB_HOST,API_HOST", 200},
		{"project scope and search", "?project_id=" + project + "&search=api", "API_HOST", 200},
		{"paged", "?per_page=1&page=2", "API_HOST", 200},
		{"unknown project", "?project_id=" + uuid.NewString(), "", 404},
		{"malformed project", "?project_id=zzz", "", 400},
		{"bad page", "?page=x", "", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/v1/env"+tc.query, h.tokenA, nil)
			expectStatus(t, r, tc.status)
			if tc.status != 200 {
				return
			}
			var names []string
			for _, it := range r.Items() {
				names = append(names, it["name"].(string))
				if _, has := it["value"]; has {
					t.Fatalf("list carries a value: %s", r.Raw)
				}
			}
			if strings.Join(names, ",") != tc.want {
				t.Fatalf("got %v, want %s", names, tc.want)
			}
		})
	}
	r := h.do(http.MethodGet, "/v1/env?per_page=1", h.tokenA, nil)
	if info := r.Body["result_info"].(map[string]any); info["total_count"] != 4.0 || info["count"] != 1.0 {
		t.Fatalf("result_info: %s", r.Raw)
	}
}

func TestEnvLimitPerOrganization(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// 999 variables written directly (the sealed value is irrelevant here), then the 1000th
	// through the API, then one too many.
	_, err := h.st.Pool().Exec(context.Background(), `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc)
		SELECT gen_random_uuid(), $1, NULL, 'V' || n, 'config', '\x00'::bytea FROM generate_series(1, 999) n`, h.orgA)
	if err != nil {
		t.Fatal(err)
	}
	project := pvCreateProject(t, h, h.tokenA, "p")
	pvCreateVar(t, h, h.tokenA, project, "LAST", "config", "v")
	r := h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": "ONE_TOO_MANY", "type": "secret", "value": "v"})
	pvExpectError(t, r, http.StatusConflict, 409, "environment_variable_limit_reached")
	golden(t, "env_limit_reached", r.Raw)
	// The limit is per organization.
	pvCreateVar(t, h, h.tokenB, "", "ONE_TOO_MANY", "config", "v")
}

func TestEnvLimitHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.st.Pool().Exec(context.Background(), `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc)
		SELECT gen_random_uuid(), $1, NULL, 'V' || n, 'config', '\x00'::bytea FROM generate_series(1, 990) n`, h.orgA)
	if err != nil {
		t.Fatal(err)
	}
	statuses := make(chan int, 20)
	for i := range 20 {
		go func() {
			r := h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": fmt.Sprintf("RACE_%d", i), "type": "config", "value": "v"})
			statuses <- r.Status
		}()
	}
	count := map[int]int{}
	for range 20 {
		count[<-statuses]++
	}
	if count[http.StatusCreated] != 10 || count[http.StatusConflict] != 10 {
		t.Fatalf("statuses %v, want 10 created and 10 conflicts", count)
	}
}

func TestEnvRenameRewritesReferences(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	id := pvCreateVar(t, h, h.tokenA, "", "TOKEN", "secret", "t0k3n")
	// The store refuses a reference to a variable that does not exist: OTHER exists, but the
	// rename leaves it alone.
	pvCreateVar(t, h, h.tokenA, "", "OTHER", "config", "o")
	user := "svc-{{TOKEN}}"
	bound := pvInsertCheck(t, h, h.orgA, pvCheck{
		headers:  map[string]string{"Authorization": "Bearer {{TOKEN}}", "X-Both": "{{ TOKEN }}/{{OTHER}}", "X-Plain": "TOKEN"},
		username: &user,
	})
	// A check not bound to the variable (another organization, same text, bound to its own
	// TOKEN) is left alone.
	pvCreateVar(t, h, h.tokenB, "", "TOKEN", "secret", "b")
	stranger := pvInsertCheck(t, h, h.orgB, pvCheck{headers: map[string]string{"Authorization": "Bearer {{TOKEN}}"}})

	// The password is sealed with the store's key, which tests do not hold: borrow a sealed
	// value from a config variable holding the wanted plaintext, and read it back the same way.
	carrier := pvCreateVar(t, h, h.tokenA, "", "CARRIER", "config", "pw-{{TOKEN}}-{{TOKEN}}")
	if _, err := h.st.Pool().Exec(ctx, `UPDATE checks SET auth_password_enc = (SELECT value_enc FROM env_vars WHERE id = $1)
		WHERE id = $2`, carrier, bound); err != nil {
		t.Fatal(err)
	}

	r := h.do(http.MethodPatch, "/v1/env/"+id, h.tokenA, map[string]any{"name": "API_TOKEN"})
	expectStatus(t, r, http.StatusOK)

	var headers []byte
	var username string
	var updated bool
	if err := h.st.Pool().QueryRow(ctx, `SELECT spec->'headers', spec->>'auth_username', updated_at > created_at FROM checks WHERE id = $1`, bound).
		Scan(&headers, &username, &updated); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(headers, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer {{API_TOKEN}}", "X-Both": "{{API_TOKEN}}/{{OTHER}}", "X-Plain": "TOKEN"}
	if fmt.Sprint(got) != fmt.Sprint(want) || username != "svc-{{API_TOKEN}}" || !updated {
		t.Fatalf("check after rename: headers %v, username %q, updated %v", got, username, updated)
	}
	if _, err := h.st.Pool().Exec(ctx, `UPDATE env_vars SET value_enc = (SELECT auth_password_enc FROM checks WHERE id = $1)
		WHERE id = $2`, bound, carrier); err != nil {
		t.Fatal(err)
	}
	r = h.do(http.MethodGet, "/v1/env/"+carrier, h.tokenA, nil)
	if r.Result()["value"] != "pw-{{API_TOKEN}}-{{API_TOKEN}}" {
		t.Fatalf("password after rename: %s", r.Raw)
	}
	if err := h.st.Pool().QueryRow(ctx, `SELECT spec->'headers' FROM checks WHERE id = $1`, stranger).Scan(&headers); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(headers, []byte("{{TOKEN}}")) {
		t.Fatalf("an unbound check was rewritten: %s", headers)
	}
	// The reference still points at the same variable, now named API_TOKEN.
	var n int
	if err := h.st.Pool().QueryRow(ctx, `SELECT count(*) FROM check_env_refs WHERE check_id = $1 AND env_var_id = $2`, bound, id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("reference lost: %d %v", n, err)
	}
}

func TestEnvDeleteInUse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := pvCreateVar(t, h, h.tokenA, "", "USED", "config", "v")
	checkID := pvInsertCheck(t, h, h.orgA, pvCheck{headers: map[string]string{"X": "{{USED}}"}})
	if _, err := h.st.Pool().Exec(context.Background(), `UPDATE checks SET paused = true WHERE id = $1`, checkID); err != nil {
		t.Fatal(err)
	}
	r := h.do(http.MethodDelete, "/v1/env/"+id, h.tokenA, nil)
	pvExpectError(t, r, http.StatusConflict, 409, "environment_variable_in_use")
	golden(t, "env_delete_in_use", r.Raw)
	expectStatus(t, h.do(http.MethodGet, "/v1/env/"+id, h.tokenA, nil), http.StatusOK)

	if _, err := h.st.Pool().Exec(context.Background(), `DELETE FROM checks WHERE id = $1`, checkID); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, h.do(http.MethodDelete, "/v1/env/"+id, h.tokenA, nil), http.StatusOK)
}
