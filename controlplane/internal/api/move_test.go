package api

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// pvCheckState is what a move may change: the project, the references and updated_at.
type pvCheckState struct {
	project   string // "" = Unassigned
	refs      string // referenced variable ids, sorted, comma-separated
	updatedAt time.Time
}

func pvReadCheck(t *testing.T, h *harness, id uuid.UUID) pvCheckState {
	t.Helper()
	ctx := context.Background()
	var s pvCheckState
	var project *uuid.UUID
	if err := h.st.Pool().QueryRow(ctx, `SELECT project_id, updated_at FROM checks WHERE id = $1`, id).Scan(&project, &s.updatedAt); err != nil {
		t.Fatal(err)
	}
	if project != nil {
		s.project = project.String()
	}
	rows, err := h.st.Pool().Query(ctx, `SELECT env_var_id::text FROM check_env_refs WHERE check_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var refs []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	sort.Strings(refs)
	s.refs = strings.Join(refs, ",")
	return s
}

func pvMove(h *harness, token string, check uuid.UUID, body any) response {
	return h.do(http.MethodPost, "/v1/checks/"+check.String()+"/move", token, body)
}

func TestMoveCheckRebindsVariables(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := pvCreateProject(t, h, h.tokenA, "dest")
	orgHost := pvCreateVar(t, h, h.tokenA, "", "HOST", "config", "org.example.com")
	orgKey := pvCreateVar(t, h, h.tokenA, "", "KEY", "secret", "org-key")
	projHost := pvCreateVar(t, h, h.tokenA, project, "HOST", "config", "p.example.com")
	projKey := pvCreateVar(t, h, h.tokenA, project, "KEY", "secret", "p-key")
	pvCreateVar(t, h, h.tokenA, project, "UNUSED", "config", "x")
	check := pvInsertCheck(t, h, h.orgA, pvCheck{
		headers: map[string]string{"Host": "{{HOST}}", "Authorization": "Bearer {{KEY}}"},
	})
	sorted := func(ids ...string) string { sort.Strings(ids); return strings.Join(ids, ",") }

	// Unassigned → project: references follow the names into the project.
	before := pvReadCheck(t, h, check)
	r := pvMove(h, h.tokenA, check, map[string]any{"project_id": project})
	expectStatus(t, r, http.StatusOK)
	golden(t, "move_to_project", r.Raw)
	if res := r.Result(); res["id"] != check.String() || res["project_id"] != project || pvKeys(res) != "id,project_id" {
		t.Fatalf("move: %s", r.Raw)
	}
	after := pvReadCheck(t, h, check)
	if after.project != project || after.refs != sorted(projHost, projKey) || !after.updatedAt.After(before.updatedAt) {
		t.Fatalf("after move to project: %+v", after)
	}

	// Same place again: 200, nothing written, not even updated_at.
	r = pvMove(h, h.tokenA, check, map[string]any{"project_id": project})
	expectStatus(t, r, http.StatusOK)
	if again := pvReadCheck(t, h, check); again != after {
		t.Fatalf("no-op move changed the check: %+v → %+v", after, again)
	}

	// Back to Unassigned.
	r = pvMove(h, h.tokenA, check, map[string]any{"project_id": nil})
	expectStatus(t, r, http.StatusOK)
	golden(t, "move_to_unassigned", r.Raw)
	if r.Result()["project_id"] != nil {
		t.Fatalf("move back: %s", r.Raw)
	}
	back := pvReadCheck(t, h, check)
	if back.project != "" || back.refs != sorted(orgHost, orgKey) {
		t.Fatalf("after move back: %+v", back)
	}
	r = pvMove(h, h.tokenA, check, map[string]any{"project_id": nil})
	expectStatus(t, r, http.StatusOK)
	if again := pvReadCheck(t, h, check); again != back {
		t.Fatalf("no-op move to Unassigned changed the check: %+v → %+v", back, again)
	}

	if got := strings.Join(pvAuditActions(t, h, h.orgA, check.String()), " "); got != "check.created check.moved check.moved" { // created by the store, then two moves
		t.Fatalf("audit: %q", got)
	}
	var meta string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT metadata::text FROM audit_events
		WHERE auditable_id = $1 AND audit_action = 'check.moved' ORDER BY id LIMIT 1`, check.String()).Scan(&meta); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(meta, `"to_project_id": "`+project+`"`) || !strings.Contains(meta, `"from_project_id": null`) {
		t.Fatalf("audit metadata: %s", meta)
	}

	// A check without references moves anywhere.
	plain := pvInsertCheck(t, h, h.orgA, pvCheck{})
	expectStatus(t, pvMove(h, h.tokenA, plain, map[string]any{"project_id": project}), http.StatusOK)
	if pvReadCheck(t, h, plain).project != project {
		t.Fatal("plain check not moved")
	}
}

func TestMoveCheckVariableConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	missing := pvCreateProject(t, h, h.tokenA, "lacks KEY")
	wrongType := pvCreateProject(t, h, h.tokenA, "KEY is config")
	full := pvCreateProject(t, h, h.tokenA, "has both")
	pvCreateVar(t, h, h.tokenA, "", "HOST", "config", "h")
	pvCreateVar(t, h, h.tokenA, "", "KEY", "secret", "k")
	pvCreateVar(t, h, h.tokenA, missing, "HOST", "config", "h")
	pvCreateVar(t, h, h.tokenA, wrongType, "HOST", "config", "h")
	pvCreateVar(t, h, h.tokenA, wrongType, "KEY", "config", "k")
	pvCreateVar(t, h, h.tokenA, full, "HOST", "config", "h")
	pvCreateVar(t, h, h.tokenA, full, "KEY", "secret", "k")
	check := pvInsertCheck(t, h, h.orgA, pvCheck{headers: map[string]string{"A": "{{HOST}} {{KEY}}"}})
	keyOnly := pvInsertCheck(t, h, h.orgA, pvCheck{project: full, headers: map[string]string{"A": "{{KEY}}"}})

	cases := []struct {
		name  string
		check uuid.UUID
		dest  any
		msg   string
	}{
		{"name missing in the destination", check, missing, "KEY does not exist there"},
		{"type differs in the destination", check, wrongType, "KEY is config there but secret here"},
		{"to Unassigned, which has the name with the type", keyOnly, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := pvReadCheck(t, h, tc.check)
			r := pvMove(h, h.tokenA, tc.check, map[string]any{"project_id": tc.dest})
			if tc.msg == "" {
				// Unassigned has KEY as a secret: this one is allowed, and is the control row.
				expectStatus(t, r, http.StatusOK)
				return
			}
			pvExpectError(t, r, http.StatusConflict, 10010, "project_move_variable_conflict")
			if !strings.Contains(r.FirstError(), tc.msg) {
				t.Fatalf("message %q lacks %q", r.FirstError(), tc.msg)
			}
			if after := pvReadCheck(t, h, tc.check); after != before {
				t.Fatalf("a refused move changed the check: %+v → %+v", before, after)
			}
		})
	}
	r := pvMove(h, h.tokenA, check, map[string]any{"project_id": missing})
	golden(t, "move_variable_conflict", r.Raw)
	if got := pvAuditActions(t, h, h.orgA, check.String()); strings.Join(got, " ") != "check.created" {
		t.Fatalf("a refused move was audited: %v", got)
	}
	expectStatus(t, pvMove(h, h.tokenA, check, map[string]any{"project_id": full}), http.StatusOK)
}

func TestMoveCheckRequestRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project := pvCreateProject(t, h, h.tokenA, "dest")
	projectB := pvCreateProject(t, h, h.tokenB, "B's")
	check := pvInsertCheck(t, h, h.orgA, pvCheck{})
	checkB := pvInsertCheck(t, h, h.orgB, pvCheck{})
	cases := []struct {
		name  string
		check string
		body  any
		want  int
		msg   string
	}{
		{"project_id required", check.String(), map[string]any{}, 400, "project_id: is required"},
		{"not an object", check.String(), `"x"`, 400, "must be a JSON object"},
		{"no body", check.String(), nil, 400, "request body is required"},
		{"unknown property", check.String(), map[string]any{"project_id": project, "name": "x"}, 400, "name: unknown property"},
		{"project_id a number", check.String(), map[string]any{"project_id": 5}, 400, "project_id: must be a string"},
		{"project_id malformed", check.String(), map[string]any{"project_id": "short"}, 400, "project_id: must be a project id"},
		{"project_id empty", check.String(), map[string]any{"project_id": ""}, 400, "project_id: must be a project id"},
		{"project_id the literal unassigned", check.String(), map[string]any{"project_id": "unassigned"}, 400, "project_id: must be a project id"},
		{"project_id non-canonical", check.String(), map[string]any{"project_id": strings.ToUpper(project)}, 400, "is not a canonical project id"},
		{"check_id too short", "abc", map[string]any{"project_id": project}, 400, "check_id must be at least 8 characters"},
		{"check unknown", uuid.NewString(), map[string]any{"project_id": project}, 404, "check not found"},
		{"check not one of our ids", "not-a-check-id", map[string]any{"project_id": project}, 404, "check not found"},
		{"check of another organization", checkB.String(), map[string]any{"project_id": project}, 404, "check not found"},
		{"check of another organization to null", checkB.String(), map[string]any{"project_id": nil}, 404, "check not found"},
		{"project unknown", check.String(), map[string]any{"project_id": uuid.NewString()}, 404, "project not found"},
		{"project of another organization", check.String(), map[string]any{"project_id": projectB}, 404, "project not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/checks/"+tc.check+"/move", h.tokenA, tc.body)
			expectStatus(t, r, tc.want)
			if !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q lack %q", r.ErrorText(), tc.msg)
			}
		})
	}
	if s := pvReadCheck(t, h, check); s.project != "" {
		t.Fatalf("a refused move changed the check: %+v", s)
	}
	if s := pvReadCheck(t, h, checkB); s.project != "" {
		t.Fatalf("org A moved org B's check: %+v", s)
	}
	r := pvMove(h, h.tokenA, check, map[string]any{"project_id": uuid.NewString()})
	golden(t, "move_project_not_found", r.Raw)

	// Permission: UPTIME_CHECKS:EDIT (PROJECTS grants nothing on checks).
	for _, grants := range [][]string{{"UPTIME_CHECKS:READ"}, {"PROJECTS:EDIT"}} {
		r := pvMove(h, h.token(h.orgA, grants...), check, map[string]any{"project_id": project})
		expectStatus(t, r, http.StatusForbidden)
	}
}

func TestRateLimitPerOrganization(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var limited response
	for i := 0; i < 5000 && limited.Status == 0; i++ {
		r := h.do(http.MethodGet, "/v1/projects", h.tokenA, nil)
		switch r.Status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			limited = r
		default:
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
	}
	if limited.Status == 0 {
		t.Fatal("never rate limited")
	}
	pvExpectError(t, limited, http.StatusTooManyRequests, 429, "rate_limited")
	if s, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After %q", limited.Header.Get("Retry-After"))
	}
	// The bucket is shared by the variables routes and the move, and is the organization's own.
	expectStatus(t, h.do(http.MethodGet, "/v1/env", h.tokenA, nil), http.StatusTooManyRequests)
	expectStatus(t, h.do(http.MethodPost, "/v1/checks/"+uuid.NewString()+"/move", h.tokenA, map[string]any{"project_id": nil}), http.StatusTooManyRequests)
	expectStatus(t, h.do(http.MethodGet, "/v1/projects", h.tokenB, nil), http.StatusOK)
}
