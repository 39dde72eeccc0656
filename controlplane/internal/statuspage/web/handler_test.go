package web

import (
	"compress/gzip"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// get fetches url (with Host when non-empty and the given cookies) and returns the response
// and its (decoded) body.
func get(t testing.TB, method, rawURL, host string, form url.Values, hdr map[string]string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := io.Reader(resp.Body)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// inOrder fails unless every string occurs in s, in this order.
func inOrder(t *testing.T, s string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q missing (or out of order) after offset %d in:\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

func day(back int) string {
	return time.Now().UTC().AddDate(0, 0, -back).Format(time.DateOnly)
}

func TestStatusPagePublicHTML(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := richFixture(t, st, "acme")
	srv := serve(t, f.handler(Config{}))

	resp, body := get(t, http.MethodGet, srv.URL+"/status/acme", "", nil, map[string]string{"Accept-Encoding": "gzip"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=30" {
		t.Fatalf("Cache-Control %q", cc)
	}
	if resp.Header.Get("X-Robots-Tag") != "" || strings.Contains(body, `name="robots"`) {
		t.Fatal("a page visible to search engines is marked noindex")
	}
	inOrder(t, body,
		`<h1>Acme Cloud</h1>`, "Live status of Acme&#39;s services",
		`role="status"><p>Minor Service Outage</p>`,
		"Active incidents", "Elevated CDN errors", "Partial outage", "Affected: CDN",
		"<strong>Identified</strong>", "A faulty edge node was found and removed.",
		"<strong>Investigating</strong>", "We are investigating errors on the CDN.",
		"Scheduled maintenance", "Database upgrade", "Scheduled for", "Affected: Dashboard",
		"The primary database moves to a new version.",
		"Components", "Status webhooks",
		"<h3>Core platform</h3>", "The API and the dashboard", "Public API", "Operational", "Dashboard",
		"<h3>Edge</h3>", "CDN", "Partial outage",
		"Past incidents", "Dashboard login delays", "<strong>Resolved</strong>", "Logins are fast again.",
		`href="/status/acme/history"`,
		`action="/status/acme/subscribe"`, `type="email"`, `name="email"`,
		`href="/status/acme/feed.atom"`)
	for _, want := range []string{
		`aria-label="` + day(3) + `: 80.00% uptime"`,
		`aria-label="` + day(10) + `: 99.93% uptime"`,
		`aria-label="` + day(0) + `: 100% uptime"`,
		`aria-label="` + day(89) + `: 100% uptime"`,
		`<meta name="viewport"`, `prefers-color-scheme: dark`, `<main id="main"`, `lang="en"`,
		`rel="alternate" type="application/atom+xml"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// 90 bars for each of the two components fed by checks; the Dashboard has no history yet.
	if n := strings.Count(body, `role="img"`); n != 2*90 {
		t.Errorf("%d uptime bars, want 180", n)
	}
	inOrder(t, body, "Public API", "99.77% uptime", "Dashboard", "No data yet")
	if !strings.Contains(body, `: no data"`) || strings.Contains(body, "http://") && strings.Contains(body, "<link rel=\"stylesheet\"") {
		t.Error("missing no-data days, or an external stylesheet")
	}
	for _, external := range []string{"<script", "https://", "@import", "<link rel=\"stylesheet\""} {
		if strings.Contains(body, external) {
			t.Errorf("page loads something external: %s", external)
		}
	}

	// HEAD and plain (uncompressed) requests.
	resp, body2 := get(t, http.MethodGet, srv.URL+"/status/ACME/", "", nil, map[string]string{"Accept-Encoding": "identity"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !strings.Contains(body2, "Acme Cloud") {
		t.Fatalf("plain GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if resp, _ := get(t, http.MethodHead, srv.URL+"/status/acme", "", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("HEAD: %d", resp.StatusCode)
	}
	if resp, _ := get(t, http.MethodDelete, srv.URL+"/status/acme", "", nil, nil); resp.StatusCode != 405 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for _, path := range []string{"/status/nope", "/status/acme/nope", "/status/-bad-", "/status/"} {
		if resp, body := get(t, http.MethodGet, srv.URL+path, "", nil, nil); resp.StatusCode != 404 || !strings.Contains(body, "There is no status page here") {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}

func TestStatusPagePublicHistoryAndFeed(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := richFixture(t, st, "acme")
	srv := serve(t, f.handler(Config{}))

	resp, body := get(t, http.MethodGet, srv.URL+"/status/acme/history", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("history: %d", resp.StatusCode)
	}
	inOrder(t, body, "Incident history", "Dashboard login delays", "<strong>Resolved</strong>", "Logins are fast again.",
		"<strong>Investigating</strong>", "Logins are slow.")
	if strings.Contains(body, "Elevated CDN errors") {
		t.Fatal("history lists an active incident")
	}

	resp, body = get(t, http.MethodGet, srv.URL+"/status/acme/feed.atom", "", nil, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/atom+xml") {
		t.Fatalf("feed: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var feed struct {
		XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
		Title   string   `xml:"title"`
		ID      string   `xml:"id"`
		Updated string   `xml:"updated"`
		Links   []struct {
			Rel  string `xml:"rel,attr"`
			Href string `xml:"href,attr"`
		} `xml:"link"`
		Author struct {
			Name string `xml:"name"`
		} `xml:"author"`
		Entries []struct {
			Title   string `xml:"title"`
			ID      string `xml:"id"`
			Updated string `xml:"updated"`
			Content struct {
				Type string `xml:"type,attr"`
				Body string `xml:",chardata"`
			} `xml:"content"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal([]byte(body), &feed); err != nil {
		t.Fatalf("feed is not XML: %v\n%s", err, body)
	}
	if feed.Title != "Acme Cloud · incidents" || feed.ID != "urn:uuid:"+f.page.String() || feed.Author.Name == "" {
		t.Fatalf("feed head: %+v", feed)
	}
	if _, err := time.Parse(time.RFC3339, feed.Updated); err != nil {
		t.Fatalf("feed updated %q: %v", feed.Updated, err)
	}
	self := false
	for _, l := range feed.Links {
		self = self || l.Rel == "self" && l.Href == srv.URL+"/status/acme/feed.atom"
	}
	if !self {
		t.Fatalf("no self link: %+v", feed.Links)
	}
	titles := map[string]bool{}
	for _, e := range feed.Entries {
		titles[e.Title] = true
		if !strings.HasPrefix(e.ID, "urn:uuid:") || e.Content.Type != "html" || !strings.Contains(e.Content.Body, "<li><strong>") {
			t.Fatalf("entry %+v", e)
		}
		if _, err := time.Parse(time.RFC3339, e.Updated); err != nil {
			t.Fatalf("entry updated %q: %v", e.Updated, err)
		}
	}
	if len(feed.Entries) != 3 || !titles["Elevated CDN errors"] || !titles["Dashboard login delays"] || !titles["Database upgrade"] {
		t.Fatalf("entries %v", titles)
	}
}

func TestStatusPagePublicSubscribe(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := richFixture(t, st, "acme")
	srv := serve(t, f.handler(Config{SubscribesPerAddress: 100}))
	_, page := get(t, http.MethodGet, srv.URL+"/status/acme", "", nil, nil)
	token := formToken(t, page)
	post := func(email string) (*http.Response, string) {
		return get(t, http.MethodPost, srv.URL+"/status/acme/subscribe", "", url.Values{"email": {email}, "token": {token}}, nil)
	}
	resp, body := post("Ops@Example.com")
	if resp.StatusCode != 200 || !strings.Contains(body, "Check your inbox") || !strings.Contains(body, `href="/status/acme/"`) {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	subs, total, err := f.sp.ListSubscribers(context.Background(), f.org, f.page, "", 10, 0)
	if err != nil || total != 1 || subs[0].EmailAddress != "Ops@Example.com" || subs[0].Confirmed {
		t.Fatalf("subscribers %+v (%d, %v)", subs, total, err)
	}
	if resp, body := post("ops@example.com"); resp.StatusCode != 200 || !strings.Contains(body, "Already subscribed") {
		t.Fatalf("duplicate: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{"", "nobody", "a@b", "Name <x@example.com>", strings.Repeat("x", 250) + "@example.com", "x@.com"} {
		if resp, body := post(bad); resp.StatusCode != 400 || !strings.Contains(body, "valid e-mail address") {
			t.Errorf("%q: %d", bad, resp.StatusCode)
		}
	}
	if resp, _ := get(t, http.MethodGet, srv.URL+"/status/acme/subscribe", "", nil, nil); resp.StatusCode != 405 {
		t.Fatalf("GET subscribe: %d", resp.StatusCode)
	}
	if _, total, _ := f.sp.ListSubscribers(context.Background(), f.org, f.page, "", 10, 0); total != 1 {
		t.Fatalf("%d subscribers after the rejected ones", total)
	}
}

func TestStatusPagePublicPassword(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hash := hashPassword(t, "correct horse")
	f := newFixture(t, st, store.StatusPageInput{Name: "Secret Co", Subdomain: "secret", PasswordHash: &hash})
	f.component("Vault", [16]byte{}, false)
	srv := serve(t, f.handler(Config{}))

	resp, body := get(t, http.MethodGet, srv.URL+"/status/secret", "", nil, nil)
	if resp.StatusCode != 401 || !strings.Contains(body, `type="password"`) || !strings.Contains(body, `action="/status/secret/login"`) ||
		strings.Contains(body, "Vault") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("locked page: %d %q\n%s", resp.StatusCode, resp.Header.Get("Cache-Control"), body)
	}
	for _, path := range []string{"/feed.atom", "/history"} {
		if resp, body := get(t, http.MethodGet, srv.URL+"/status/secret"+path, "", nil, nil); resp.StatusCode != 401 || strings.Contains(body, "Vault") {
			t.Fatalf("%s without the password: %d", path, resp.StatusCode)
		}
	}
	if resp, _ := get(t, http.MethodPost, srv.URL+"/status/secret/subscribe", "", url.Values{"email": {"a@example.com"}}, nil); resp.StatusCode != 401 {
		t.Fatalf("subscribe without the password: %d", resp.StatusCode)
	}
	resp, body = get(t, http.MethodPost, srv.URL+"/status/secret/login", "", url.Values{"password": {"wrong"}}, nil)
	if resp.StatusCode != 401 || !strings.Contains(body, "not correct") || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	}
	resp, _ = get(t, http.MethodPost, srv.URL+"/status/secret/login", "", url.Values{"password": {"correct horse"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/status/secret/" || len(resp.Cookies()) != 1 {
		t.Fatalf("right password: %d %q %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	c := resp.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/status/secret" || c.Expires.Before(time.Now().Add(24*time.Hour)) {
		t.Fatalf("cookie %+v", c)
	}
	resp, body = get(t, http.MethodGet, srv.URL+"/status/secret", "", nil, nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, "Vault") || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "private") {
		t.Fatalf("unlocked page: %d %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	if resp, _ := get(t, http.MethodGet, srv.URL+"/status/secret/feed.atom", "", nil, nil, c); resp.StatusCode != 200 {
		t.Fatalf("unlocked feed: %d", resp.StatusCode)
	}
	// A forged or tampered cookie does not unlock; neither does one from before a password change.
	forged := &http.Cookie{Name: c.Name, Value: "99999999999." + strings.Repeat("A", 43)}
	if resp, _ := get(t, http.MethodGet, srv.URL+"/status/secret", "", nil, nil, forged); resp.StatusCode != 401 {
		t.Fatalf("forged cookie: %d", resp.StatusCode)
	}
	newHash := hashPassword(t, "battery staple")
	if _, err := f.sp.UpdateStatusPage(context.Background(), store.SystemActor, f.org, f.page,
		store.StatusPageInput{Name: "Secret Co", Subdomain: "secret", PasswordHash: &newHash}); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, http.MethodGet, srv.URL+"/status/secret", "", nil, nil, c); resp.StatusCode != 401 {
		t.Fatalf("cookie after a password change: %d", resp.StatusCode)
	}
}

func TestStatusPagePublicAllowedIPsAndNoindex(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hide := true
	ips := []string{"10.0.0.0/8", "2001:db8::1"}
	f := newFixture(t, st, store.StatusPageInput{Name: "Internal", Subdomain: "internal", AllowedIPs: &ips, HideFromSearchEngines: &hide})
	f.component("Intranet", [16]byte{}, false)
	srv := serve(t, f.handlerWith(Config{}, Deps{ClientIP: func(r *http.Request) string { return r.Header.Get("X-Test-Client") }}))
	cases := []struct {
		name, ip string
		want     int
	}{
		{"inside the range", "10.1.2.3", 200},
		{"listed address", "2001:db8::1", 200},
		{"mapped IPv4", "::ffff:10.9.9.9", 200},
		{"outside", "192.0.2.10", 404},
		{"other IPv6", "2001:db8::2", 404},
		{"unknown", "", 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"", "/feed.atom", "/history"} {
				resp, body := get(t, http.MethodGet, srv.URL+"/status/internal"+path, "", nil, map[string]string{"X-Test-Client": tc.ip})
				if resp.StatusCode != tc.want {
					t.Fatalf("%s: %d, want %d", path, resp.StatusCode, tc.want)
				}
				if tc.want == 404 && strings.Contains(body, "Intranet") {
					t.Fatalf("%s: 404 shows the page", path)
				}
				if resp.Header.Get("X-Robots-Tag") != "noindex" {
					t.Fatalf("%s: X-Robots-Tag %q", path, resp.Header.Get("X-Robots-Tag"))
				}
				if tc.want == 200 && path == "" {
					if !strings.Contains(body, `<meta name="robots" content="noindex">`) || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "private") {
						t.Fatalf("hidden IP-restricted page: robots meta or private cache missing (%q)", resp.Header.Get("Cache-Control"))
					}
				}
			}
		})
	}
}

func TestStatusPagePublicHostRouting(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := richFixture(t, st, "acme")
	domain := "status.acme.test"
	if _, err := f.sp.UpdateStatusPage(context.Background(), store.SystemActor, f.org, f.page,
		store.StatusPageInput{Name: "Acme Cloud", Subdomain: "acme", CustomDomain: &domain}); err != nil {
		t.Fatal(err)
	}
	// The domain's TXT record was verified (the API's verify does this after a DNS lookup).
	f.exec("UPDATE status_pages SET custom_domain_verified_at = now() WHERE id = $1", f.page)
	extra := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "extra "+r.Host+" "+r.URL.Path)
	})
	h := f.handlerWith(Config{StatusDomain: "Status.Vantage.test", APIHost: "api.vantage.test"}, Deps{Extra: extra})
	srv := serve(t, h)

	cases := []struct {
		name, host, path string
		want             int
		contains         string
	}{
		{"status subdomain", "acme.status.vantage.test", "/", 200, `action="/subscribe"`},
		{"status subdomain with port", "ACME.status.vantage.test:8443", "/", 200, `href="/feed.atom"`},
		{"status subdomain history", "acme.status.vantage.test", "/history", 200, "Dashboard login delays"},
		{"custom domain", "status.acme.test", "/", 200, `href="/history"`},
		{"custom domain feed", "status.acme.test", "/feed.atom", 200, "urn:uuid:"},
		{"unknown subdomain", "nope.status.vantage.test", "/", 404, "There is no status page here"},
		{"unknown custom domain", "status.other.test", "/", 404, "There is no status page here"},
		{"path form on any host", "api.vantage.test", "/status/acme", 200, `action="/status/acme/subscribe"`},
		{"extra path form", "api.vantage.test", "/status/acme/confirm", 418, "extra api.vantage.test /status/acme/confirm"},
		{"extra host form", "acme.status.vantage.test", "/unsubscribe", 418, "extra acme.status.vantage.test /status/acme/unsubscribe"},
		{"extra custom domain", "status.acme.test", "/confirm", 418, "extra status.acme.test /status/acme/confirm"},
		{"extra unknown custom domain", "status.other.test", "/confirm", 404, "There is no status page here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, http.MethodGet, srv.URL+tc.path, tc.host, nil, nil)
			if resp.StatusCode != tc.want || !strings.Contains(body, tc.contains) {
				t.Fatalf("%d (want %d), body lacks %q:\n%.400s", resp.StatusCode, tc.want, tc.contains, body)
			}
		})
	}

	router := h.(interface{ Route(*http.Request) bool })
	claims := []struct {
		host, path string
		want       bool
	}{
		{"api.vantage.test", "/status/acme", true},
		{"acme.status.vantage.test", "/", true},
		{"status.acme.test", "/", true},
		{"api.vantage.test", "/", false},
		{"api.vantage.test:8080", "/nope", false},
		{"status.vantage.test", "/", false},
		{"a.b.status.vantage.test", "/", true}, // not a subdomain, but another host: a custom domain candidate
		{"127.0.0.1:8080", "/", false},
		{"[::1]:8080", "/", false},
	}
	for _, c := range claims {
		r := &http.Request{Host: c.host, URL: &url.URL{Path: c.path}}
		if got := router.Route(r); got != c.want {
			t.Errorf("Route(%s%s) = %v, want %v", c.host, c.path, got, c.want)
		}
	}
}

func TestStatusPagePublicCache(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := richFixture(t, st, "acme")
	var now atomic.Int64 // unix nanoseconds
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	srv := serve(t, f.handlerWith(Config{CacheTTL: 5 * time.Second}, Deps{Now: clock}))
	page := func() string {
		t.Helper()
		resp, body := get(t, http.MethodGet, srv.URL+"/status/acme", "", nil, map[string]string{"Accept-Encoding": "gzip"})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return body
	}
	if !strings.Contains(page(), "Public API") {
		t.Fatal("first render")
	}
	name := "Public REST API"
	if _, err := f.sp.UpdateComponent(context.Background(), store.SystemActor, f.org, f.page, f.comps["Public API"], statuspage.ComponentPatch{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if body := page(); strings.Contains(body, name) {
		t.Fatal("a rename showed before the cache expired")
	}
	now.Add(int64(6 * time.Second))
	if body := page(); !strings.Contains(body, name) {
		t.Fatal("a rename did not show after the cache expired")
	}
	// A change of overall status shows at once.
	if _, err := f.sp.CreateIncident(context.Background(), store.SystemActor, f.org, f.page, statuspage.NewIncident{Title: "Outage",
		Description: "Down.", Status: "INVESTIGATING", Components: []store.ComponentChange{{ID: f.comps["Status webhooks"], Status: "MAJOR_OUTAGE"}}}); err != nil {
		t.Fatal(err)
	}
	if body := page(); !strings.Contains(body, "Major System Outage") {
		t.Fatal("a new overall status waited for the cache")
	}
}
