package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/fleet"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// harness is the API on a real router and a fresh real database, with two organizations.
type harness struct {
	t       testing.TB
	st      *store.Store
	handler http.Handler // api, validating every exchange against the OpenAPI document (validated)
	api     http.Handler // the API as New built it
	auth    *auth.Authenticator
	orgA    uuid.UUID // paid
	orgB    uuid.UUID // free
	tokenA  string    // every permission in orgA
	tokenB  string    // every permission in orgB

	mu       sync.Mutex
	changed  []uuid.UUID // checks the API reported as changed (Deps.CheckChanged)
	fixedNow time.Time   // the API's clock (Deps.Now) when set; time.Now otherwise
}

// setNow stops the API's clock at t.
func (h *harness) setNow(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fixedNow = t
}

func (h *harness) now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fixedNow.IsZero() {
		return time.Now()
	}
	return h.fixedNow
}

// changedChecks returns the checks reported through Deps.CheckChanged so far.
func (h *harness) changedChecks() []uuid.UUID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uuid.UUID(nil), h.changed...)
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	st := storetest.New(t)
	h := &harness{t: t, st: st}
	h.auth = newAuthenticator(t, st, time.Now)
	agents, err := fleet.New(fleet.Config{ReplicaName: "this-replica"}, fleet.Deps{Store: st,
		Local: func() []fleet.LocalAgent { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	// The notifier sends the test messages of POST /v1/integrations/{id}/test; it is not run.
	tester, err := notifier.New(notifier.Config{PublicURL: "https://vantage.example"}, notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	handler, err := New(Deps{
		Integrations: tester,
		Agents:       agents,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Store:        st,
		Auth:         h.auth,
		Registry:     prometheus.NewRegistry(),
		Now:          h.now,
		Ready:        st.Ping,
		CheckChanged: func(id uuid.UUID) {
			h.mu.Lock()
			h.changed = append(h.changed, id)
			h.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.api, h.handler = handler, validated(t, handler)
	ctx := context.Background()
	a, err := st.CreateOrganization(ctx, "Org A", "paid")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateOrganization(ctx, "Org B", "free")
	if err != nil {
		t.Fatal(err)
	}
	h.orgA, h.orgB = a.ID, b.ID
	h.tokenA = h.token(h.orgA, auth.AllGrants()...)
	h.tokenB = h.token(h.orgB, auth.AllGrants()...)
	return h
}

// token creates an API token in org with the given "AREA:LEVEL" grants and returns its secret.
func (h *harness) token(org uuid.UUID, grants ...string) string {
	h.t.Helper()
	secret, hash := auth.NewSecret()
	if grants == nil {
		grants = []string{}
	}
	_, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{
		OrgID: org, Name: "test", Grants: grants, SecretHash: hash})
	if err != nil {
		h.t.Fatal(err)
	}
	return secret
}

// response is a decoded API answer.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any // the envelope, decoded generically
}

// Result is the envelope's result as a map (nil unless it is an object).
func (r response) Result() map[string]any { m, _ := r.Body["result"].(map[string]any); return m }

// Items is the envelope's result as a list of objects.
func (r response) Items() []map[string]any {
	arr, _ := r.Body["result"].([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, x := range arr {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

// FirstError is errors[0].message, or "".
func (r response) FirstError() string {
	errs, _ := r.Body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	m, _ := errs[0].(map[string]any)
	s, _ := m["message"].(string)
	return s
}

// ErrorText joins every errors[].message.
func (r response) ErrorText() string {
	errs, _ := r.Body["errors"].([]any)
	var parts []string
	for _, e := range errs {
		m, _ := e.(map[string]any)
		s, _ := m["message"].(string)
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// do sends a request. body may be nil, a string/[]byte (sent as is) or a value (JSON-encoded).
// headers are "Name: value" pairs.
func (h *harness) do(method, path, token string, body any, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	r := response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
	if err := json.Unmarshal(r.Raw, &r.Body); err != nil {
		h.t.Fatalf("%s %s: response is not JSON (%d): %s", method, path, rec.Code, r.Raw)
	}
	checkEnvelope(h.t, method+" "+path, r)
	return r
}

// checkEnvelope fails on a server error: every bad input must be answered with a 4xx failure
// envelope (503 is the one documented 5xx). The envelope's shape itself is validated against the
// OpenAPI document by the harness's handler (validated), for every status.
func checkEnvelope(t testing.TB, what string, r response) {
	t.Helper()
	if r.Status >= 500 && r.Status != http.StatusServiceUnavailable {
		t.Fatalf("%s: server error %d: %s", what, r.Status, r.Raw)
	}
}

// expectStatus fails the test unless r has the wanted status.
func expectStatus(t testing.TB, r response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Raw)
	}
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z`)
)

// golden compares a response body with testdata/<name>.golden.json after replacing ids and
// timestamps with placeholders; -update rewrites the file.
func golden(t testing.TB, name string, raw []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	norm := timePattern.ReplaceAll(uuidPattern.ReplaceAll(pretty, []byte("<id>")), []byte("<timestamp>"))
	norm = append(norm, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, norm, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update to create it)", path, err)
	}
	if !bytes.Equal(want, norm) {
		t.Errorf("golden %s differs:\n--- want\n%s\n--- got\n%s", path, want, norm)
	}
}
