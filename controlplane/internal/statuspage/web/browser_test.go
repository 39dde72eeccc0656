package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's headless shell, or the full browser. Missing Chromium fails the test.
func chromiumPath(t *testing.T) string {
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

// artifactDir is where screenshots are kept after the test (testdata/artifacts, git-ignored).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStatusPagePublicBrowser renders a page with groups, an incident with updates and a
// scheduled maintenance in real headless Chromium, reads what a visitor sees, and keeps
// screenshots (light desktop, dark phone) under testdata/artifacts.
func TestStatusPagePublicBrowser(t *testing.T) {
	exec := chromiumPath(t)
	st := newStore(t)
	f := richFixture(t, st, "acme")
	srv := serve(t, f.handler(Config{}))

	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(exec), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/status/acme"), chromedp.WaitVisible(chromedp.ID("overall"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	title := run(t, ctx, chromedp.Title())
	banner := run(t, ctx, chromedp.Text(chromedp.ID("overall")))
	components := run(t, ctx, chromedp.Text(chromedp.CSS(`section[aria-labelledby="h-components"]`)))
	active := run(t, ctx, chromedp.Text(chromedp.CSS(`section[aria-labelledby="h-active"]`)))
	maintenance := run(t, ctx, chromedp.Text(chromedp.CSS(`section[aria-labelledby="h-maint"]`)))
	var names []string
	for _, id := range run(t, ctx, chromedp.QueryNodeIDs(chromedp.CSSAll(".cname"))) {
		names = append(names, run(t, ctx, chromedp.Text(chromedp.NodeIDs{id})))
	}
	darkRule := run(t, ctx, chromedp.Evaluate[bool](`Array.from(document.styleSheets).some(s => Array.from(s.cssRules).some(r =>
		r instanceof CSSMediaRule && r.conditionText.includes('prefers-color-scheme: dark')))`))
	light := run(t, ctx, chromedp.FullScreenshot(100))

	if title != "Acme Cloud" || strings.TrimSpace(banner) != "Minor Service Outage" {
		t.Fatalf("title %q, banner %q", title, banner)
	}
	want := []string{"Status webhooks", "Public API", "Dashboard", "CDN"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("components %q, want %q", names, want)
	}
	for _, s := range []string{"Core platform", "Edge", "Partial outage", "Operational"} {
		if !strings.Contains(components, s) {
			t.Errorf("components section lacks %q: %q", s, components)
		}
	}
	for _, s := range []string{"Elevated CDN errors", "Identified", "A faulty edge node was found and removed.", "Investigating"} {
		if !strings.Contains(active, s) {
			t.Errorf("active incidents lack %q: %q", s, active)
		}
	}
	if !strings.Contains(maintenance, "Database upgrade") || !strings.Contains(maintenance, "Affected: Dashboard") {
		t.Errorf("maintenance section: %q", maintenance)
	}
	if !darkRule {
		t.Error("no prefers-color-scheme: dark rule in the page's CSS")
	}

	// Dark mode on a phone: the page follows the colour scheme and stays within the width.
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
			return err
		}),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+"/status/acme"),
		chromedp.WaitVisible(chromedp.ID("overall")),
	)
	if err != nil {
		t.Fatalf("chromium (dark, phone): %v", err)
	}
	bg := run(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	overflow := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	dark := run(t, ctx, chromedp.FullScreenshot(100))
	if bg != "rgb(17, 20, 24)" {
		t.Errorf("dark mode background %q, want rgb(17, 20, 24)", bg)
	}
	if overflow {
		t.Error("the page scrolls sideways on a 390px wide phone")
	}

	dir := artifactDir(t)
	for name, img := range map[string][]byte{"statuspage-light-desktop.png": light, "statuspage-dark-phone.png": dark} {
		path := filepath.Join(dir, name)
		if len(img) == 0 {
			t.Fatalf("empty screenshot %s", name)
		}
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(img))
	}
}

// run runs one browser action and fails the test on error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return v
}
