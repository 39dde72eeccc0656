package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
)

// TestOpenAPIDocumentIsValid loads the served document with kin-openapi and validates it
// (structure, references, schemas, examples and defaults).
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	spec := mustOpenAPISpec(t) // loads and validates, failing with kin-openapi's reasons
	if spec.doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", spec.doc.OpenAPI)
	}
	for path, item := range spec.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
		}
	}
}

// ginParam matches :name and *name path segments.
var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// TestOpenAPIMatchesRouteTable fails when a route of the router has no operation in the
// document, or an operation has no route.
func TestOpenAPIMatchesRouteTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := mustOpenAPISpec(t)
	// Wired as serve.go wires it, the engine also serves HTML pages and images for people (the
	// public status pages, the invitation link, the badges); they are not part of the REST
	// contract.
	engine, err := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: h.st, Auth: h.auth,
		Registry: prometheus.NewRegistry(), Now: time.Now, Ready: h.st.Ping,
		Public:      publicSite(t, h.st, web.Config{}, web.Deps{Store: statusPages(t, h.st, nil)}),
		Invitations: newInvitations(t, h.st)})
	if err != nil {
		t.Fatal(err)
	}
	htmlPages := map[string]bool{"/status/{path}": true, "/invitations/accept": true, "/badges/{token}/{file}": true}

	routed := map[string]bool{}
	var missing []string
	for _, r := range engine.(*gin.Engine).Routes() {
		path := ginParam.ReplaceAllString(r.Path, "{$1}")
		if htmlPages[path] {
			continue
		}
		routed[r.Method+" "+path] = true
		if item := spec.doc.Paths.Value(path); item == nil || item.GetOperation(r.Method) == nil {
			missing = append(missing, r.Method+" "+path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("routes without an operation in the OpenAPI document:\n  %s", strings.Join(missing, "\n  "))
	}

	var extra []string
	for path, item := range spec.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !routed[method+" "+path] {
				extra = append(extra, method+" "+path+" ("+op.OperationID+")")
			}
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("operations of the OpenAPI document without a route:\n  %s", strings.Join(extra, "\n  "))
	}
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

	// The YAML form is the same document.
	req = httptest.NewRequest(http.MethodGet, "/v1/openapi.yaml", nil)
	rec = httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/yaml") {
		t.Fatalf("openapi.yaml: status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var fromYAML, fromJSON any
	if err := yaml.Unmarshal(rec.Body.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustOpenAPI(t), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalizeNumbers(fromYAML), fromJSON) {
		t.Fatal("openapi.yaml is not the document openapi.json serves")
	}
}

// normalizeNumbers turns the integers a YAML decoder gives into the float64 of encoding/json.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

// TestOpenAPIDescribesResponses makes the token and audit log operations answer with each of
// their documented statuses; the harness validates every answer against the document.
func TestOpenAPIDescribesResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
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
		})
	}
}

// TestOpenAPIDescribesCheckResponses does the same for checks, projects and variables.
func TestOpenAPIDescribesCheckResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := func(method, route, path string, body any, status int) map[string]any {
		t.Helper()
		r := h.do(strings.ToUpper(method), path, h.tokenA, body)
		expectStatus(t, r, status)
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

// TestOpenAPIDescribesOperationsEndpoints calls the operations endpoints through the validating
// harness: they answer without credentials, as the document says.
func TestOpenAPIDescribesOperationsEndpoints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/healthz", "application/json", `"status":"ok"`},
		{"/readyz", "application/json", `"status":"ok"`},
	} {
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.contentType) ||
			!strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("GET %s: %d %q %.200s", tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
}
