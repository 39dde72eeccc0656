package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/api"
	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/console"
	"github.com/vantagehq/vantage/controlplane/internal/fleet"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// site is the control plane's main HTTP listener as serve.go wires it — the API, the public
// status pages and the console's pages and sessions — on a real listener and a fresh database,
// with an authenticator listening to the revocation feed, two organizations and a token for each.
type site struct {
	t      testing.TB
	st     *store.Store
	srv    *httptest.Server
	orgA   uuid.UUID
	orgB   uuid.UUID
	tokenA string // every permission in orgA
	tokenB string // every permission in orgB
}

// siteOptions change what the session tests need changed; the zero value is the site as
// serve.go wires it without SMTP, OpenID Connect or proxies.
type siteOptions struct {
	mailer  console.Mailer // sends e-mailed sign-in links; nil sends none
	proxies []string       // the trusted proxies
	// oidc, if set, gives the OpenID Connect provider for the console at publicURL.
	oidc func(publicURL string) console.OIDCConfig
	// now is the sessions' clock (default time.Now).
	now func() time.Time
}

func newSite(t testing.TB, opts siteOptions) *site {
	t.Helper()
	st := storetest.New(t)
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = authn.Run(ctx, st); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.Eventually(t, 10*time.Second, testwait.Holds("the authenticator listens to the revocation feed", authn.Listening))
	reg := prometheus.NewRegistry()
	limiter, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := statuspage.New(statuspage.Config{}, statuspage.Deps{Store: st, Now: time.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	public, err := web.NewHandler(web.Config{CookieKey: bytes.Repeat([]byte("k"), 32)},
		web.Deps{Store: pages, Limiter: limiter, Logger: log, ClientIP: api.ClientIP})
	if err != nil {
		t.Fatal(err)
	}
	agents, err := fleet.New(fleet.Config{ReplicaName: "console-test"}, fleet.Deps{Store: st,
		Local: func() []fleet.LocalAgent { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	notify, err := notifier.New(notifier.Config{PublicURL: "https://vantage.example"}, notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	// The server starts first: OpenID Connect needs its address as the redirect URL.
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	cfg := console.Config{PublicURL: "http://console.test"}
	if opts.oidc != nil {
		cfg.PublicURL = srv.URL
		cfg.OIDC = opts.oidc(srv.URL)
	}
	sessions, err := console.New(cfg, console.Deps{Store: st, Auth: authn, Limiter: limiter, Mailer: opts.mailer,
		ClientIP: api.ClientIP, Secure: api.RequestSecure, Now: opts.now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	assets, err := console.NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	sessions.Routes(mux)
	assets.Routes(mux)
	handler, err = api.New(api.Deps{Logger: log, Store: st, Auth: authn, Registry: reg, Now: time.Now, Ready: st.Ping,
		Public: public, Sessions: sessions, Console: mux, Agents: agents, Integrations: notify, Limiter: limiter,
		TrustedProxies: opts.proxies})
	if err != nil {
		t.Fatal(err)
	}
	s := &site{t: t, st: st, srv: srv}
	a, err := st.CreateOrganization(ctx, "Org A", "paid")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateOrganization(ctx, "Org B", "paid")
	if err != nil {
		t.Fatal(err)
	}
	s.orgA, s.orgB = a.ID, b.ID
	s.tokenA, _ = s.token(s.orgA, auth.AllGrants()...)
	s.tokenB, _ = s.token(s.orgB, auth.AllGrants()...)
	return s
}

// token creates an API token in org with the given "AREA:LEVEL" grants and returns its secret
// and id.
func (s *site) token(org uuid.UUID, grants ...string) (string, uuid.UUID) {
	s.t.Helper()
	secret, hash := auth.NewSecret()
	tok, err := s.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{
		OrgID: org, Name: "console test", Grants: grants, SecretHash: hash})
	if err != nil {
		s.t.Fatal(err)
	}
	return secret, tok.ID
}

// call is a bearer-token API request that must succeed; it returns the envelope's result.
func (s *site) call(method, path, token string, body any) map[string]any {
	s.t.Helper()
	status, env := s.request(method, path, token, body)
	if status >= 300 || env["success"] != true {
		s.t.Fatalf("%s %s: %d %v", method, path, status, env["errors"])
	}
	m, _ := env["result"].(map[string]any)
	return m
}

// request is a bearer-token API request; it returns the status and the decoded envelope.
func (s *site) request(method, path, token string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var env map[string]any
	_ = json.NewDecoder(res.Body).Decode(&env)
	return res.StatusCode, env
}

func (s *site) exec(sql string, args ...any) {
	s.t.Helper()
	if _, err := s.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		s.t.Fatal(err)
	}
}

// createBrowser creates a scripted browser check and returns its id.
func (s *site) createBrowser(token, name string) string {
	s.t.Helper()
	return s.call(http.MethodPost, "/v1/checks/browser", token, map[string]any{"name": name,
		"script":       "import { test } from '@playwright/test'\ntest('x', async ({ page }) => { await page.goto('https://example.com') })\n",
		"test_regions": []string{"cloud:us-east-1", "cloud:eu-central-1"}})["id"].(string)
}

// createDNS creates a DNS check and returns its id.
func (s *site) createDNS(token, name string) string {
	s.t.Helper()
	return s.call(http.MethodPost, "/v1/checks/dns", token, map[string]any{"name": name, "dns_domain": "example.com",
		"dns_record_type": "A"})["id"].(string)
}

// createTCP creates a TCP check and returns its id.
func (s *site) createTCP(token, name string) string {
	s.t.Helper()
	return s.call(http.MethodPost, "/v1/checks/tcp", token, map[string]any{"name": name, "tcp_hostname": "db.example.com",
		"tcp_port": 5432})["id"].(string)
}

// createUptime creates an uptime check in the token's organization and returns its id.
func (s *site) createUptime(token, name, url string) string {
	s.t.Helper()
	r := s.call(http.MethodPost, "/v1/checks", token, map[string]any{"name": name, "url": url,
		"test_regions": []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-south-1"}})
	return r["id"].(string)
}

// tab is a headless Chromium tab on the site. It records every console error, uncaught
// exception and CSP violation of the pages it shows: noErrors fails on any of them, and when
// the test ends each one fails it, but for the 403s a test provokes by forcing a change the
// view does not offer.
type tab struct {
	t         testing.TB
	ctx       context.Context
	base      string
	mu        sync.Mutex
	errors    []string
	forbidden []string // network 403s
}

func chromiumPath(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium; skipped under -short (make test-short)")
	}
	for _, p := range []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is required: neither /usr/bin/chromium-headless-shell nor /usr/bin/chromium exists (apt-get install chromium-headless-shell)")
	return ""
}

// tab starts Chromium for t with a window of width × height.
func (s *site) tab(t testing.TB, width, height int) *tab {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(width, height)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &tab{t: t, ctx: ctx, base: s.srv.URL}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !expectedLogError(m) {
				b.record(m.String()+" "+m.URL, m.Source == "network" && strings.Contains(m.Text, "status of 403"))
			}
		}
	}()
	// Registered after the browser's cleanup, so it runs first, while the messages are kept.
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, l := range b.errors {
			t.Errorf("the console logged: %s", l)
		}
	})
	return b
}

// expectedLogError tells apart the network errors a test provokes on purpose (a 400 for a bad
// form value, a 401 before sign-in, a 404 for another organization's check) from real errors.
func expectedLogError(m chromedp.ConsoleMessage) bool {
	return m.Source == "network" && (strings.Contains(m.Text, "status of 400") || strings.Contains(m.Text, "status of 401") ||
		strings.Contains(m.Text, "status of 404"))
}

func (b *tab) record(s string, forbidden bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if forbidden {
		b.forbidden = append(b.forbidden, s)
	} else {
		b.errors = append(b.errors, s)
	}
}

// noErrors fails the test if a page logged an error (a 403 included), threw or violated its CSP.
func (b *tab) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if all := append(append([]string(nil), b.errors...), b.forbidden...); len(all) > 0 {
		b.t.Fatalf("the page logged errors:\n%s", strings.Join(all, "\n"))
	}
}

// run runs browser steps and fails the test on error.
func (b *tab) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("chromium: %v (page errors: %v)", err, b.logged())
	}
}

