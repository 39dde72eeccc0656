package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// openAPISpec is the served document loaded by kin-openapi, with a router over its operations;
// built once per test binary.
var openAPISpec = sync.OnceValues(func() (*openAPIChecker, error) {
	raw, err := openAPIDocument()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &openAPIChecker{doc: doc, router: router}, nil
})

// exercised records the operations the tests sent a request to (operationId → true), so that
// TestMain can name those no test exercises.
var exercised sync.Map

// openAPIChecker validates HTTP exchanges against the document.
type openAPIChecker struct {
	doc    *openapi3.T
	router routers.Router
}

// mustOpenAPISpec is openAPISpec, failing the test when the document does not load.
func mustOpenAPISpec(t testing.TB) *openAPIChecker {
	t.Helper()
	c, err := openAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// validated wraps the API so that every exchange made through it is checked against the
// document; a mismatch fails t with the operation, the status and where the bodies differ from
// their schemas. The exchanges are recorded as they happen and checked when t ends, so that the
// validation's cost does not change the timing the tests observe (rate limits, timeouts).
// Paths outside /v1 that the document does not describe (the HTML pages for people) pass
// unchecked.
func validated(t testing.TB, next http.Handler) http.Handler {
	spec := mustOpenAPISpec(t)
	type exchange struct {
		req    *http.Request
		body   []byte // the request's
		status int
		header http.Header
		resp   []byte
	}
	var (
		mu        sync.Mutex
		exchanges []exchange
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range exchanges {
			x.req.Body = io.NopCloser(bytes.NewReader(x.body))
			if problems := spec.check(x.req, x.status, x.header, x.resp); len(problems) > 0 {
				t.Errorf("%s %s → %d does not match the OpenAPI document:\n  %s\nresponse: %s",
					x.req.Method, x.req.URL.RequestURI(), x.status, strings.Join(problems, "\n  "), truncate(x.resp, 2000))
			}
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				t.Errorf("read the request body: %v", err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sent := r.Clone(context.Background())
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)

		mu.Lock()
		exchanges = append(exchanges, exchange{req: sent, body: body, status: rec.Code, header: rec.Header().Clone(), resp: rec.Body.Bytes()})
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// check validates one exchange and returns one line per mismatch.
func (c *openAPIChecker) check(req *http.Request, status int, header http.Header, body []byte) []string {
	ctx := context.Background()
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return c.checkUnrouted(req, status, header, body, err)
	}
	op := route.Operation.OperationID
	exercised.Store(op, true)
	reqInput := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	var problems []string
	// A request the API refused may break the document (the tests send bad input on purpose);
	// one it accepted must not: the document would be stricter than the API.
	if status < 400 {
		if err := openapi3filter.ValidateRequest(ctx, reqInput); err != nil {
			for _, p := range describeValidationError(err) {
				problems = append(problems, fmt.Sprintf("%s %d: accepted request breaks the document: %s", op, status, p))
			}
		}
	}
	respInput := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqInput, Status: status, Header: header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	respInput.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, respInput); err != nil {
		for _, p := range describeValidationError(err) {
			p = fmt.Sprintf("%s %d: response %s", op, status, strings.TrimSpace(p))
			if _, known := knownDeviations[p]; !known {
				problems = append(problems, p)
			}
		}
	}
	return problems
}

// knownDeviations are mismatches where the API, not the document, departs from the public API
// contract, keyed by the problem line check reports. They are listed for a decision on the
// behaviour; until then they do not fail the tests. Each value says why.
var knownDeviations = map[string]string{
	// A check stored without a timeout (a legacy row; the API itself always stores one) is
	// rendered with timeout null, which the public API contract (api/openapi) allows for browser checks only.
	"getCheck 200: response body /result/timeout: got null, want integer":       "legacy uptime check without a timeout",
	"getUptimeCheck 200: response body /result/timeout: got null, want integer": "legacy uptime check without a timeout",
}

// checkUnrouted handles a request no operation matches: under /v1 the API must answer it with a
// 404 or 405 failure envelope; elsewhere it is not the document's business.
func (c *openAPIChecker) checkUnrouted(req *http.Request, status int, header http.Header, body []byte, routeErr error) []string {
	p := req.URL.Path
	if p != "/v1" && !strings.HasPrefix(p, "/v1/") {
		return nil
	}
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return []string{fmt.Sprintf("no operation describes %s %s (%v), yet the API answered %d", req.Method, p, routeErr, status)}
	}
	failure := c.doc.Components.Schemas["FailureEnvelope"]
	if failure == nil {
		return []string{"the document has no FailureEnvelope schema"}
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{fmt.Sprintf("%d for an unknown route is not JSON: %v", status, err)}
	}
	if err := failure.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		var problems []string
		for _, d := range describeValidationError(err) {
			problems = append(problems, fmt.Sprintf("%d for an unknown route: %s", status, d))
		}
		return problems
	}
	return nil
}

