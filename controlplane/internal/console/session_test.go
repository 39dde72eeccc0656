package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/console"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// browser is a cookie-keeping client of the site that does not follow redirects.
type browser struct {
	h      *site
	client *http.Client
}

func (h *site) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &browser{h: h, client: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// cookie is the value of the browser's cookie name ("" when it has none).
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.h.srv.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

type answer struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (a answer) result() map[string]any { m, _ := a.Body["result"].(map[string]any); return m }

func (a answer) errorText() string {
	errs, _ := a.Body["errors"].([]any)
	var parts []string
	for _, e := range errs {
		m, _ := e.(map[string]any)
		s, _ := m["message"].(string)
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// do sends a request; body is JSON unless contentType says otherwise; headers are "Name: value".
func (b *browser) do(method, path, contentType, body string, headers ...string) answer {
	b.h.t.Helper()
	req, err := http.NewRequest(method, b.h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		b.h.t.Fatal(err)
	}
	if body != "" {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	for _, hd := range headers {
		k, v, _ := strings.Cut(hd, ": ")
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &a.Body)
	return a
}

// csrf is the header the console's script adds to changes.
func (b *browser) csrf() string { return console.CSRFHeader + ": " + b.cookie(console.CSRFCookie) }

// signIn signs the browser in with a token and fails the test unless it worked.
func (b *browser) signIn(token string) answer {
	b.h.t.Helper()
	a := b.do("POST", "/console/session", "", `{"token":"`+token+`"}`)
	if a.Status != http.StatusOK {
		b.h.t.Fatalf("sign in: %d %s", a.Status, a.Raw)
	}
	return a
}

func TestTokenSignIn(t *testing.T) {
	h := newSite(t, siteOptions{})
	readOnly, _ := h.token(h.orgA, "UPTIME_CHECKS:READ")
	b := h.browser()

	a := b.signIn(readOnly)
	var session, csrf *http.Cookie
	for _, c := range (&http.Response{Header: a.Header}).Cookies() {
		switch c.Name {
		case console.SessionCookie:
			session = c
		case console.CSRFCookie:
			csrf = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure || session.Path != "/" {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP", session)
	}
	if csrf == nil || csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode || csrf.Value == "" {
		t.Fatalf("CSRF cookie = %+v, want readable by script, SameSite=Strict", csrf)
	}
	if strings.Contains(a.Raw, readOnly) || strings.Contains(a.Raw, session.Value) {
		t.Fatal("the sign-in answer repeats a secret")
	}
	got := b.do("GET", "/console/session", "", "").result()
	if got["kind"] != "token" || got["display"] != "console test" || got["organization_id"] != h.orgA.String() {
		t.Fatalf("session = %v", got)
	}
	if perms, _ := got["permissions"].([]any); len(perms) != 1 || perms[0] != "UPTIME_CHECKS:READ" {
		t.Fatalf("permissions = %v, want exactly the token's [UPTIME_CHECKS:READ]", got["permissions"])
	}
	if orgs, _ := got["organizations"].([]any); len(orgs) != 1 {
		t.Fatalf("organizations = %v, want the token's one", got["organizations"])
	}

	// The cookie stands in for the bearer token on /v1, with the token's permissions exactly.
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusOK {
		t.Fatalf("GET /v1/checks with the session: %d %s", a.Status, a.Raw)
	}
	if a := b.do("GET", "/v1/projects", "", ""); a.Status != http.StatusForbidden {
		t.Fatalf("GET /v1/projects without PROJECTS:READ: %d, want 403", a.Status)
	}
	if a := b.do("POST", "/v1/checks", "", `{"name":"x","url":"https://example.com"}`, b.csrf()); a.Status != http.StatusForbidden {
		t.Fatalf("POST /v1/checks with a READ session: %d, want 403: %s", a.Status, a.Raw)
	}

	// Only the hash of the cookie is stored.
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), "SELECT count(*) FROM console_sessions WHERE secret_hash = $1",
		[]byte(session.Value)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a session row holds the cookie itself (%d, %v)", n, err)
	}

	for name, tc := range map[string]struct {
		contentType, body string
		status            int
		field             string
	}{
		"unknown token":   {"", `{"token":"vtg_nope"}`, http.StatusUnauthorized, "token"},
		"missing token":   {"", `{}`, http.StatusBadRequest, "token"},
		"token not text":  {"", `{"token":5}`, http.StatusBadRequest, "token"},
		"unknown field":   {"", `{"token":"x","password":"y"}`, http.StatusBadRequest, "password"},
		"not JSON":        {"", `{`, http.StatusBadRequest, "body"},
		"empty form":      {"application/x-www-form-urlencoded", "token=", http.StatusBadRequest, "token"},
		"form with token": {"application/x-www-form-urlencoded", "token=" + url.QueryEscape(h.tokenB), http.StatusOK, ""},
	} {
		t.Run(name, func(t *testing.T) {
			a := h.browser().do("POST", "/console/session", tc.contentType, tc.body)
			if a.Status != tc.status || (tc.field != "" && !strings.HasPrefix(a.errorText(), tc.field+":")) {
				t.Fatalf("%d %s, want %d naming %q", a.Status, a.Raw, tc.status, tc.field)
			}
			if a.Status != http.StatusOK && a.Body["success"] != false {
				t.Fatalf("not a failure envelope: %s", a.Raw)
			}
		})
	}

	if o := h.browser().do("GET", "/console/signin/options", "", "").result(); o["token"] != true || o["email"] != false || o["oidc"] != false {
		t.Fatalf("sign-in options without SMTP or OpenID Connect = %v", o)
	}
	if a := h.browser().do("GET", "/console/session", "", ""); a.Status != http.StatusUnauthorized || a.Body["success"] != false {
		t.Fatalf("GET /console/session without a session: %d %s", a.Status, a.Raw)
	}
}

func TestCSRF(t *testing.T) {
	h := newSite(t, siteOptions{})
	b := h.browser()
	b.signIn(h.tokenA)
	project := `{"name":"Payments"}`

	// Another site's form posts with the visitor's cookies but cannot read the CSRF cookie.
	if a := b.do("POST", "/v1/projects", "application/x-www-form-urlencoded", "name=Payments",
		"Origin: https://evil.example", "Sec-Fetch-Site: cross-site"); a.Status != http.StatusForbidden || !strings.Contains(a.errorText(), "X-CSRF-Token") {
		t.Fatalf("cross-site form post: %d %s, want 403 naming X-CSRF-Token", a.Status, a.Raw)
	}
	if a := b.do("POST", "/v1/projects", "", project, console.CSRFHeader+": forged"); a.Status != http.StatusForbidden {
		t.Fatalf("wrong X-CSRF-Token: %d, want 403", a.Status)
	}
	if a := b.do("POST", "/v1/projects", "", project, b.csrf()); a.Status != http.StatusOK && a.Status != http.StatusCreated {
		t.Fatalf("POST with the CSRF token: %d %s", a.Status, a.Raw)
	}
	// The CSRF value is the session's own: another session's pair does not pass.
	other := h.browser()
	other.signIn(h.tokenA)
	if a := b.do("POST", "/v1/projects", "", `{"name":"Other"}`, console.CSRFHeader+": "+other.cookie(console.CSRFCookie),
		"Cookie: "+console.SessionCookie+"="+b.cookie(console.SessionCookie)+"; "+console.CSRFCookie+"="+other.cookie(console.CSRFCookie)); a.Status != http.StatusForbidden {
		t.Fatalf("another session's CSRF pair: %d, want 403", a.Status)
	}
	// Bearer requests are unaffected.
	bearer := h.browser()
	if a := bearer.do("POST", "/v1/projects", "", `{"name":"Bearer"}`, "Authorization: Bearer "+h.tokenA); a.Status != http.StatusOK && a.Status != http.StatusCreated {
		t.Fatalf("bearer POST: %d %s", a.Status, a.Raw)
	}
	// A sign-in from another site's page is refused (login CSRF).
	if a := h.browser().do("POST", "/console/session", "application/x-www-form-urlencoded", "token="+url.QueryEscape(h.tokenB),
		"Origin: https://evil.example"); a.Status != http.StatusForbidden {
		t.Fatalf("cross-site sign-in: %d, want 403", a.Status)
	}
}

func TestRevokedTokenEndsSession(t *testing.T) {
	h := newSite(t, siteOptions{})
	secret, id := h.token(h.orgA, auth.AllGrants()...)
	b := h.browser()
	b.signIn(secret)
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusOK { // cached by the authenticator now
		t.Fatalf("before revocation: %d", a.Status)
	}
	admin := h.browser()
	if a := admin.do("DELETE", "/v1/tokens/"+id.String(), "", "", "Authorization: Bearer "+h.tokenA); a.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", a.Status, a.Raw)
	}
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusUnauthorized {
		t.Fatalf("the next request after revocation: %d, want 401", a.Status)
	}
	if a := b.do("GET", "/console/session", "", ""); a.Status != http.StatusUnauthorized {
		t.Fatalf("GET /console/session after revocation: %d, want 401", a.Status)
	}
}

func TestSignOut(t *testing.T) {
	h := newSite(t, siteOptions{})
	b := h.browser()
	b.signIn(h.tokenA)
	if a := b.do("DELETE", "/console/session", "", ""); a.Status != http.StatusForbidden {
		t.Fatalf("sign-out without the CSRF token: %d, want 403", a.Status)
	}
	stolen := b.cookie(console.SessionCookie)
	if a := b.do("DELETE", "/console/session", "", "", b.csrf()); a.Status != http.StatusOK {
		t.Fatalf("sign-out: %d %s", a.Status, a.Raw)
	}
	if b.cookie(console.SessionCookie) != "" {
		t.Fatal("the session cookie was not cleared")
	}
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), "SELECT count(*) FROM console_sessions").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d sessions left after sign-out (%v)", n, err)
	}
	// The old cookie, replayed, is nobody's.
	if a := h.browser().do("GET", "/v1/checks", "", "", "Cookie: "+console.SessionCookie+"="+stolen); a.Status != http.StatusUnauthorized {
		t.Fatalf("replayed cookie after sign-out: %d, want 401", a.Status)
	}
}

