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