// describeValidationError flattens a kin-openapi validation error into lines of the form
// "<where> <JSON pointer>: <what>".
func describeValidationError(err error) []string {
	var lines []string
	var walk func(err error, where string)
	walk = func(err error, where string) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, sub := range e {
				walk(sub, where)
			}
		case *openapi3filter.RequestError:
			where = "request body"
			if e.Parameter != nil {
				where = fmt.Sprintf("parameter %q in %s", e.Parameter.Name, e.Parameter.In)
			}
			if e.Err == nil {
				lines = append(lines, where+": "+e.Reason)
				return
			}
			walk(e.Err, where)
		case *openapi3filter.ResponseError:
			if e.Err == nil {
				lines = append(lines, e.Reason)
				return
			}
			walk(e.Err, "body")
		case *openapi3.SchemaError:
			for _, l := range schemaLeaves(e).meant() {
				lines = append(lines, where+" "+l.String())
			}
		default:
			if next := errors.Unwrap(err); next != nil {
				walk(next, where)
				return
			}
			lines = append(lines, where+": "+err.Error())
		}
	}
	walk(err, "")
	sort.Strings(lines)
	return slices.Compact(lines)
}

// schemaLeaf is one innermost failure of a value against a schema.
type schemaLeaf struct {
	pointer     string // JSON pointer of the failing value
	message     string
	undeclared  bool // the value is a property no schema declares (unevaluatedProperties: false)
	onConstant  bool // a const failed: the value is another variant of a union
	alternative int  // which oneOf/anyOf alternative the leaf is under, -1 outside one
}

func (l schemaLeaf) String() string { return l.pointer + ": " + l.message }

type schemaLeafList []schemaLeaf

// meant drops the noise from a failure's leaves. A property inside a failing allOf member is
// also reported as not evaluated, so undeclared properties are listed only when nothing else
// failed; and under oneOf/anyOf, the alternatives that fail on a const (a success flag, a
// check_type: another variant of the union) are left out unless every alternative does.
func (ls schemaLeafList) meant() schemaLeafList {
	var declared schemaLeafList
	for _, l := range ls {
		if !l.undeclared {
			declared = append(declared, l)
		}
	}
	if len(declared) > 0 {
		ls = declared
	}
	return ls
}

// schemaLeaves collects the innermost failures of a SchemaError tree.
func schemaLeaves(e *openapi3.SchemaError) schemaLeafList {
	children := schemaErrorsIn(e.Origin)
	if len(children) == 0 {
		l := schemaLeaf{pointer: "/" + strings.Join(e.JSONPointer(), "/"), message: e.Reason, alternative: -1}
		var verr *jsonschema.ValidationError
		if errors.As(e, &verr) {
			l.message = verr.ErrorKind.LocalizedString(schemaMessages)
			switch verr.ErrorKind.(type) {
			case *kind.FalseSchema:
				l.undeclared = true
				l.message = "not declared by the document (unevaluatedProperties: false)"
			case *kind.Const:
				l.onConstant = true
			}
		}
		return schemaLeafList{l}
	}
	var out schemaLeafList
	if e.SchemaField == "oneOf" || e.SchemaField == "anyOf" {
		var meant, all schemaLeafList
		for _, c := range children {
			branch := schemaLeaves(c)
			all = append(all, branch...)
			if !slices.ContainsFunc(branch, func(l schemaLeaf) bool { return l.onConstant }) {
				meant = append(meant, branch...)
			}
		}
		if len(meant) == 0 {
			return all
		}
		return meant
	}
	for _, c := range children {
		out = append(out, schemaLeaves(c)...)
	}
	return out
}

