package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// Fixtures of the projects, variables and move tests (prefixed pv to stay clear of other files'
// helpers in this package).

// pvCreateProject creates a project through the API and returns its id.
func pvCreateProject(t *testing.T, h *harness, token, name string) string {
	t.Helper()
	r := h.do(http.MethodPost, "/v1/projects", token, map[string]any{"name": name})
	expectStatus(t, r, http.StatusCreated)
	return r.Result()["id"].(string)
}

// pvCreateVar creates a variable through the API (project "" = organization scope) and returns
// its id.
func pvCreateVar(t *testing.T, h *harness, token, project, name, typ, value string) string {
	t.Helper()
	body := map[string]any{"name": name, "type": typ, "value": value}
	if project != "" {
		body["project_id"] = project
	}
	r := h.do(http.MethodPost, "/v1/env", token, body)
	expectStatus(t, r, http.StatusCreated)
	return r.Result()["id"].(string)
}

// pvCheck is an uptime check made through the store (storetest.Check), so that these tests do
// not depend on the checks API. The store binds its {{NAME}} references in its scope.
type pvCheck struct {
	project  string            // "" = Unassigned
	headers  map[string]string // nil = none
	username *string
}

// pvInsertCheck creates an uptime check and returns its id.
func pvInsertCheck(t *testing.T, h *harness, org uuid.UUID, c pvCheck) uuid.UUID {
	t.Helper()
	var project *uuid.UUID
	if c.project != "" {
		id := uuid.MustParse(c.project)
		project = &id
	}
	return storetest.Check(t, h.st, &storetest.CheckOpts{OrgID: org, ProjectID: project, Name: "raw check",
		Spec: func(sp *check.Spec) { sp.HTTP.Headers, sp.HTTP.AuthUsername = c.headers, c.username }}).ID
}