func (b *tab) logged() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append(append([]string(nil), b.errors...), b.forbidden...)
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	return do(b, chromedp.Text(chromedp.CSS(sel)))
}

// do runs an action that has a value.
func do[T any](b *tab, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("chromium: %v (page errors: %v)", err, b.logged())
	}
	return v
}

// eval runs a JavaScript expression and returns its value.
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	return do(b, chromedp.Evaluate[T](expr))
}

// evalAsync runs a JavaScript expression that returns a promise and returns what it resolves to.
func evalAsync[T any](b *tab, expr string) T {
	b.t.Helper()
	return do(b, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// waitFor polls a JavaScript condition until it is true (15 s).
func (b *tab) waitFor(cond string) {
	b.t.Helper()
	b.waitWithin(15*time.Second, cond)
}

// waitWithin polls a JavaScript condition until it is true, for at most d.
func (b *tab) waitWithin(d time.Duration, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if eval[bool](b, "!!("+cond+")") {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
			b.t.Fatalf("timed out waiting for %s; page: %.600s; errors: %v", cond, body, b.logged())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signIn opens next, signs in through the sign-in form with an API token, and waits for the
// signed-in header.
func (b *tab) signIn(token, next string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base + next))
	b.waitFor(`document.querySelector('.signin-card')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="API token"]/following-sibling::input`), token),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in with token"]`)))
	b.waitFor(`!document.querySelector('.signin-card') && document.querySelector('#topbar:not([hidden])')`)
}

// open goes to a console path through the router (a full load, as a deep link) and waits until
// every part of the view has loaded.
func (b *tab) open(path string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base + path))
	b.settle()
}