func TestOrganizationSwitch(t *testing.T) {
	h := newSite(t, siteOptions{})
	ctx := context.Background()
	u, err := h.st.EnsureUser(ctx, "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, org := range []uuid.UUID{h.orgA, h.orgB} {
		if err := h.st.AddMembership(ctx, org, u.ID, "ADMIN"); err != nil {
			t.Fatal(err)
		}
	}
	secret, hash := auth.NewSecret()
	if _, err := h.st.CreateAccessToken(ctx, u.ID, auth.AllGrants(), nil, hash); err != nil {
		t.Fatal(err)
	}
	other, err := h.st.CreateOrganization(ctx, "Org C", "paid")
	if err != nil {
		t.Fatal(err)
	}
	bearer := h.browser()
	if a := bearer.do("POST", "/v1/projects", "", `{"name":"Only in B"}`, "Authorization: Bearer "+h.tokenB); a.Status >= 300 {
		t.Fatalf("create a project in B: %d %s", a.Status, a.Raw)
	}

	b := h.browser()
	got := b.signIn(secret).result()
	if got["kind"] != "user" || got["organization_id"] != h.orgA.String() || len(got["organizations"].([]any)) != 2 {
		t.Fatalf("a two-organization user's session = %v, want kind user in Org A (first by name) of two", got)
	}
	if a := b.do("GET", "/v1/projects", "", ""); a.Status != http.StatusOK || strings.Contains(a.Raw, "Only in B") {
		t.Fatalf("projects in A: %d %s", a.Status, a.Raw)
	}
	if a := b.do("POST", "/console/session/organization", "", `{"organization_id":"`+h.orgB.String()+`"}`); a.Status != http.StatusForbidden {
		t.Fatalf("switch without the CSRF token: %d, want 403", a.Status)
	}
	a := b.do("POST", "/console/session/organization", "", `{"organization_id":"`+h.orgB.String()+`"}`, b.csrf())
	if a.Status != http.StatusOK || a.result()["organization_id"] != h.orgB.String() {
		t.Fatalf("switch to B: %d %s", a.Status, a.Raw)
	}
	if a := b.do("GET", "/v1/projects", "", ""); a.Status != http.StatusOK || !strings.Contains(a.Raw, "Only in B") {
		t.Fatalf("projects after switching to B: %d %s", a.Status, a.Raw)
	}
	for name, tc := range map[string]struct {
		body   string
		status int
	}{
		"another organization": {`{"organization_id":"` + other.ID.String() + `"}`, http.StatusNotFound},
		"not an id":            {`{"organization_id":"B"}`, http.StatusBadRequest},
		"missing":              {`{}`, http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			if a := b.do("POST", "/console/session/organization", "", tc.body, b.csrf()); a.Status != tc.status {
				t.Fatalf("%d %s, want %d", a.Status, a.Raw, tc.status)
			}
		})
	}
}

