package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// served is one control plane run in this process by serve, on free loopback ports.
type served struct {
	env   map[string]string
	logs  *syncBuffer
	addrs map[string]string // "http", "ping", "metrics", "grpc" → host:port
	done  chan struct{}     // closed when serve returned, with err
	err   error
	stop  context.CancelFunc
}

// testServeEnv is the environment of a control plane on a fresh database and an in-process
// NATS server, every listener on a free loopback port; overrides replace or add variables.
func testServeEnv(t *testing.T, overrides map[string]string) map[string]string {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	env := map[string]string{
		"VANTAGE_SECRET_KEY":       base64.StdEncoding.EncodeToString(key),
		"VANTAGE_AGENT_TOKEN":      "agent-token-0123456789",
		"VANTAGE_BOOTSTRAP_TOKEN":  "vtg_bootstrap_0123456789",
		"VANTAGE_HTTP_ADDR":        "127.0.0.1:0",
		"VANTAGE_GRPC_ADDR":        "127.0.0.1:0",
		"VANTAGE_PING_ADDR":        "127.0.0.1:0",
		"VANTAGE_METRICS_ADDR":     "127.0.0.1:0",
		"VANTAGE_NATS_STORE_DIR":   t.TempDir(),
		"VANTAGE_SHUTDOWN_TIMEOUT": "5s",
	}
	maps.Copy(env, overrides)
	if _, ok := env["VANTAGE_DATABASE_URL"]; !ok {
		env["VANTAGE_DATABASE_URL"] = storetest.NewDatabase(t)
	}
	if _, ok := env["VANTAGE_NATS_URL"]; !ok { // "" in overrides: the embedded server
		env["VANTAGE_NATS_URL"] = jobqueuetest.NewServer(t).ClientURL()
	}
	return env
}

// startServe runs serve with env and waits until every listener in want (default http, ping and
// grpc) is up and /readyz answers 200; addrs also holds the metrics listener's address when it
// was logged by then. It stops the control plane when the test ends.
func startServe(t *testing.T, env map[string]string, want ...string) *served {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the control plane process and PostgreSQL; skipped under -short (make test-short)")
	}
	if len(want) == 0 {
		want = []string{"http", "ping", "grpc"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{env: env, logs: &syncBuffer{}, addrs: map[string]string{}, done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(s.done)
		s.err = serve(ctx, func(k string) string { return env[k] }, s.logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("the control plane did not stop within 30s")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, name := range want {
			if addr := s.listening(name); addr != "" {
				s.addrs[name] = addr
			}
		}
		if len(s.addrs) == len(want) {
			break
		}
		select {
		case <-s.done:
			t.Fatalf("serve returned %v before listening on %v; log:\n%s", s.err, want, s.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the control plane did not log listening on each of %v within 60s (got %v); log:\n%s", want, s.addrs, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.waitReady(t, 30*time.Second)
	if addr := s.listening("metrics"); addr != "" {
		s.addrs["metrics"] = addr
	}
	return s
}

// listening is the address logged as "<name> listening", or "".
func (s *served) listening(name string) string {
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == name+" listening" {
			return line.Addr
		}
	}
	return ""
}

// readyz is the status and body of GET /readyz on the API listener.
func (s *served) readyz() (int, string) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + s.addrs["http"] + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *served) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, body := s.readyz()
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %s after %s; log:\n%s", code, body, within, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer collects log lines written concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
