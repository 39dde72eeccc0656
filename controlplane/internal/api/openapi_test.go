package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/invite"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
)

// openAPIDoc is the part of the document the tests read.
type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
}

func loadOpenAPI(t *testing.T) (openAPIDoc, any) {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(mustOpenAPI(t), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	var generic any
	if err := json.Unmarshal(mustOpenAPI(t), &generic); err != nil {
		t.Fatal(err)
	}
	return doc, generic
}

// ginParam matches :name and *name path segments.
var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	engine, isEngine := h.handler.(*gin.Engine)
	if !isEngine {
		t.Fatalf("New returned %T, want *gin.Engine", h.handler)
	}
	doc, _ := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}

	// Wired as serve.go wires it, the engine also serves HTML pages for people (the public
	// status pages, the invitation link); they are not part of the REST contract.
	wired, err := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: h.st, Auth: h.auth,
		Registry: prometheus.NewRegistry(), Now: time.Now, Ready: h.st.Ping,
		Public:      web.NewHandler(statusPages(t, h.st, nil), web.Options{CookieKey: []byte("0123456789abcdef0123456789abcdef")}),
		Invitations: invite.NewHandler(h.st, invite.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	htmlPages := map[string]bool{"/status/{path}": true, "/invitations/accept": true}

	routed := map[string]bool{}
	var missing []string
	for _, r := range append(engine.Routes(), wired.(*gin.Engine).Routes()...) {
		path := ginParam.ReplaceAllString(r.Path, "{$1}")
		method := strings.ToLower(r.Method)
		if htmlPages[path] {
			continue
		}
		routed[method+" "+path] = true
		if _, ok := doc.Paths[path][method]; !ok {
			missing = append(missing, r.Method+" "+path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("routes missing from openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}

	// And the document describes no route that does not exist.
	var extra []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			if !routed[method+" "+path] {
				extra = append(extra, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("openapi.json describes routes the router does not have:\n  %s", strings.Join(extra, "\n  "))
	}
}

// TestOpenAPIReferencesResolve checks that every $ref names something in the document.
func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	_, generic := loadOpenAPI(t)
	var walk func(v any)
	var broken []string
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && resolvePointer(generic, ref) == nil {
				broken = append(broken, ref)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(generic)
	if len(broken) > 0 {
		t.Fatalf("unresolved $ref: %v", broken)
	}
}

// resolvePointer follows a local JSON pointer such as #/components/schemas/Check.
func resolvePointer(doc any, ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	cur := doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

func TestOpenAPIServedWithoutAuth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	req := httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil)
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), mustOpenAPI(t)) {
		t.Fatal("the served document differs from the embedded one")
	}
}

// schemaErrors checks value against a JSON Schema of the document, for the keywords the
// document uses to describe shapes: $ref, allOf, oneOf, type, const, enum, properties, required,
// additionalProperties and items. It returns one line per mismatch.
//
// It is stricter than JSON Schema in one way: with strict, an object property that its schema
// (or, under allOf, any of the schemas) does not declare is an error, so that a field the API
// sends but the document forgets is caught. The document itself leaves response objects open.
func schemaErrors(doc, schema, value any, at string, strict bool) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return schemaErrors(doc, resolvePointer(doc, ref), value, at, strict)
	}
	var errs []string
	if all, ok := s["allOf"].([]any); ok {
		declared := map[string]bool{}
		for _, sub := range all {
			errs = append(errs, schemaErrors(doc, sub, value, at, false)...)
			for k := range declaredProperties(doc, sub) {
				declared[k] = true
			}
		}
		if obj, isObj := value.(map[string]any); isObj && strict {
			for k := range obj {
				if !declared[k] {
					errs = append(errs, at+": undocumented property "+k)
				}
			}
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		matched := false
		for _, sub := range one {
			if len(schemaErrors(doc, sub, value, at, strict)) == 0 {
				matched = true
				break
			}
		}
		if !matched {
			errs = append(errs, at+": matches none of oneOf")
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, value) {
		errs = append(errs, fmt.Sprintf("%s: %v, want const %v", at, value, c))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, value) }) {
		errs = append(errs, fmt.Sprintf("%s: %v is not in %v", at, value, enum))
	}
	if t, ok := s["type"]; ok {
		types, _ := t.([]any)
		if name, ok := t.(string); ok {
			types = []any{name}
		}
		if !slices.ContainsFunc(types, func(t any) bool { return jsonTypeIs(t.(string), value) }) {
			errs = append(errs, fmt.Sprintf("%s: %T %v is not of type %v", at, value, value, t))
			return errs
		}
	}
	switch v := value.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := v[r]; !ok {
				errs = append(errs, at+": lacks required "+r)
			}
		}
		for k, fv := range v {
			ap, hasAP := s["additionalProperties"]
			switch ps, declared := props[k]; {
			case declared:
				errs = append(errs, schemaErrors(doc, ps, fv, at+"."+k, true)...)
			case hasAP && ap == false:
				errs = append(errs, at+": unexpected property "+k)
			case hasAP:
				errs = append(errs, schemaErrors(doc, ap, fv, at+"."+k, true)...)
			case strict && props != nil && s["allOf"] == nil:
				errs = append(errs, at+": undocumented property "+k)
			}
		}
	case []any:
		for i, e := range v {
			errs = append(errs, schemaErrors(doc, s["items"], e, fmt.Sprintf("%s[%d]", at, i), true)...)
		}
	}
	return errs
}

