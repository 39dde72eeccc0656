package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
)

func TestEnvelopeOnUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do(http.MethodGet, "/v1/does-not-exist", h.tokenA, nil)
	expectStatus(t, r, http.StatusNotFound)
	r = h.do(http.MethodPut, "/v1/checks", h.tokenA, nil)
	expectStatus(t, r, http.StatusMethodNotAllowed)
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readOnly := h.token(h.orgA, "UPTIME_CHECKS:READ")
	none := h.token(h.orgA)
	cases := []struct {
		name    string
		method  string
		token   string
		headers []string
		want    int
		message string
	}{
		{"missing token", http.MethodGet, "", nil, http.StatusUnauthorized, "missing bearer token"},
		{"unknown token", http.MethodGet, "vtg_nope", nil, http.StatusUnauthorized, "invalid or expired token"},
		{"no permission", http.MethodGet, none, nil, http.StatusForbidden, "UPTIME_CHECKS:READ"},
		{"read cannot edit", http.MethodPost, readOnly, nil, http.StatusForbidden, "UPTIME_CHECKS:EDIT"},
		{"org header naming another org", http.MethodGet, h.tokenA, []string{"X-Service-Organisation: " + h.orgB.String()}, http.StatusForbidden, "does not cover"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, "/v1/checks", tc.token, map[string]any{}, tc.headers...)
			expectStatus(t, r, tc.want)
			if !strings.Contains(r.FirstError(), tc.message) {
				t.Fatalf("message %q does not mention %q", r.FirstError(), tc.message)
			}
		})
	}
}

func TestPermissionsEditImpliesRead(t *testing.T) {
	t.Parallel()
	p := auth.NewPermissions([]string{"WEBHOOKS:EDIT", "PEOPLE:READ"})
	if !p.Allows(auth.Webhooks, auth.Read) || !p.Allows(auth.Webhooks, auth.Edit) {
		t.Fatal("EDIT must grant READ and EDIT")
	}
	if !p.Allows(auth.People, auth.Read) || p.Allows(auth.People, auth.Edit) {
		t.Fatal("READ must grant READ only")
	}
	if p.Allows(auth.UptimeChecks, auth.Read) {
		t.Fatal("no grant must grant nothing")
	}
}

func TestCheckChangesAreAnnounced(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do(http.MethodPost, "/v1/checks", h.tokenA, map[string]any{"name": "a", "url": "https://example.com"})
	expectStatus(t, r, http.StatusCreated)
	id := r.Result()["id"].(string)
	expectStatus(t, h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"paused": true}), http.StatusOK)
	expectStatus(t, h.do(http.MethodPost, "/v1/checks/"+id+"/move", h.tokenA, map[string]any{"project_id": nil}), http.StatusOK)
	expectStatus(t, h.do(http.MethodDelete, "/v1/checks/"+id, h.tokenA, nil), http.StatusOK)
	// A refused change announces nothing.
	expectStatus(t, h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"paused": true}), http.StatusNotFound)
	got := h.changedChecks()
	if len(got) != 4 {
		t.Fatalf("announced %d changes, want 4 (create, patch, move, delete): %v", len(got), got)
	}
	for _, g := range got {
		if g.String() != id {
			t.Fatalf("announced %s, want %s", g, id)
		}
	}
}

func TestVariableChangesAnnounceTheirChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	expectStatus(t, h.do(http.MethodPost, "/v1/env", h.tokenA, map[string]any{"name": "API_TOKEN", "type": "secret", "value": "one"}), http.StatusCreated)
	r := h.do(http.MethodPost, "/v1/checks/uptime", h.tokenA, map[string]any{"name": "uses var", "url": "https://example.com",
		"headers": map[string]string{"Authorization": "Bearer {{API_TOKEN}}"}})
	expectStatus(t, r, http.StatusCreated)
	checkID := r.Result()["id"].(string)
	other := h.do(http.MethodPost, "/v1/checks/uptime", h.tokenA, map[string]any{"name": "no var", "url": "https://example.com"})
	expectStatus(t, other, http.StatusCreated)

	list := h.do(http.MethodGet, "/v1/env", h.tokenA, nil)
	varID := list.Items()[0]["id"].(string)
	before := len(h.changedChecks())
	expectStatus(t, h.do(http.MethodPatch, "/v1/env/"+varID, h.tokenA, map[string]any{"value": "two"}), http.StatusOK)
	got := h.changedChecks()[before:]
	if len(got) != 1 || got[0].String() != checkID {
		t.Fatalf("a new value announced %v, want only the referencing check %s", got, checkID)
	}
}
