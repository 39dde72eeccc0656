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
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// site is the control plane's HTTP handler (the real API router with the console's pages and
// sessions) on a real listener and a fresh database, with two organizations and a token for
// each.
type site struct {
	t      testing.TB
	st     *store.Store
	srv    *httptest.Server
	orgA   uuid.UUID
	orgB   uuid.UUID
	tokenA string // every permission in orgA
	tokenB string // every permission in orgB
}

func newSite(t testing.TB) *site {
	t.Helper()
	st := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = authn.Run(ctx, st); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.Eventually(t, 10*time.Second, testwait.Holds("the authenticator listens to the revocation feed", authn.Listening))
	reg := prometheus.NewRegistry()
	lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := console.New(console.Config{PublicURL: "http://console.test"}, console.Deps{Store: st, Auth: authn,
		Limiter: lim, ClientIP: api.ClientIP, Secure: api.RequestSecure})
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
	handler, err := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Store: st, Auth: authn, Registry: reg,
		Ready: st.Ping, Limiter: lim, Sessions: sessions, Console: mux, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := &site{t: t, st: st, srv: httptest.NewServer(handler)}
	t.Cleanup(h.srv.Close)
	a, err := st.CreateOrganization(ctx, "Acme", "paid")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateOrganization(ctx, "Globex", "paid")
	if err != nil {
		t.Fatal(err)
	}
	h.orgA, h.orgB = a.ID, b.ID
	h.tokenA = h.token(h.orgA, auth.AllGrants()...)
	h.tokenB = h.token(h.orgB, auth.AllGrants()...)
	return h
}

// token creates an API token in org with the given "AREA:LEVEL" grants and returns its secret.
func (h *site) token(org uuid.UUID, grants ...string) string {
	h.t.Helper()
	secret, hash := auth.NewSecret()
	if _, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{
		OrgID: org, Name: "console test", Grants: grants, SecretHash: hash}); err != nil {
		h.t.Fatal(err)
	}
	return secret
}

// call sends an API request with a bearer token and returns the envelope's result.
func (h *site) call(method, path, token string, body any) map[string]any {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
		Errors  []any          `json:"errors"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || !env.Success {
		h.t.Fatalf("%s %s: %d %v %v", method, path, res.StatusCode, env.Errors, err)
	}
	return env.Result
}

// createBrowser creates a scripted browser check and returns its id.
func (h *site) createBrowser(token, name string) string {
	h.t.Helper()
	return h.call(http.MethodPost, "/v1/checks/browser", token, map[string]any{"name": name,
		"script":       "import { test } from '@playwright/test'\ntest('x', async ({ page }) => { await page.goto('https://example.com') })\n",
		"test_regions": []string{"cloud:us-east-1", "cloud:eu-central-1"}})["id"].(string)
}

// createDNS creates a DNS check and returns its id.
func (h *site) createDNS(token, name string) string {
	h.t.Helper()
	return h.call(http.MethodPost, "/v1/checks/dns", token, map[string]any{"name": name, "dns_domain": "example.com",
		"dns_record_type": "A"})["id"].(string)
}

// createTCP creates a TCP check and returns its id.
func (h *site) createTCP(token, name string) string {
	h.t.Helper()
	return h.call(http.MethodPost, "/v1/checks/tcp", token, map[string]any{"name": name, "tcp_hostname": "db.example.com",
		"tcp_port": 5432})["id"].(string)
}

// createUptime creates an uptime check in the token's organization and returns its id.
func (h *site) createUptime(token, name, url string) string {
	h.t.Helper()
	r := h.call(http.MethodPost, "/v1/checks", token, map[string]any{"name": name, "url": url,
		"test_regions": []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-south-1"}})
	return r["id"].(string)
}

// tab is a headless Chromium tab that records every console error, uncaught exception and
// CSP violation of the pages it shows.
type tab struct {
	t      testing.TB
	ctx    context.Context
	base   string
	mu     sync.Mutex
	errors []string
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

func (h *site) tab(width, height int) *tab {
	h.t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(chromiumPath(h.t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(width, height)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	h.t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &tab{t: h.t, ctx: ctx, base: h.srv.URL}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !expectedLogError(m) {
				b.record(m.String() + " " + m.URL)
			}
		}
	}()
	return b
}

// expectedLogError tells apart the network errors a test provokes on purpose (a 400 for a bad
// form value, a 401 before sign-in, a 404 for another organization's check) from real errors.
func expectedLogError(m chromedp.ConsoleMessage) bool {
	return m.Source == "network" && (strings.Contains(m.Text, "status of 400") || strings.Contains(m.Text, "status of 401") ||
		strings.Contains(m.Text, "status of 404"))
}

func (b *tab) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

// noErrors fails the test if a page logged an error, threw or violated its CSP.
func (b *tab) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		b.t.Fatalf("the page logged errors:\n%s", strings.Join(b.errors, "\n"))
	}
}

func (b *tab) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("chromium: %v (page errors: %v)", err, b.errors)
	}
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
		b.t.Fatalf("chromium: %v (page errors: %v)", err, b.errors)
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

// waitFor polls a JavaScript condition until it is true (10 s).
func (b *tab) waitFor(cond string) {
	b.t.Helper()
	b.waitWithin(10*time.Second, cond)
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
			b.t.Fatalf("timed out waiting for %s; page: %.600s; errors: %v", cond, body, b.errors)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signIn signs in through the sign-in form with an API token.
func (b *tab) signIn(token, next string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base + next))
	b.waitFor(`document.querySelector('.signin-card')`)
	b.run(chromedp.SendKeys(chromedp.Search(`//label[text()="API token"]/following-sibling::input`), token),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in with token"]`)))
	b.waitFor(`!document.querySelector('.signin-card') && document.querySelector('#topbar:not([hidden])')`)
}

// screenshot saves the page as a PNG under dir.
func (b *tab) screenshot(dir, name string) {
	b.t.Helper()
	b.run(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)) // the sticky header stays at the top of the picture
	png := do(b, chromedp.FullScreenshot(100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