// declaredProperties is the property names a schema declares, through $ref and allOf.
func declaredProperties(doc, schema any) map[string]bool {
	out := map[string]bool{}
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		return declaredProperties(doc, resolvePointer(doc, ref))
	}
	props, _ := s["properties"].(map[string]any)
	for k := range props {
		out[k] = true
	}
	all, _ := s["allOf"].([]any)
	for _, sub := range all {
		for k := range declaredProperties(doc, sub) {
			out[k] = true
		}
	}
	return out
}

func jsonTypeIs(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func asStrings(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestOpenAPIDescribesResponses checks real answers against the schemas the document gives for
// them, so that the document cannot drift from what the API sends.
func TestOpenAPIDescribesResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, doc := loadOpenAPI(t)
	access := newAccessToken(t, h, "docs@example.com", auth.AllGrants(), nil, h.orgA)

	created := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody("documented", "PEOPLE:READ"))
	id := created.Result()["id"].(string)
	cases := []struct {
		name, method, route, path, token string
		body                             any
		status                           int
	}{
		{"create token", "post", "/v1/tokens", "", "", nil, http.StatusCreated},
		{"list tokens", "get", "/v1/tokens", "/v1/tokens", h.tokenA, nil, http.StatusOK},
		{"get token", "get", "/v1/tokens/{token_id}", "/v1/tokens/" + id, h.tokenA, nil, http.StatusOK},
		{"verify api token", "get", "/v1/tokens/verify", "/v1/tokens/verify", h.tokenA, nil, http.StatusOK},
		{"verify access token", "get", "/v1/tokens/verify", "/v1/tokens/verify", access, nil, http.StatusOK},
		{"verify unknown token", "get", "/v1/tokens/verify", "/v1/tokens/verify", "vtg_unknown", nil, http.StatusOK},
		{"permissions", "get", "/v1/tokens/permissions", "/v1/tokens/permissions", h.tokenA, nil, http.StatusOK},
		{"permissions of an access token", "get", "/v1/tokens/permissions", "/v1/tokens/permissions", access, nil, http.StatusOK},
		{"audit log", "get", "/v1/audit_logs", "/v1/audit_logs", h.tokenA, nil, http.StatusOK},
		{"delete token", "delete", "/v1/tokens/{token_id}", "/v1/tokens/" + id, h.tokenA, nil, http.StatusOK},
		{"token not found", "get", "/v1/tokens/{token_id}", "/v1/tokens/" + id, h.tokenA, nil, http.StatusNotFound},
		{"bad token body", "post", "/v1/tokens", "/v1/tokens", h.tokenA, `{"name":1}`, http.StatusBadRequest},
		{"no credentials", "get", "/v1/audit_logs", "/v1/audit_logs", "", nil, http.StatusUnauthorized},
		{"no permission", "get", "/v1/audit_logs", "/v1/audit_logs", h.token(h.orgA), nil, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := created
			if tc.path != "" {
				r = h.do(strings.ToUpper(tc.method), tc.path, tc.token, tc.body)
			}
			expectStatus(t, r, tc.status)
			conformsToDoc(t, doc, tc.method, tc.route, r)
		})
	}
}

// conformsToDoc fails the test unless r matches the document's schema for its status on route.
func conformsToDoc(t *testing.T, doc any, method, route string, r response) {
	t.Helper()
	op, _ := resolvePointer(doc, "#/paths/"+strings.ReplaceAll(route, "/", "~1")+"/"+method).(map[string]any)
	resp, _ := op["responses"].(map[string]any)[strconv.Itoa(r.Status)].(map[string]any)
	if resp == nil {
		t.Fatalf("the document has no %d response for %s %s", r.Status, method, route)
	}
	if ref, ok := resp["$ref"].(string); ok {
		resp, _ = resolvePointer(doc, ref).(map[string]any)
	}
	schema := resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	var body any
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if errs := schemaErrors(doc, schema, body, "response", true); len(errs) > 0 {
		t.Fatalf("%s %s: %s does not match the document:\n  %s", method, route, r.Raw, strings.Join(errs, "\n  "))
	}
}