// schemaErrorsIn lists the SchemaErrors an Origin holds.
func schemaErrorsIn(err error) []*openapi3.SchemaError {
	switch e := err.(type) {
	case nil:
		return nil
	case *openapi3.SchemaError:
		return []*openapi3.SchemaError{e}
	case openapi3.MultiError:
		var out []*openapi3.SchemaError
		for _, sub := range e {
			out = append(out, schemaErrorsIn(sub)...)
		}
		return out
	}
	if w, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*openapi3.SchemaError
		for _, sub := range w.Unwrap() {
			out = append(out, schemaErrorsIn(sub)...)
		}
		return out
	}
	return schemaErrorsIn(errors.Unwrap(err))
}

// schemaMessages renders the JSON Schema validator's messages.
var schemaMessages = message.NewPrinter(language.English)

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// TestOpenAPIValidatorReportsMismatches proves the validation the harness applies is not
// vacuous: each exchange below departs from the document in one way, and check must name the
// operation, the status and where.
func TestOpenAPIValidatorReportsMismatches(t *testing.T) {
	t.Parallel()
	spec := mustOpenAPISpec(t)
	const (
		project = `{"id":"p","name":"n","is_default":false,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"`
		failure = `{"success":false,"result":null,"errors":[{"code":404,"message":"not found"}],"messages":[]}`
	)
	cases := []struct {
		name, method, path, body string
		status                   int
		response                 string
		want                     string // a substring of one reported line; "" = no problem
	}{
		{"conforming", "GET", "/v1/projects/0123456789abcdefgh", "", 200,
			`{"success":true,"result":` + project + `},"errors":[],"messages":[]}`, ""},
		{"undocumented result field", "GET", "/v1/projects/0123456789abcdefgh", "", 200,
			`{"success":true,"result":` + project + `,"extra":1},"errors":[],"messages":[]}`,
			"getProject 200: response body /result: additional properties 'extra' not allowed"},
		{"undocumented envelope field", "GET", "/v1/projects/0123456789abcdefgh", "", 200,
			`{"success":true,"result":` + project + `},"errors":[],"messages":[],"debug":true}`,
			"getProject 200: response body /: additional properties 'debug' not allowed"},
		{"wrong type", "GET", "/v1/projects/0123456789abcdefgh", "", 200,
			`{"success":true,"result":{"id":"p","name":"n","is_default":"no","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"},"errors":[],"messages":[]}`,
			"getProject 200: response body /result/is_default: got string, want boolean"},
		{"undocumented status", "GET", "/v1/projects/0123456789abcdefgh", "", 418, failure,
			"getProject 418: response status is not supported"},
		{"malformed failure envelope", "GET", "/v1/projects/0123456789abcdefgh", "", 404,
			`{"success":false,"result":null,"errors":[],"messages":[]}`,
			"getProject 404: response body /errors: minItems: got 0, want 1"},
		{"undeclared field in a composed object", "GET", "/v1/status_pages/0123456789/incidents", "", 200,
			`{"success":true,"result":[{"id":"i","title":"t","impact":"NO_IMPACT","started":null,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z","extra":1}],"errors":[],"messages":[],"result_info":{"page":1,"per_page":20,"count":1,"total_count":1}}`,
			"listStatusPageIncidents 200: response body /result/0/extra: not declared by the document"},
		{"variant of a union", "GET", "/v1/checks/0123456789", "", 200,
			`{"success":true,"result":{"check_type":"DNS"},"errors":[],"messages":[]}`,
			"getCheck 200: response body /result: missing properties 'url', 'version', 'timeout', 'dns_domain'"},
		{"accepted request the document refuses", "POST", "/v1/projects", `{"name":"n","colour":"red"}`, 201,
			`{"success":true,"result":` + project + `},"errors":[],"messages":[]}`,
			"createProject 201: accepted request breaks the document: request body /: additional properties 'colour' not allowed"},
		{"refused request the document refuses", "POST", "/v1/projects", `{"name":"n","colour":"red"}`, 400,
			`{"success":false,"result":null,"errors":[{"code":400,"message":"colour: unknown property"}],"messages":[]}`, ""},
		{"unknown route answered", "GET", "/v1/nope", "", 200, `{}`, "no operation describes GET /v1/nope"},
		{"unknown route refused", "GET", "/v1/nope", "", 404, failure, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			problems := spec.check(req, tc.status, http.Header{"Content-Type": {"application/json"}}, []byte(tc.response))
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Fatalf("unexpected problems:\n  %s", strings.Join(problems, "\n  "))
			case tc.want != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }):
				t.Fatalf("want a problem containing %q, got:\n  %s", tc.want, strings.Join(problems, "\n  "))
			}
		})
	}
}
