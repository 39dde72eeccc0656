package api

import (
	"net/http"
	"strings"
	"testing"
)

// A browser script is compiled when it is created or patched: a syntax error is a 400 naming
// its line and column, and nothing is stored.
func TestBrowserScriptSyntaxErrorRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := "import { test } from '@playwright/test';\n\ntest('checkout', async ({ page }) => {\n  await page.goto('https://shop.example.com';\n});\n"
	r := h.do(http.MethodPost, "/v1/checks/browser", h.tokenA, map[string]any{"name": "Shop", "script": bad})
	expectStatus(t, r, http.StatusBadRequest)
	if msg := r.ErrorText(); !strings.Contains(msg, "line 4, column") || !strings.Contains(msg, "script") {
		t.Fatalf("error %q does not name the script's line and column", msg)
	}
	list := h.do(http.MethodGet, "/v1/checks", h.tokenA, nil)
	expectStatus(t, list, http.StatusOK)
	if n := len(list.Items()); n != 0 {
		t.Fatalf("%d checks stored after a rejected create", n)
	}

	good := strings.Replace(bad, "'https://shop.example.com';", "'https://shop.example.com');", 1)
	created := h.do(http.MethodPost, "/v1/checks/browser", h.tokenA, map[string]any{"name": "Shop", "script": good})
	expectStatus(t, created, http.StatusCreated)
	id := created.Result()["id"].(string)
	r = h.do(http.MethodPatch, "/v1/checks/browser/"+id, h.tokenA, map[string]any{"script": bad})
	expectStatus(t, r, http.StatusBadRequest)
	if msg := r.ErrorText(); !strings.Contains(msg, "line 4, column") {
		t.Fatalf("patch error %q does not name the script's line and column", msg)
	}
	got := h.do(http.MethodGet, "/v1/checks/browser/"+id, h.tokenA, nil)
	if s, _ := got.Result()["script"].(string); s != good {
		t.Fatalf("script after a rejected patch: %q", s)
	}
}
