package pwscript

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// chromiumPath is the browser the tests drive; a machine without it fails the tests.
const chromiumPath = "/usr/bin/chromium-headless-shell"

// browserCtx is the browser shared by the package's tests (started by TestMain); every run
// gets a tab in a browser context of its own, as the runner gives it.
var browserCtx context.Context

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pwscript-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.UserDataDir(dir))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "start %s: %v\n", chromiumPath, err)
		return 1
	}
	browserCtx = ctx
	return m.Run()
}

// newTab opens a tab in a fresh browser context; it closes with the test.
func newTab(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// site serves testdata/site and the dynamic pages the scripts use.
func site(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata/site")))
	mux.Handle("/api/", apiSite())
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>Slow</title><h1>Slow page</h1><p>waited %dms</p>", ms)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		fmt.Fprintf(w, "<!doctype html><title>Status %d</title><h1>Status %d</h1>", code, code)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>Echo</title><h1>Submitted</h1><dl>")
		for k, v := range r.Form {
			fmt.Fprintf(w, "<dt>%s</dt><dd data-testid=%q>%s</dd>", htmlEscape(k), "echo-"+k, htmlEscape(v[0]))
		}
		fmt.Fprint(w, "</dl>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func htmlEscape(s string) string {
	out := ""
	for _, r := range s {
		switch r {
		case '<':
			out += "&lt;"
		case '>':
			out += "&gt;"
		case '&':
			out += "&amp;"
		case '"':
			out += "&quot;"
		default:
			out += string(r)
		}
	}
	return out
}

// runScript transforms and runs source against a fresh tab.
func runScript(t testing.TB, filename, source string, opts Options) *Report {
	t.Helper()
	prog, err := browserscript.Transform(filename, source)
	if err != nil {
		t.Fatalf("transform %s: %v", filename, err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(newTab(t), timeout)
	defer cancel()
	return Run(ctx, prog, opts)
}
