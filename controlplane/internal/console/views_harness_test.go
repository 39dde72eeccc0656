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
)

// viewsEnv is the control plane's main HTTP listener as serve.go wires it — the API, the public
// status pages and the console — on a fresh real database, with one organization.
type viewsEnv struct {
	t   *testing.T
	st  *store.Store
	srv *httptest.Server
	org uuid.UUID
}

func newViewsEnv(t *testing.T) *viewsEnv {
	t.Helper()
	st := storetest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st})
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
	agents, err := fleet.New(fleet.Config{ReplicaName: "views-test"}, fleet.Deps{Store: st,
		Local: func() []fleet.LocalAgent { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	notify, err := notifier.New(notifier.Config{PublicURL: "https://vantage.example"}, notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := console.New(console.Config{PublicURL: "https://vantage.example"},
		console.Deps{Store: st, Auth: authn, Limiter: limiter, Mailer: notify, ClientIP: api.ClientIP, Secure: api.RequestSecure,
			Now: time.Now, Logger: log})
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
	handler, err := api.New(api.Deps{Logger: log, Store: st, Auth: authn, Registry: prometheus.NewRegistry(), Now: time.Now,
		Ready: st.Ping, Public: public, Sessions: sessions, Console: mux, Agents: agents, Integrations: notify, Limiter: limiter})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	o, err := st.CreateOrganization(context.Background(), "Views Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	return &viewsEnv{t: t, st: st, srv: srv, org: o.ID}
}

// token makes an API token of the organization with "AREA:LEVEL" grants and returns its secret.
func (e *viewsEnv) token(grants ...string) string {
	e.t.Helper()
	secret, hash := auth.NewSecret()
	if _, err := e.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{
		OrgID: e.org, Name: "views-test", Grants: grants, SecretHash: hash}); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// call is a bearer-token API request that must succeed; it returns the envelope's result.
func (e *viewsEnv) call(method, path, token string, body any) map[string]any {
	e.t.Helper()
	status, env := e.request(method, path, token, body)
	if status >= 300 {
		e.t.Fatalf("%s %s: %d %v", method, path, status, env["errors"])
	}
	m, _ := env["result"].(map[string]any)
	return m
}

func (e *viewsEnv) request(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var env map[string]any
	_ = json.NewDecoder(res.Body).Decode(&env)
	return res.StatusCode, env
}

func (e *viewsEnv) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatal(err)
	}
}

// viewsBrowser starts headless Chromium for one test. Missing Chromium fails the test.
func viewsBrowser(t *testing.T) context.Context {
	t.Helper()
	var exe string
	for _, p := range []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Fatal("Chromium is required: neither /usr/bin/chromium-headless-shell nor /usr/bin/chromium exists")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	// No view may log an error, an exception or a CSP violation; the refusals a test provokes
	// (a 400 for a bad form value, a 401 before sign-in, a forced 403) are expected.
	var mu sync.Mutex
	var logged []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !expectedLogError(m) &&
				(m.Source != "network" || !strings.Contains(m.Text, "status of 403")) {
				mu.Lock()
				logged = append(logged, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logged {
			t.Errorf("the console logged: %s", l)
		}
	})
	return ctx
}

// vdo runs browser steps and fails the test on error.
func vdo(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// vrun runs one browser action and returns its value.
func vrun[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return v
}

// signIn signs in with token through the sign-in form and waits for the signed-in header.
func (e *viewsEnv) signIn(t *testing.T, ctx context.Context, token string) {
	t.Helper()
	vdo(t, ctx, chromedp.Navigate(e.srv.URL+"/console/login"),
		chromedp.SendKeys(chromedp.Search(`//label[text()="API token"]/following-sibling::input`), token),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in with token"]`)),
		chromedp.WaitVisible(chromedp.ID("topbar")))
}

// open goes to a console path through the router (a full load, as a deep link) and waits until
// every part of the view has loaded.
func (e *viewsEnv) open(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	vdo(t, ctx, chromedp.Navigate(e.srv.URL+path))
	vsettle(t, ctx)
}

// vsettle waits until the view is drawn and none of its parts is still loading.
func vsettle(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		done := vrun(t, ctx, chromedp.Evaluate[bool](`!document.querySelector('main[aria-busy], main [aria-busy="true"], main .loading') &&
			!!document.querySelector('main h1')`))
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the view at %s did not finish loading", vrun(t, ctx, chromedp.Location()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// vwaitFor polls a JavaScript condition.
func vwaitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !vrun(t, ctx, chromedp.Evaluate[bool]("!!("+js+")")) {
		if time.Now().After(deadline) {
			main, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
			t.Fatalf("timed out waiting for %s; the view says:\n%s", what, main)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func vtext(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	return vrun(t, ctx, chromedp.Text(chromedp.CSS(css)))
}

// docShots are the screenshots docs/console-views.md shows: make console-screenshots writes them
// into $VANTAGE_CONSOLE_SCREENSHOTS (docs/console) too.
var docShots = map[string]bool{"views-incidents.png": true, "views-heartbeat.png": true, "views-status-page.png": true,
	"views-status-page-incident.png": true, "views-alerting.png": true, "views-settings-token-created.png": true,
	"views-operators.png": true}

// vscreenshot keeps a full-page screenshot under testdata/artifacts (git-ignored), and the
// documented ones under $VANTAGE_CONSOLE_SCREENSHOTS when it is set.
func vscreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// From the top: the header is sticky, and a scrolled page would show it mid-picture.
	vrun(t, ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0) === undefined`))
	img := vrun(t, ctx, chromedp.FullScreenshot(100))
	if len(img) == 0 {
		t.Fatalf("empty screenshot %s", name)
	}
	dirs := []string{filepath.Join("testdata", "artifacts")}
	if d := os.Getenv("VANTAGE_CONSOLE_SCREENSHOTS"); d != "" && docShots[name] {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
}

func vcontains(t *testing.T, where, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q: %q", where, w, got)
		}
	}
}
