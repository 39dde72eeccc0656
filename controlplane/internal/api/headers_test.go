package api

import (
	"net/http"
	"testing"
)

// TestAPISecurityHeaders: every API answer — success, failure, unauthenticated, unknown route —
// tells browsers not to sniff its type and caches nothing (answers carry tenant data and
// secrets: a token is shown once, in the create answer).
func TestAPISecurityHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"list", http.MethodGet, "/v1/checks", h.tokenA, nil, http.StatusOK},
		{"token create (secret shown once)", http.MethodPost, "/v1/tokens", h.tokenA,
			map[string]any{"name": "ci", "grants": []map[string]string{{"scope": "WEBHOOKS", "permission": "READ"}}}, http.StatusCreated},
		{"verify", http.MethodGet, "/v1/tokens/verify", h.tokenA, nil, http.StatusOK},
		{"unauthenticated", http.MethodGet, "/v1/checks", "", nil, http.StatusUnauthorized},
		{"bad input", http.MethodPost, "/v1/checks", h.tokenA, "{", http.StatusBadRequest},
		{"unknown route", http.MethodGet, "/v1/nothing-here", h.tokenA, nil, http.StatusNotFound},
		{"method not allowed", http.MethodPut, "/v1/checks", h.tokenA, nil, http.StatusMethodNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.token, tc.body)
			expectStatus(t, r, tc.status)
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			if got := r.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
		})
	}
}
