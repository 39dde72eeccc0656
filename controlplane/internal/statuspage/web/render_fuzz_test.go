package web

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRenderPage stores arbitrary text as everything a page shows (its name and description,
// group and component names, incident titles and update texts) and renders the page, its
// history and its Atom feed: every render is a 200; each text shows HTML-escaped, and a text
// holding markup ('<') never shows raw (unless the page's own markup, rendered from the
// fixture's plain names, contains it); and the feed stays well-formed XML.
func FuzzRenderPage(f *testing.F) {
	st := newStore(f)
	fx := richFixture(f, st, "fuzzpage")
	h := fx.handler(Config{CacheTTL: -1})
	for _, s := range [][5]string{
		{"Acme", "Live status", "Core", "API", "Errors"},
		{"<script>alert(1)</script>", "\"'><img src=x onerror=alert(1)>", "]]><x>", "&amp;&#0;", "{{.Name}}"},
		{"", "", "", "", ""},
		{"\u202e\u0301", "😀 \t\r\n", strings.Repeat("x", 300), "javascript:alert(1)", "</title><title>"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	ctx := context.Background()
	// The pages as the fixture renders them: what the templates themselves write, so that a raw
	// text found in a fuzzed page is an injection only when the plain page lacks it.
	plain := map[string]string{}
	for _, path := range []string{"/status/fuzzpage", "/status/fuzzpage/history"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			f.Fatalf("%s: %d", path, rec.Code)
		}
		plain[path] = rec.Body.String()
	}
	f.Fuzz(func(t *testing.T, name, desc, group, component, incident string) {
		inputs := []string{name, desc, group, component, incident}
		for _, s := range inputs {
			// PostgreSQL text holds neither NUL nor invalid UTF-8; the API refuses both.
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				return
			}
		}
		if name == "" || len(name) > 100 || component == "" || group == "" || incident == "" {
			return // the API's rules: names and titles are required, page names 1-100 characters
		}
		pool := st.Pool()
		for _, q := range []struct {
			sql string
			arg string
		}{
			{"UPDATE status_pages SET name = $1 WHERE id = $2", name},
			{"UPDATE status_pages SET description = $1 WHERE id = $2", desc},
			{"UPDATE status_page_groups SET name = $1 WHERE status_page_id = $2", group},
			{"UPDATE status_page_components SET name = $1 WHERE status_page_id = $2", component},
			{"UPDATE status_page_incidents SET title = $1 WHERE status_page_id = $2", incident},
			{"UPDATE status_page_incident_updates u SET description = $1 FROM status_page_incidents i WHERE i.id = u.incident_id AND i.status_page_id = $2", desc + incident},
		} {
			if _, err := pool.Exec(ctx, q.sql, q.arg, fx.page); err != nil {
				return // a constraint of the schema (the API would have refused the input)
			}
		}
		for _, path := range []string{"/status/fuzzpage", "/status/fuzzpage/history", "/status/fuzzpage/feed.atom"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
			body := rec.Body.String()
			if strings.HasSuffix(path, ".atom") {
				dec := xml.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
				for {
					if _, err := dec.Token(); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						t.Fatalf("feed is not well-formed XML: %v\n%s", err, body)
					}
				}
				continue
			}
			// Text shows escaped: the escaped form is there (so the raw one is not what the
			// browser parses as markup).
			shown := []string{name}
			if path == "/status/fuzzpage" {
				shown = append(shown, group, component, incident)
			}
			for _, s := range shown {
				if !strings.Contains(body, html.EscapeString(s)) {
					t.Fatalf("%s: %q is not shown escaped", path, s)
				}
				if strings.Contains(s, "<") && strings.Contains(body, s) && !strings.Contains(plain[path], s) {
					t.Fatalf("%s: %q shows raw, where the browser parses it as markup", path, s)
				}
			}
		}
	})
}
