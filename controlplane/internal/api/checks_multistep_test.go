package api

import (
	"net/http"
	"strings"
	"testing"
)

const ckMultistepScript = "import { test, expect } from '@playwright/test'\n" +
	"test('login', async ({ request }) => {\n" +
	"  const r = await request.post('https://api.example.com/login', { data: { user: 'ann' } })\n" +
	"  await expect(r).toBeOK()\n" +
	"})\n"

func ckMultistepBody() map[string]any {
	return map[string]any{"name": "Login API", "script": ckMultistepScript}
}

// TestMultistepChecks: the typed routes of the extension kind create, show, change and
// refuse multistep checks; a script that asks for a browser fixture is a 400 naming the line.
func TestMultistepChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := ckCreate(t, h, h.tokenA, "/v1/checks/multistep", ckMultistepBody())
	for k, want := range map[string]any{"check_type": "MULTISTEP", "script": ckMultistepScript, "url": nil, "version": nil,
		"alert_priority": "HIGH", "timeout": 10000.0, "assertions": nil} {
		if got := res[k]; got != want {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	id := res["id"].(string)

	changed := strings.Replace(ckMultistepScript, "ann", "bob", 1)
	r := h.do(http.MethodPatch, "/v1/checks/multistep/"+id, h.tokenA, map[string]any{"script": changed, "type": "MULTISTEP_CHECK"})
	expectStatus(t, r, http.StatusOK)
	if r.Result()["script"] != changed {
		t.Errorf("PATCH script: %v", r.Result()["script"])
	}
	r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"timeout": 20000})
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodGet, "/v1/checks/multistep/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["timeout"] != 20000.0 || r.Result()["script"] != changed {
		t.Errorf("GET after the generic PATCH: %v", r.Result())
	}
	// Another organization does not see it.
	r = h.do(http.MethodGet, "/v1/checks/multistep/"+id, h.tokenB, nil)
	expectStatus(t, r, http.StatusNotFound)

	r = h.do(http.MethodGet, "/v1/checks/multistep/"+id+"/incidents", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodGet, "/v1/checks/multistep/"+id+"/results?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["check_type"] != "MULTISTEP" {
		t.Errorf("results page check_type = %v", r.Result()["check_type"])
	}
	r = h.do(http.MethodDelete, "/v1/checks/multistep/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	r = h.do(http.MethodGet, "/v1/checks/multistep/"+id, h.tokenA, nil)
	expectStatus(t, r, http.StatusNotFound)

	bad := []struct {
		name string
		body map[string]any
		want string
	}{
		{"page fixture", ckWith(ckMultistepBody(), "script", "import { test } from '@playwright/test'\n\ntest('t', async ({ page }) => {})\n"),
			"script: line 3: uses the page fixture"},
		{"no script", map[string]any{"name": "x"}, "script"},
		{"empty script", ckWith(ckMultistepBody(), "script", " "), "script: must not be empty"},
		{"syntax", ckWith(ckMultistepBody(), "script", "import { test } from '@playwright/test'\ntest('t', async () => {\n"), "script: line 3"},
		{"assertion", ckWith(ckMultistepBody(), "assertions", []any{map[string]any{"type": "JSON_BODY", "property": "$.a", "comparison": "EQUALS", "expected": "1"}}), "assertions[0].type"},
		{"url", ckWith(ckMultistepBody(), "url", "https://example.com"), "url"},
		{"other type", ckWith(ckMultistepBody(), "type", "TCP_CHECK"), "type: must be MULTISTEP_CHECK"},
	}
	for _, tc := range bad {
		r := h.do(http.MethodPost, "/v1/checks/multistep", h.tokenA, tc.body)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.name, r.ErrorText(), tc.want)
		}
	}
}