// settle waits until the view is drawn and none of its parts is still loading.
func (b *tab) settle() {
	b.t.Helper()
	b.waitFor(`!document.querySelector('main[aria-busy], main [aria-busy="true"], main .loading') && document.querySelector('main h1')`)
}

// docShots are the screenshots docs/console.md and docs/console-views.md show: make
// console-screenshots writes them into $VANTAGE_CONSOLE_SCREENSHOTS (docs/console) too.
var docShots = map[string]bool{"sign-in.png": true, "overview.png": true, "check.png": true, "browser-result.png": true,
	"new-check.png": true, "check-dark.png": true, "views-incidents.png": true, "views-heartbeat.png": true,
	"views-status-page.png": true, "views-status-page-incident.png": true, "views-alerting.png": true,
	"views-settings-token-created.png": true, "views-operators.png": true}

// screenshot keeps a full-page screenshot under testdata/artifacts (git-ignored), and the
// documented ones under $VANTAGE_CONSOLE_SCREENSHOTS when it is set.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	b.run(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)) // the sticky header stays at the top of the picture
	img := do(b, chromedp.FullScreenshot(100))
	if len(img) == 0 {
		b.t.Fatalf("empty screenshot %s", name)
	}
	dirs := []string{filepath.Join("testdata", "artifacts")}
	if d := os.Getenv("VANTAGE_CONSOLE_SCREENSHOTS"); d != "" && docShots[name] {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, img, 0o644); err != nil {
			b.t.Fatal(err)
		}
		b.t.Logf("screenshot: %s", path)
	}
}

// contains fails the test for each of want that got lacks.
func contains(t testing.TB, where, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q: %q", where, w, got)
		}
	}
}
