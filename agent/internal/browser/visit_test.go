package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestVisitSmoke(t *testing.T) {
	b := startBrowser(t, Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		w.Write([]byte(`<html><head><title>Hi</title></head><body><h1>Hello</h1><script>document.body.insertAdjacentHTML('beforeend','<p id=late>rendered</p>')</script></body></html>`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := b.Visit(ctx, VisitRequest{URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p.Timings)
	if p.Status != 200 || !strings.Contains(p.HTML, `<p id="late">rendered</p>`) || p.Header.Get("X-Test") != "yes" {
		t.Fatalf("page %+v", p)
	}
}

// TestVisitBlockedPrivateTargets: with private targets blocked, a page on loopback — over HTTP,
// over HTTPS, and named as localhost — is refused by the egress proxy: no status, a load
// error, the proxy's reason naming loopback, and none of the page's content.
func TestVisitBlockedPrivateTargets(t *testing.T) {
	b := startBrowser(t, Config{BlockPrivateTargets: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body>secret</body></html>`))
	}))
	defer srv.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body>secret</body></html>`))
	}))
	defer tls.Close()
	for _, u := range []string{srv.URL, tls.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		p, err := b.Visit(ctx, VisitRequest{URL: u}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != 0 || p.LoadError == "" || !strings.Contains(p.Blocked, "loopback") || strings.Contains(p.HTML, "secret") {
			t.Errorf("%s: status %d, load error %q, blocked %q, html %q; want it refused as loopback, its content unseen",
				u, p.Status, p.LoadError, p.Blocked, p.HTML)
		}
	}
}