// pvAuditActions lists the audit actions recorded for one resource, oldest first.
func pvAuditActions(t *testing.T, h *harness, org uuid.UUID, resourceID string) []string {
	t.Helper()
	rows, err := h.st.Pool().Query(context.Background(), `SELECT audit_action FROM audit_events
		WHERE org_id = $1 AND auditable_id = $2 ORDER BY id`, org, resourceID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// pvFirstErrorItem is errors[0] of a failure envelope.
func pvFirstErrorItem(t *testing.T, r response) map[string]any {
	t.Helper()
	errs, _ := r.Body["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("no errors: %s", r.Raw)
	}
	return errs[0].(map[string]any)
}

// pvExpectError asserts the status, errors[0].code and errors[0].type of a failure.
func pvExpectError(t *testing.T, r response, status, code int, typ string) {
	t.Helper()
	expectStatus(t, r, status)
	e := pvFirstErrorItem(t, r)
	if got, _ := e["code"].(float64); int(got) != code {
		t.Fatalf("errors[0].code = %v, want %d: %s", e["code"], code, r.Raw)
	}
	if got, _ := e["type"].(string); got != typ {
		t.Fatalf("errors[0].type = %v, want %q: %s", e["type"], typ, r.Raw)
	}
}

// pvKeys is the sorted field names of an object.
func pvKeys(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func TestProjectsLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	r := h.do(http.MethodPost, "/v1/projects", h.tokenA, map[string]any{"name": "Payments"})
	expectStatus(t, r, http.StatusCreated)
	golden(t, "project_create", r.Raw)
	p := r.Result()
	id := p["id"].(string)
	if p["is_default"] != false || p["name"] != "Payments" || p["created_at"] != p["updated_at"] {
		t.Fatalf("create: %s", r.Raw)
	}
	if _, err := uuid.Parse(id); err != nil || strings.ToLower(id) != id {
		t.Fatalf("id %q is not a lowercase uuid", id)
	}

	r = h.do(http.MethodGet, "/v1/projects/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "project_get", r.Raw)

	// Names are labels, not keys: duplicates are fine.
	pvCreateProject(t, h, h.tokenA, "Payments")

	r = h.do(http.MethodGet, "/v1/projects", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "project_list", r.Raw)

	r = h.do(http.MethodPatch, "/v1/projects/"+id, h.tokenA, map[string]any{"name": "Payments (EU)"})
	expectStatus(t, r, http.StatusOK)
	if got := r.Result(); got["id"] != id || got["name"] != "Payments (EU)" || got["is_default"] != false {
		t.Fatalf("rename: %s", r.Raw)
	}
	golden(t, "project_update", r.Raw)

	r = h.do(http.MethodDelete, "/v1/projects/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	golden(t, "project_delete", r.Raw)
	if r.Result()["id"] != id {
		t.Fatalf("delete: %s", r.Raw)
	}
	r = h.do(http.MethodGet, "/v1/projects/"+id, h.tokenA, nil)
	pvExpectError(t, r, http.StatusNotFound, 404, "not_found")
	if r.FirstError() != "project not found" {
		t.Fatalf("404 message: %s", r.Raw)
	}
	if got := strings.Join(pvAuditActions(t, h, h.orgA, id), " "); got != "project.created project.updated project.deleted" {
		t.Fatalf("audit: %s", got)
	}
}

func TestProjectsPagination(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 3 {
		pvCreateProject(t, h, h.tokenA, fmt.Sprintf("p%d", i))
	}
	cases := []struct {
		name      string
		query     string
		wantNames []string
		page      float64
		perPage   float64
	}{
		{"defaults", "", []string{"p2", "p1", "p0"}, 1, 20},
		{"first page", "?per_page=2", []string{"p2", "p1"}, 1, 2},
		{"second page", "?per_page=2&page=2", []string{"p0"}, 2, 2},
		{"past the end", "?per_page=2&page=3", []string{}, 3, 2},
		{"search is not a filter here", "?search=p1", []string{"p2", "p1", "p0"}, 1, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/v1/projects"+tc.query, h.tokenA, nil)
			expectStatus(t, r, http.StatusOK)
			names := []string{}
			for _, it := range r.Items() {
				names = append(names, it["name"].(string))
			}
			info := r.Body["result_info"].(map[string]any)
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") || info["total_count"] != 3.0 ||
				info["page"] != tc.page || info["per_page"] != tc.perPage || info["count"] != float64(len(tc.wantNames)) {
				t.Fatalf("got %v: %s", names, r.Raw)
			}
		})
	}
	r := h.do(http.MethodGet, "/v1/projects?page=0", h.tokenA, nil)
	expectStatus(t, r, http.StatusBadRequest)
	r = h.do(http.MethodGet, "/v1/projects", h.tokenB, nil)
	expectStatus(t, r, http.StatusOK)
	if len(r.Items()) != 0 || r.Body["result_info"].(map[string]any)["total_count"] != 0.0 {
		t.Fatalf("org B sees org A's projects: %s", r.Raw)
	}
}

func TestProjectsBodyRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := pvCreateProject(t, h, h.tokenA, "target")
	cases := []struct {
		name string
		body any
		want int
		msg  string
	}{
		{"name required", map[string]any{}, 400, "name: is required"},
		{"name null", `{"name":null}`, 400, "name: is required"},
		{"name empty", map[string]any{"name": ""}, 400, "name: must be 1 to 255 characters long"},
		{"name too long", map[string]any{"name": strings.Repeat("x", 256)}, 400, "name: must be 1 to 255 characters long"},
		{"name not a string", map[string]any{"name": 7}, 400, "name: must be a string"},
		{"unknown property", map[string]any{"name": "x", "is_default": true}, 400, "is_default: unknown property"},
		{"project_id not accepted", map[string]any{"name": "x", "project_id": id}, 400, "project_id: unknown property"},
		{"not an object", `["x"]`, 400, "must be a JSON object"},
		{"not JSON", `{"name":`, 400, "not valid JSON"},
		{"no body", nil, 400, "request body is required"},
		{"255 characters", map[string]any{"name": strings.Repeat("é", 255)}, 0, ""},
		{"one character", map[string]any{"name": "x"}, 0, ""},
	}
	for _, tc := range cases {
		for _, route := range []struct{ method, path string }{
			{http.MethodPost, "/v1/projects"},
			{http.MethodPatch, "/v1/projects/" + id},
		} {
			t.Run(tc.name+" "+route.method, func(t *testing.T) {
				r := h.do(route.method, route.path, h.tokenA, tc.body)
				if tc.want == 0 {
					if r.Status != http.StatusCreated && r.Status != http.StatusOK {
						t.Fatalf("status %d: %s", r.Status, r.Raw)
					}
					return
				}
				pvExpectError(t, r, tc.want, tc.want, "validation_error")
				if !strings.Contains(r.ErrorText(), tc.msg) {
					t.Fatalf("errors %q lack %q", r.ErrorText(), tc.msg)
				}
			})
		}
	}
}

func TestProjectIDPathRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	idA := pvCreateProject(t, h, h.tokenA, "A's")
	cases := []struct {
		name string
		id   string
		want int
		msg  string
	}{
		{"too short", "abc-def", 400, "must be a project id"},
		{"15 characters", "abcdefghijklmno", 400, "must be a project id"},
		{"129 characters", strings.Repeat("a", 129), 400, "must be a project id"},
		{"forbidden character", "abcdefgh_ijklmnopq", 400, "must be a project id"},
		{"digits only", "1234567890123456", 400, "must be a project id"},
		{"well-formed, not a uuid", "abcdefghijklmnop", 400, "is not a canonical project id"},
		{"128 characters, not a uuid", strings.Repeat("a", 128), 400, "is not a canonical project id"},
		{"upper-case uuid", strings.ToUpper(idA), 400, "is not a canonical project id"},
		{"uuid without hyphens", strings.ReplaceAll(idA, "-", ""), 400, "is not a canonical project id"},
		{"canonical, unknown", uuid.NewString(), 404, "project not found"},
		{"canonical, org A's", idA, 0, ""},
	}
	for _, tc := range cases {
		methods := []string{http.MethodGet, http.MethodPatch, http.MethodDelete}
		if tc.want == 0 {
			methods = methods[:2] // deleting the valid id is TestProjectsLifecycle's job
		}
		for _, method := range methods {
			t.Run(tc.name+" "+method, func(t *testing.T) {
				r := h.do(method, "/v1/projects/"+tc.id, h.tokenA, map[string]any{"name": "renamed"})
				if tc.want == 0 {
					expectStatus(t, r, http.StatusOK)
					return
				}
				expectStatus(t, r, tc.want)
				if !strings.Contains(r.ErrorText(), tc.msg) {
					t.Fatalf("errors %q lack %q", r.ErrorText(), tc.msg)
				}
			})
		}
	}
}

func TestProjectsOrgIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := pvCreateProject(t, h, h.tokenA, "A's")
	for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		r := h.do(method, "/v1/projects/"+id, h.tokenB, map[string]any{"name": "stolen"})
		pvExpectError(t, r, http.StatusNotFound, 404, "not_found")
	}
	r := h.do(http.MethodGet, "/v1/projects/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["name"] != "A's" {
		t.Fatalf("org B changed org A's project: %s", r.Raw)
	}
}

