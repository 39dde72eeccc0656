package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestPublicStatusPagesMounted checks Deps.Public: /status/* and unmatched requests for a
// status or custom domain reach the public pages, with gin's client IP (behind trusted
// proxies); everything else is still the API's.
func TestPublicStatusPagesMounted(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, err := st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	domain := "status.open.test"
	pages := statusPages(t, st, nil)
	if _, err := pages.CreateStatusPage(ctx, store.SystemActor, org.ID, store.StatusPageInput{Name: "Open", Subdomain: "open", CustomDomain: &domain}); err != nil {
		t.Fatal(err)
	}
	// The domain's TXT record was verified (TestCustomDomainVerifiedByDNS does it through DNS).
	if _, err := st.Pool().Exec(ctx, "UPDATE status_pages SET custom_domain_verified_at = now() WHERE custom_domain = $1", domain); err != nil {
		t.Fatal(err)
	}
	ips := []string{"10.0.0.0/8"}
	if _, err := pages.CreateStatusPage(ctx, store.SystemActor, org.ID, store.StatusPageInput{Name: "Internal", Subdomain: "internal", AllowedIPs: &ips}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	public := publicSite(t, st, web.Config{StatusDomain: "status.vantage.test", APIHost: "api.vantage.test"},
		web.Deps{Store: pages, Logger: logger, ClientIP: ClientIP})
	deps := func(public http.Handler) Deps {
		return Deps{Logger: logger, Store: st, Auth: newAuthenticator(t, st, time.Now), Registry: prometheus.NewRegistry(),
			Now: time.Now, Ready: st.Ping, TrustedProxies: []string{"192.0.2.1"}, Public: public}
	}
	withPublic, err := New(deps(public))
	if err != nil {
		t.Fatal(err)
	}
	without, err := New(deps(nil))
	if err != nil {
		t.Fatal(err)
	}
	call := func(h http.Handler, method, host, path, forwardedFor string, form url.Values) *httptest.ResponseRecorder {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req := httptest.NewRequest(method, path, body)
		req.Host = host
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if forwardedFor != "" {
			req.Header.Set("X-Forwarded-For", forwardedFor)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const html, jsonType = "text/html; charset=utf-8", "application/json"
	cases := []struct {
		name, method, host, path, xff string
		form                          url.Values
		public                        bool
		status                        int
		contentType, contains         string
	}{
		{"page by path", "GET", "api.vantage.test", "/status/open", "", nil, true, 200, html, "<h1>Open</h1>"},
		{"feed by path", "GET", "api.vantage.test", "/status/open/feed.atom", "", nil, true, 200, "application/atom+xml", "<feed"},
		{"subscribe by path", "POST", "api.vantage.test", "/status/open/subscribe", "", url.Values{"email": {"a@example.com"}}, true, 200, html, "Check your inbox"},
		{"status subdomain", "GET", "open.status.vantage.test", "/", "", nil, true, 200, html, `action="/subscribe"`},
		{"custom domain", "GET", "status.open.test", "/history", "", nil, true, 200, html, "Incident history"},
		{"allowed client behind a trusted proxy", "GET", "api.vantage.test", "/status/internal", "10.1.2.3", nil, true, 200, html, "<h1>Internal</h1>"},
		{"client outside allowed_ips", "GET", "api.vantage.test", "/status/internal", "203.0.113.9", nil, true, 404, html, "There is no status page here"},
		{"unknown custom domain", "GET", "status.other.test", "/", "", nil, true, 404, html, "There is no status page here"},
		{"API host unknown path stays JSON", "GET", "api.vantage.test", "/nope", "", nil, true, 404, jsonType, `"success":false`},
		{"/v1 on a custom domain stays JSON", "GET", "status.open.test", "/v1/nope", "", nil, true, 404, jsonType, `"success":false`},
		{"summary still public", "GET", "api.vantage.test", "/v1/status_pages/open/summary", "", nil, true, 200, jsonType, `"All Systems Operational"`},
		{"summary of an IP-restricted page", "GET", "api.vantage.test", "/v1/status_pages/internal/summary", "10.1.2.3", nil, true, 404, jsonType, `"success":false`},
		{"healthz", "GET", "api.vantage.test", "/healthz", "", nil, true, 200, jsonType, "ok"},
		{"no Public: /status is a JSON 404", "GET", "api.vantage.test", "/status/open", "", nil, false, 404, jsonType, `"success":false`},
		{"no Public: custom domain is a JSON 404", "GET", "status.open.test", "/", "", nil, false, 404, jsonType, `"success":false`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := without
			if tc.public {
				h = withPublic
			}
			if tc.form != nil && strings.HasSuffix(tc.path, "/subscribe") {
				// The subscribe form carries the token of the page it was rendered in.
				page := call(h, http.MethodGet, tc.host, strings.TrimSuffix(tc.path, "/subscribe"), tc.xff, nil)
				m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(page.Body.String())
				if m == nil {
					t.Fatalf("no form token in the page: %.300s", page.Body.String())
				}
				tc.form.Set("token", m[1])
			}
			rec := call(h, tc.method, tc.host, tc.path, tc.xff, tc.form)
			if rec.Code != tc.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.contentType) ||
				!strings.Contains(rec.Body.String(), tc.contains) {
				t.Fatalf("%d %q (want %d %q), body lacks %q:\n%.300s", rec.Code, rec.Header().Get("Content-Type"),
					tc.status, tc.contentType, tc.contains, rec.Body.String())
			}
			if tc.contentType == jsonType && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("not JSON: %s", rec.Body.String())
			}
		})
	}
}

// publicSite is the public status-page handler with cfg and deps, signed with a test cookie key,
// its rate limits on st.
func publicSite(t *testing.T, st *store.Store, cfg web.Config, deps web.Deps) *web.Handler {
	t.Helper()
	cfg.CookieKey = []byte("0123456789abcdef0123456789abcdef")
	lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	deps.Limiter = lim
	h, err := web.NewHandler(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
