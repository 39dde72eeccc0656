package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/vantagehq/vantage/controlplane/internal/console"
)

// provider is a real OpenID Provider: zitadel/oidc's op package as its example server sets it
// up (in-memory storage, a login form, RS256-signed ID tokens), on a local listener. Its user
// test-user@<host> (password "verysecure") has the verified address test-user@zitadel.ch.
type provider struct {
	srv *httptest.Server
}

const (
	oidcClientID     = "vantage-console"
	oidcClientSecret = "console-secret"
	oidcUserEmail    = "test-user@zitadel.ch"
)

func startProvider(t *testing.T, redirect string) *provider {
	t.Helper()
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	storage.RegisterClients(storage.WebClient(oidcClientID, oidcClientSecret, redirect))
	handler = exampleop.SetupServer(srv.URL, storage.NewStorage(storage.NewUserStore(srv.URL)), nil, false)
	return &provider{srv: srv}
}

// follow sends GET (or POST with form) requests, following redirects by hand across the
// console and the provider with the browser's cookies, until an answer that is not a redirect
// or one to the console's own /console/. It returns the last answer and the URL it came from.
func (b *browser) follow(method, target string, form url.Values) (answer, string) {
	b.h.t.Helper()
	for range 10 {
		var body string
		if form != nil {
			body = form.Encode()
		}
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			b.h.t.Fatal(err)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := b.client.Do(req)
		if err != nil {
			b.h.t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || loc == "/console/" {
			return answer{Status: resp.StatusCode, Header: resp.Header}, target
		}
		next, err := resp.Request.URL.Parse(loc)
		if err != nil {
			b.h.t.Fatal(err)
		}
		target, method, form = next.String(), http.MethodGet, nil
	}
	b.h.t.Fatal("too many redirects")
	return answer{}, ""
}

// TestOIDCSignIn signs a member in through a local OpenID Provider: the console's redirect, the
// provider's login form, the code exchange with PKCE, the ID token's verification, and the
// session of the user with the provider's verified address.
func TestOIDCSignIn(t *testing.T) {
	var op *provider
	h := newSite(t, siteOptions{oidc: func(publicURL string) console.OIDCConfig {
		op = startProvider(t, publicURL+"/console/signin/oidc/callback")
		return console.OIDCConfig{Issuer: op.srv.URL, ClientID: oidcClientID, ClientSecret: oidcClientSecret}
	}})
	ctx := context.Background()
	opHost, _ := url.Parse(op.srv.URL)
	login := func(b *browser) answer {
		t.Helper()
		// To the provider's login form.
		a, at := b.follow(http.MethodGet, h.srv.URL+"/console/signin/oidc", nil)
		u, _ := url.Parse(at)
		if a.Status != http.StatusOK || u.Host != opHost.Host || !strings.HasPrefix(u.Path, "/login/username") {
			t.Fatalf("the sign-in did not reach the provider's login form: %d at %s", a.Status, at)
		}
		form := url.Values{"id": {u.Query().Get("authRequestID")}, "username": {"test-user@" + opHost.Hostname()}, "password": {"verysecure"}}
		a, at = b.follow(http.MethodPost, op.srv.URL+"/login/username", form)
		if !strings.HasPrefix(at, h.srv.URL+"/console/signin/oidc/callback") {
			t.Fatalf("the provider did not send the browser back to the console: %d at %s", a.Status, at)
		}
		return a
	}

	if o := h.browser().do("GET", "/console/signin/options", "", "").result(); o["oidc"] != true || o["oidc_url"] != "/console/signin/oidc" {
		t.Fatalf("sign-in options with a provider = %v", o)
	}

	// A user with the address but of no organization is not signed in.
	if a := login(h.browser()); a.Status != http.StatusForbidden {
		t.Fatalf("a provider user without a Vantage membership: %d, want 403", a.Status)
	}

	u, err := h.st.EnsureUser(ctx, oidcUserEmail)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.st.AddMembership(ctx, h.orgA, u.ID, "ADMIN"); err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	if a := login(b); a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/console/" {
		t.Fatalf("the callback: %d, want 303 to /console/", a.Status)
	}
	s := b.do("GET", "/console/session", "", "")
	if s.Status != http.StatusOK || s.result()["kind"] != "user" || s.result()["display"] != oidcUserEmail ||
		s.result()["organization_id"] != h.orgA.String() {
		t.Fatalf("the session after OpenID Connect: %d %s", s.Status, s.Raw)
	}
	if a := b.do("POST", "/v1/projects", "", `{"name":"From SSO"}`, b.csrf()); a.Status >= 300 {
		t.Fatalf("an ADMIN member's change: %d %s", a.Status, a.Raw)
	}

	// A callback that did not start in this browser (no flow cookie, or another state) is refused.
	if a := h.browser().do("GET", "/console/signin/oidc/callback?code=x&state=y", "", ""); a.Status != http.StatusBadRequest {
		t.Fatalf("a callback without its flow: %d, want 400", a.Status)
	}
}
