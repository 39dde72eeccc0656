package console

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestHandlerServesShellForEveryViewPath checks that deep links answer the shell with its
// security headers, and that the shell names the current assets' version.
func TestHandlerServesShellForEveryViewPath(t *testing.T) {
	t.Parallel()
	h, err := NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/console/", "/console/checks", "/console/checks/0b6d2d9e-1a4f-4c1e-9a55-2f1f0f6c7d10/edit", "/console/no/such/view"} {
		t.Run(path, func(t *testing.T) {
			rec := get(t, h, path, nil)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			if got := rec.Header().Get("Content-Security-Policy"); got != csp {
				t.Errorf("CSP %q", got)
			}
			if rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("Cache-Control") != "no-cache" {
				t.Errorf("headers %v", rec.Header())
			}
			body := rec.Body.String()
			if !strings.Contains(body, "/console/assets/"+h.Version()+"/js/app.js") || strings.Contains(body, versionPlaceholder) {
				t.Errorf("shell does not name version %s", h.Version())
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, "style=") || strings.Contains(body, "<style") {
				t.Error("shell has inline script or style, which the CSP forbids")
			}
		})
	}
}

func TestHandlerAssets(t *testing.T) {
	t.Parallel()
	h, err := NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, accept string
		status             int
		cache, encoding    string
	}{
		{"current version is immutable", "/console/assets/" + h.Version() + "/js/app.js", "", 200, "public, max-age=31536000, immutable", ""},
		{"gzip when accepted", "/console/assets/" + h.Version() + "/app.css", "gzip, br", 200, "public, max-age=31536000, immutable", "gzip"},
		{"gzip refused", "/console/assets/" + h.Version() + "/app.css", "gzip;q=0", 200, "public, max-age=31536000, immutable", ""},
		{"old version is not cached", "/console/assets/0123456789ab/js/app.js", "", 200, "no-cache", ""},
		{"unknown asset", "/console/assets/" + h.Version() + "/js/nope.js", "", 404, "", ""},
		{"no index under assets", "/console/assets/" + h.Version() + "/", "", 404, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, tc.path, map[string]string{"Accept-Encoding": tc.accept})
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := rec.Header().Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			if got := rec.Header().Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
			}
			body := io.Reader(rec.Body)
			if tc.encoding == "gzip" {
				zr, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			b, err := io.ReadAll(body)
			if err != nil || len(b) == 0 {
				t.Fatalf("body %d bytes, %v", len(b), err)
			}
		})
	}
}
