package console

// The console's pages: a single-page application of plain ES modules, embedded in the binary
// from web/, that reads and writes through the public /v1 API with the signed-in person's
// session. Every /console/... path that is not an asset or a session route answers the shell
// (index.html), so each view keeps its own URL; assets are served under a path carrying a hash
// of their content, which lets browsers cache them for a year and still never run a stale one.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed web
var files embed.FS

// Prefix is the path under which the console is served.
const Prefix = "/console"

// csp allows nothing but the console's own files and its own API: no inline script or style.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// versionPlaceholder is replaced in index.html by the assets' content hash.
const versionPlaceholder = "{{VERSION}}"

// asset is one embedded file, ready to serve.
type asset struct {
	contentType string
	plain       []byte
	gzipped     []byte // nil when compression does not pay
}

// Assets serves the console's pages. It is safe for concurrent use.
type Assets struct {
	version string
	index   []byte
	assets  map[string]asset // by path below web/assets, e.g. "js/app.js"
}

// NewAssets reads the embedded files and prepares them (hash, compression).
func NewAssets() (*Assets, error) {
	h := &Assets{assets: map[string]asset{}}
	sum := sha256.New()
	var names []string
	err := fs.WalkDir(files, "web/assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	sort.Strings(names)
	for _, p := range names {
		b, err := files.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("console asset %s: %w", p, err)
		}
		sum.Write([]byte(p))
		sum.Write(b)
		a, err := prepare(p, b)
		if err != nil {
			return nil, err
		}
		h.assets[strings.TrimPrefix(p, "web/assets/")] = a
	}
	h.version = hex.EncodeToString(sum.Sum(nil))[:12]
	index, err := files.ReadFile("web/index.html")
	if err != nil {
		return nil, fmt.Errorf("console index: %w", err)
	}
	h.index = bytes.ReplaceAll(index, []byte(versionPlaceholder), []byte(h.version))
	return h, nil
}

// prepare types a file by its extension and compresses it.
func prepare(name string, b []byte) (asset, error) {
	types := map[string]string{
		".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon", ".json": "application/json",
	}
	ct, ok := types[path.Ext(name)]
	if !ok {
		return asset{}, fmt.Errorf("console asset %s: no content type for its extension", name)
	}
	a := asset{contentType: ct, plain: b}
	if ct == "image/png" {
		return a, nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
	if _, err := zw.Write(b); err != nil {
		return asset{}, fmt.Errorf("compress %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return asset{}, fmt.Errorf("compress %s: %w", name, err)
	}
	if buf.Len() < len(b) {
		a.gzipped = buf.Bytes()
	}
	return a, nil
}

// Version is the content hash in the assets' path.
func (h *Assets) Version() string { return h.version }

// Routes adds the pages to mux: GET (and HEAD) of everything under /console/ that the
// session routes, more specific, do not claim.
func (h *Assets) Routes(mux *http.ServeMux) {
	mux.Handle("GET "+Prefix+"/", h)
}

// ServeHTTP answers an asset under /console/assets/{version}/..., and the shell for any other
// path under /console/.
func (h *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, Prefix+"/assets/") {
		h.serveAsset(w, r, strings.TrimPrefix(r.URL.Path, Prefix+"/assets/"))
		return
	}
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.index)
	}
}

// serveAsset serves rest = "{version}/{file}". Files of the current version are immutable; a
// page loaded before a deploy may still ask for its old version, and gets today's file, not
// cached, rather than a broken page.
func (h *Assets) serveAsset(w http.ResponseWriter, r *http.Request, rest string) {
	version, name, _ := strings.Cut(rest, "/")
	a, ok := h.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	if version == h.version {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hdr.Set("Cache-Control", "no-cache")
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Content-Security-Policy", csp)
	body := a.plain
	if a.gzipped != nil {
		hdr.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			hdr.Set("Content-Encoding", "gzip")
			body = a.gzipped
		}
	}
	hdr.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether the client takes gzip (every browser does).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
