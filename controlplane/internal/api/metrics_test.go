package api

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestHTTPMetricsLabelsAreBounded: whatever methods and paths clients send, the request
// metrics get only known methods (others as OTHER) and route templates (unknown routes under
// one label), so no client can create series at will; and /metrics is not on the API's
// listener (cmd/ serves it on VANTAGE_METRICS_ADDR).
func TestHTTPMetricsLabelsAreBounded(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	reg := prometheus.NewRegistry()
	handler, err := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: st,
		Auth: newAuthenticator(t, st, time.Now), Registry: reg, Now: time.Now, Ready: st.Ping})
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path string) int {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code
	}
	for i := range 40 {
		send(fmt.Sprintf("X%d", i), "/v1/checks")
		send(fmt.Sprintf("X%d", i), fmt.Sprintf("/v1/random-%d", i))
		send(http.MethodGet, fmt.Sprintf("/v1/checks/%d", i))
		send(http.MethodGet, fmt.Sprintf("/nowhere/%d", i))
	}
	send(http.MethodGet, "/healthz")
	if code := send(http.MethodGet, "/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API handler = %d, want 404: metrics are served on their own listener", code)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true, "OTHER": true}
	methods, routes := map[string]bool{}, map[string]bool{}
	series := 0
	for _, f := range families {
		if f.GetName() != "vantage_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			series++
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "method":
					methods[l.GetValue()] = true
					if !known[l.GetValue()] {
						t.Errorf("method label %q: only known methods and OTHER may be labels", l.GetValue())
					}
				case "route":
					routes[l.GetValue()] = true
				}
			}
		}
	}
	if !methods["OTHER"] || !methods["GET"] {
		t.Errorf("method labels %v, want GET and OTHER", methods)
	}
	for r := range routes {
		switch r {
		case "/v1/checks", "/v1/checks/:check_id", "/healthz", "unmatched":
		default:
			t.Errorf("route label %q: want a route template or \"unmatched\"", r)
		}
	}
	// 160 requests of 42 method/path shapes fall into a handful of series.
	if series > 10 {
		t.Errorf("%d series of vantage_http_requests_total for 4 shapes of request, want a handful", series)
	}
}
