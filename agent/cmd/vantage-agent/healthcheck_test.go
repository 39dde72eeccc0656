package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/agent/internal/config"
)

func TestHealthcheckGetsHealthzOnTheListenAddress(t *testing.T) {
	t.Parallel()
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}))
	defer healthy.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	_, healthyPort, _ := net.SplitHostPort(healthy.Listener.Addr().String())
	for _, tc := range []struct {
		name, addr, wantErr string
	}{
		{"healthy", healthy.Listener.Addr().String(), ""},
		{"unspecified host is reached on loopback", ":" + healthyPort, ""},
		{"wildcard host is reached on loopback", "0.0.0.0:" + healthyPort, ""},
		{"unhealthy", failing.Listener.Addr().String(), "503"},
		{"nothing listens", closedAddr, "connection refused"},
		{"bad address", "8080", "VANTAGE_HTTP_ADDR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), []string{"healthcheck"},
				func(k string) string { return map[string]string{"VANTAGE_HTTP_ADDR": tc.addr}[k] }, &out, &out)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("healthcheck of %s: %v", tc.addr, err)
			case tc.wantErr == "" && strings.TrimSpace(out.String()) != "ok":
				t.Errorf("healthcheck printed %q, want ok", out.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("healthcheck of %s: %v, want an error with %q", tc.addr, err, tc.wantErr)
			}
		})
	}
}

func TestHealthzURLDefaultsToTheDocumentedPort(t *testing.T) {
	t.Parallel()
	u, err := healthzURL(config.DefaultHTTPAddr)
	if err != nil || u != "http://127.0.0.1:8081/healthz" {
		t.Errorf("default healthz URL %q, %v", u, err)
	}
}