func TestSignInRateLimited(t *testing.T) {
	h := newSite(t, siteOptions{})
	b := h.browser()
	var last answer
	for range 11 {
		last = b.do("POST", "/console/session", "", `{"token":"vtg_guess"}`)
	}
	if last.Status != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Fatalf("the 11th attempt in a row: %d %s, want 429 with Retry-After", last.Status, last.Raw)
	}
	// The right token is refused too until the wait is over: the limit is per address.
	if a := b.do("POST", "/console/session", "", `{"token":"`+h.tokenA+`"}`); a.Status != http.StatusTooManyRequests {
		t.Fatalf("a good token while limited: %d, want 429", a.Status)
	}
}

func TestSecureCookiesBehindTLS(t *testing.T) {
	h := newSite(t, siteOptions{proxies: []string{"127.0.0.1", "::1"}})
	for name, tc := range map[string]struct {
		proto  string
		secure bool
	}{"https at the proxy": {"https", true}, "http at the proxy": {"http", false}} {
		t.Run(name, func(t *testing.T) {
			a := h.browser().do("POST", "/console/session", "", `{"token":"`+h.tokenA+`"}`, "X-Forwarded-Proto: "+tc.proto)
			cookies := (&http.Response{Header: a.Header}).Cookies()
			if a.Status != http.StatusOK || len(cookies) != 2 {
				t.Fatalf("%d %s", a.Status, a.Raw)
			}
			for _, c := range cookies {
				if c.Secure != tc.secure {
					t.Fatalf("cookie %s Secure = %v, want %v", c.Name, c.Secure, tc.secure)
				}
			}
		})
	}
}