func TestProjectsPermissions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	read := h.token(h.orgA, "PROJECTS:READ")
	other := h.token(h.orgA, "UPTIME_CHECKS:EDIT", "ENVIRONMENT_VARIABLES:EDIT")
	r := h.do(http.MethodGet, "/v1/projects", read, nil)
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodPost, "/v1/projects", read, map[string]any{"name": "x"})
	expectStatus(t, r, http.StatusForbidden)
	r = h.do(http.MethodGet, "/v1/projects", other, nil)
	expectStatus(t, r, http.StatusForbidden)
	r = h.do(http.MethodGet, "/v1/projects", "", nil)
	expectStatus(t, r, http.StatusUnauthorized)
}

func TestProjectDeleteOnlyWhenEmpty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCheck := pvCreateProject(t, h, h.tokenA, "has a check")
	withVar := pvCreateProject(t, h, h.tokenA, "has a variable")
	checkID := pvInsertCheck(t, h, h.orgA, pvCheck{project: withCheck})
	varID := pvCreateVar(t, h, h.tokenA, withVar, "API_KEY", "secret", "s3cr3t")

	for _, id := range []string{withCheck, withVar} {
		r := h.do(http.MethodDelete, "/v1/projects/"+id, h.tokenA, nil)
		pvExpectError(t, r, http.StatusConflict, 10010, "project_not_empty")
		r = h.do(http.MethodGet, "/v1/projects/"+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
	}
	r := h.do(http.MethodDelete, "/v1/projects/"+withCheck, h.tokenA, nil)
	golden(t, "project_delete_not_empty", r.Raw)

	// Emptied, they go.
	r = h.do(http.MethodPost, "/v1/checks/"+checkID.String()+"/move", h.tokenA, map[string]any{"project_id": nil})
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodDelete, "/v1/env/"+varID, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	for _, id := range []string{withCheck, withVar} {
		r = h.do(http.MethodDelete, "/v1/projects/"+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
	}
}

// TestProjectDeleteRacesCreate runs deletes against concurrent inserts into the same project:
// whatever the interleaving, a project is never deleted while something is in it, which the
// foreign key would otherwise report as an internal error.
func TestProjectDeleteRacesCreate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 10 {
		id := pvCreateProject(t, h, h.tokenA, fmt.Sprintf("race %d", i))
		done := make(chan error, 1)
		go func() {
			project := uuid.MustParse(id)
			sp := storetest.CheckSpec(check.TCP)
			sp.Name = "racer"
			_, err := h.st.CreateCheck(context.Background(), store.SystemActor, h.orgA, &project, sp)
			done <- err
		}()
		r := h.do(http.MethodDelete, "/v1/projects/"+id, h.tokenA, nil)
		insertErr := <-done
		switch r.Status {
		case http.StatusOK:
			if insertErr == nil {
				t.Fatalf("round %d: project deleted and a check inserted into it", i)
			}
		case http.StatusConflict:
			if insertErr != nil {
				t.Fatalf("round %d: 409 but the insert failed: %v", i, insertErr)
			}
		default:
			t.Fatalf("round %d: status %d: %s", i, r.Status, r.Raw)
		}
	}
}
