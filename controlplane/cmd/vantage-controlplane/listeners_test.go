package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMetricsAreServedOnTheirOwnListener: /metrics answers on VANTAGE_METRICS_ADDR only, not
// on the public API listener; probes keep /healthz and /readyz on the API listener.
func TestMetricsAreServedOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	s := startServe(t, testServeEnv(t, nil))
	if s.addrs["metrics"] == "" {
		t.Fatal("no metrics listener was logged")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(addr, path string) (int, string) {
		t.Helper()
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(s.addrs["http"], "/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API listener = %d, want 404", code)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(s.addrs["http"], p); code != http.StatusOK {
			t.Errorf("GET %s on the API listener = %d %s, want 200", p, code, body)
		}
	}
	code, body := get(s.addrs["metrics"], "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics on the metrics listener = %d", code)
	}
	for _, want := range []string{"vantage_http_requests_total{", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestEveryListenerCutsOffASlowBody: on the API, ping and metrics listeners, a client that
// sends complete headers and then never sends its body loses its connection within the read
// timeout, and one client address cannot hold more connections than its bound.
func TestEveryListenerCutsOffASlowBody(t *testing.T) {
	t.Parallel()
	const readTimeout = time.Second
	s := startServe(t, testServeEnv(t, map[string]string{
		"VANTAGE_HTTP_READ_TIMEOUT": readTimeout.String(), "VANTAGE_MAX_CONNS_PER_CLIENT": "4"}))
	paths := map[string]string{"http": "/v1/checks", "ping": "/0123456789abcdef", "metrics": "/metrics"}
	for _, name := range []string{"http", "ping", "metrics"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if s.addrs[name] == "" {
				t.Fatalf("no %s listener", name)
			}
			c, err := net.Dial("tcp", s.addrs[name])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			req := "POST " + paths[name] + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer vtg_bootstrap_0123456789\r\n" +
				"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":"
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(readTimeout + 4*time.Second))
			_, err = io.ReadAll(c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the connection was still open %s after its headers (read timeout %s)", time.Since(start).Round(time.Millisecond), readTimeout)
			}
		})
	}
	t.Run("connections per client", func(t *testing.T) {
		t.Parallel()
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range 4 {
			c, err := net.Dial("tcp", s.addrs["ping"])
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		c, err := net.Dial("tcp", s.addrs["ping"])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a fifth connection of one client was kept open with VANTAGE_MAX_CONNS_PER_CLIENT=4")
		}
	})
}