func TestTokenLink(t *testing.T) {
	h := newSite(t, siteOptions{})
	link, err := console.TokenLink(context.Background(), h.st, h.srv.URL, auth.HashSecret(h.tokenA), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(link, h.srv.URL)
	b := h.browser()
	a := b.do("GET", path, "", "")
	if a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/console/" {
		t.Fatalf("GET the link: %d %s, want 303 to /console/", a.Status, a.Header.Get("Location"))
	}
	if s := b.do("GET", "/console/session", "", ""); s.Status != http.StatusOK || s.result()["organization_id"] != h.orgA.String() {
		t.Fatalf("session from the link: %d %s", s.Status, s.Raw)
	}
	if a := h.browser().do("GET", path, "", ""); a.Status != http.StatusNotFound {
		t.Fatalf("the link used twice: %d, want 404", a.Status)
	}
	expired, err := console.TokenLink(context.Background(), h.st, h.srv.URL, auth.HashSecret(h.tokenA), time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if a := h.browser().do("GET", strings.TrimPrefix(expired, h.srv.URL), "", ""); a.Status != http.StatusNotFound {
		t.Fatalf("an expired link: %d, want 404", a.Status)
	}
}

func TestSessionExpires(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	h := newSite(t, siteOptions{now: clock})

	b := h.browser()
	got := b.signIn(h.tokenA).result()
	if exp, err := time.Parse(time.RFC3339, got["expires_at"].(string)); err != nil || exp.Sub(clock()).Round(time.Minute) != 12*time.Hour {
		t.Fatalf("expires_at = %v, want the default 12h from sign-in", got["expires_at"])
	}
	advance(12*time.Hour - time.Minute)
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusOK {
		t.Fatalf("a minute before expiry: %d", a.Status)
	}
	advance(2 * time.Minute)
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusUnauthorized {
		t.Fatalf("after expiry: %d, want 401", a.Status)
	}

	// A token that expires sooner ends its session with it.
	secret, hash := auth.NewSecret()
	soon := clock().Add(time.Hour)
	if _, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{OrgID: h.orgA, Name: "short",
		Grants: auth.AllGrants(), ExpiresAt: &soon, SecretHash: hash}); err != nil {
		t.Fatal(err)
	}
	got = h.browser().signIn(secret).result()
	if exp, err := time.Parse(time.RFC3339, got["expires_at"].(string)); err != nil || !exp.Equal(soon.Truncate(time.Second)) {
		t.Fatalf("expires_at = %v, want the token's %v", got["expires_at"], soon)
	}
}