// TestOpenAPIDescribesCheckResponses does the same for checks, projects and variables.
func TestOpenAPIDescribesCheckResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, doc := loadOpenAPI(t)
	call := func(method, route, path string, body any, status int) map[string]any {
		t.Helper()
		r := h.do(strings.ToUpper(method), path, h.tokenA, body)
		expectStatus(t, r, status)
		conformsToDoc(t, doc, method, route, r)
		return r.Result()
	}
	project := call("post", "/v1/projects", "/v1/projects", `{"name":"Docs"}`, http.StatusCreated)["id"].(string)
	call("get", "/v1/projects", "/v1/projects", nil, http.StatusOK)
	call("get", "/v1/projects/{project_id}", "/v1/projects/"+project, nil, http.StatusOK)
	call("patch", "/v1/projects/{project_id}", "/v1/projects/"+project, `{"name":"Documented"}`, http.StatusOK)
	env := call("post", "/v1/env", "/v1/env", `{"name":"DOCS_TOKEN","type":"secret","value":"s"}`, http.StatusCreated)["id"].(string)
	call("get", "/v1/env", "/v1/env", nil, http.StatusOK)
	call("get", "/v1/env/{environment_variable_id}", "/v1/env/"+env, nil, http.StatusOK)
	call("post", "/v1/env", "/v1/env", `{"name":"DOCS_HOST","type":"config","value":"example.com"}`, http.StatusCreated)

	bodies := map[string]string{
		"uptime":  `{"name":"u","url":"https://example.com/health","auth_username":"{{DOCS_HOST}}","headers":{"Authorization":"Bearer {{DOCS_TOKEN}}"},"assertions":[{"type":"TEXT_BODY","property":"","comparison":"CONTAINS","expected":"ok"}]}`,
		"browser": `{"name":"b","script":` + jsonString(fuzzScript) + `}`,
		"dns":     `{"name":"d","dns_domain":"example.com","dns_record_type":"TXT","dns_resolver":"1.1.1.1:53"}`,
		"tcp":     `{"name":"t","tcp_hostname":"example.com","tcp_port":443,"tcp_data":"hi"}`,
	}
	for _, kind := range []string{"uptime", "browser", "dns", "tcp"} {
		base := "/v1/checks/" + kind
		id := call("post", base, base, bodies[kind], http.StatusCreated)["id"].(string)
		call("get", base+"/{check_id}", base+"/"+id, nil, http.StatusOK)
		call("get", "/v1/checks/{check_id}", "/v1/checks/"+id, nil, http.StatusOK)
		call("patch", base+"/{check_id}", base+"/"+id, `{"name":"renamed","paused":true}`, http.StatusOK)
		call("get", base+"/{check_id}/incidents", base+"/"+id+"/incidents", nil, http.StatusOK)
		call("get", base+"/{check_id}/results", base+"/"+id+"/results?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", nil, http.StatusOK)
		call("get", base+"/{check_id}/results", base+"/"+id+"/results", nil, http.StatusBadRequest)
		call("delete", base+"/{check_id}", base+"/"+id, nil, http.StatusOK)
		call("get", base+"/{check_id}", base+"/"+id, nil, http.StatusNotFound)
	}
	id := call("post", "/v1/checks", "/v1/checks", `{"name":"g","url":"https://example.com"}`, http.StatusCreated)["id"].(string)
	call("get", "/v1/checks", "/v1/checks", nil, http.StatusOK)
	call("patch", "/v1/checks/{check_id}", "/v1/checks/"+id, `{"muted":true}`, http.StatusOK)
	call("post", "/v1/checks/{check_id}/move", "/v1/checks/"+id+"/move", `{"project_id":"`+project+`"}`, http.StatusOK)
	call("post", "/v1/checks/{check_id}/move", "/v1/checks/"+id+"/move", `{"project_id":null}`, http.StatusOK)
	call("delete", "/v1/checks/{check_id}", "/v1/checks/"+id, nil, http.StatusOK)
	call("delete", "/v1/projects/{project_id}", "/v1/projects/"+project, nil, http.StatusOK)
	call("delete", "/v1/env/{environment_variable_id}", "/v1/env/"+env, nil, http.StatusOK)
}

// mustOpenAPI is the merged OpenAPI document.
func mustOpenAPI(t testing.TB) []byte {
	t.Helper()
	doc, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
