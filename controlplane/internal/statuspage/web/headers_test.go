package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestStatusPageSecurityHeaders: every response of the public site — the page, its password
// form, a page that does not exist, a form post — forbids framing and content sniffing and
// carries the Content-Security-Policy, not only the rendered page.
func TestStatusPageSecurityHeaders(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	open := newFixture(t, st, store.StatusPageInput{Name: "Open Co", Subdomain: "open"})
	open.component("API", [16]byte{}, false)
	hash := hashPassword(t, "correct horse")
	newFixture(t, st, store.StatusPageInput{Name: "Locked Co", Subdomain: "locked", PasswordHash: &hash})
	srv := serve(t, open.handler(Config{}))

	cases := []struct {
		name, method, path string
		form               url.Values
	}{
		{"page", http.MethodGet, "/status/open", nil},
		{"history", http.MethodGet, "/status/open/history", nil},
		{"password form", http.MethodGet, "/status/locked", nil},
		{"wrong password", http.MethodPost, "/status/locked/login", url.Values{"password": {"nope"}}},
		{"no such page", http.MethodGet, "/status/nobody-here", nil},
		{"invalid subdomain", http.MethodGet, "/status/-x-", nil},
		{"method not allowed", http.MethodDelete, "/status/open", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := get(t, tc.method, srv.URL+tc.path, "", tc.form, nil)
			h := resp.Header
			if got := h.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("%d: X-Frame-Options %q, want DENY", resp.StatusCode, got)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%d: X-Content-Type-Options %q, want nosniff", resp.StatusCode, got)
			}
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("%d: Content-Security-Policy %q lacks %s", resp.StatusCode, csp, want)
				}
			}
		})
	}
}
