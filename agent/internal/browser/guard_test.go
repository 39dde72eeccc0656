package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestGuardRefusesNonWebLoads navigates a check's tab over DevTools straight to a file of the
// host, a directory and view-source: of the file (as any DevTools client of the check could,
// past page.goto's own check): the browser context refuses each load, the document shows
// nothing of the file (a marker only it holds), and the session records the refusal. data:
// and about:blank still load.
func TestGuardRefusesNonWebLoads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := fmt.Sprintf("vantage-secret-%d", time.Now().UnixNano())
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, Config{})
	navigate := func(u string) (errorText, shown, refused string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := b.newSession(ctx, attached)
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		tab, closeTab := s.page(ctx)
		defer closeTab()
		var loadErr *chromedp.LoadError
		if _, err := chromedp.Run(tab, chromedp.NavigateResponse(u)); errors.As(err, &loadErr) {
			errorText = loadErr.ErrorText
		} else if err != nil {
			t.Fatalf("navigate to %s: %v", u, err)
		}
		time.Sleep(200 * time.Millisecond) // a directory listing fills itself in by script
		shown, err = chromedp.Run(tab, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		if err != nil {
			t.Fatalf("read the page of %s: %v", u, err)
		}
		s.settle()
		return errorText, shown, s.refused()
	}
	for _, u := range []string{"file://" + secret, "file://" + dir + "/", "view-source:file://" + secret} {
		errorText, shown, refused := navigate(u)
		if strings.Contains(shown, marker) || strings.Contains(shown, "token") {
			t.Errorf("%s: the file (or its directory) is on the page: %s", u, shown)
		}
		if errorText != "net::ERR_BLOCKED_BY_CLIENT" {
			t.Errorf("%s: navigation error %q, want net::ERR_BLOCKED_BY_CLIENT", u, errorText)
		}
		if !strings.Contains(refused, "not allowed: file: file://") {
			t.Errorf("%s: refused %q, want the file: load named", u, refused)
		}
	}
	for _, u := range []string{"data:text/html,<p>from data</p>", "about:blank"} {
		errorText, shown, refused := navigate(u)
		if errorText != "" || refused != "" {
			t.Errorf("%s: navigation error %q, refused %q; want it loaded", u, errorText, refused)
		}
		if u != "about:blank" && !strings.Contains(shown, "from data") {
			t.Errorf("%s: page %s", u, shown)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := b.Visit(ctx, VisitRequest{URL: "file://" + secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.HTML+p.Text, marker) || !strings.HasPrefix(p.Refused, "not allowed: file:") {
		t.Errorf("a URL check of a file: refused %q, page %q", p.Refused, p.HTML)
	}
}

// The scheme guard's redirects: a document answering 30x to a non-web URL is refused before
// Chromium follows it, and the visit says why.
func TestGuardRefusesRedirectToFile(t *testing.T) {
	t.Parallel()
	srv := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/hostname", http.StatusMovedPermanently)
	}))
	b := startBrowser(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := b.Visit(ctx, VisitRequest{URL: "http://" + srv + "/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.LoadError == "" || p.Refused != "not allowed: file: file:///etc/hostname (a check's pages may load only http:, https:, data: and about:blank)" {
		t.Errorf("load error %q, refused %q", p.LoadError, p.Refused)
	}
}
