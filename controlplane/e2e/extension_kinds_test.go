package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestExtensionKindsEndToEnd runs a ping, a gRPC health and a WebSocket check through the
// real binaries: each goes UP, DOWN when its target breaks and UP again when it is mended, with
// exactly one alert each way.
func TestExtensionKindsEndToEnd(t *testing.T) {
	parallel(t)
	peer, setPeerLink := pingPeer(t)

	grpcListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	healthSrv := health.NewServer()
	grpcSrv := grpc.NewServer()
	healthpb.RegisterHealthServer(grpcSrv, healthSrv)
	healthSrv.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_SERVING)
	go func() { _ = grpcSrv.Serve(grpcListener) }()
	t.Cleanup(grpcSrv.Stop)

	var wsBroken atomic.Bool
	ws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wsBroken.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			_ = c.Write(r.Context(), typ, append([]byte("echo "), data...))
		}
	}))
	t.Cleanup(ws.Close)

	s := newStack(t)
	const region = "cloud:us-west-1"
	s.startAgent(t, "agent-extension-kinds", region)
	common := map[string]any{
		"test_regions": []string{region}, "timeout": 3000, "confirmation_period_seconds": 0,
		"recovery_period_seconds": 0, "reminder_alert_interval_minutes": -1,
	}
	create := func(path string, body map[string]any) uuid.UUID {
		for k, v := range common {
			body[k] = v
		}
		id := s.createCheck(t, path, body)
		s.setInterval(t, id, fastInterval)
		return id
	}
	checks := []struct {
		kind          string
		id            uuid.UUID
		breakIt, mend func()
	}{
		{"ping", create("/v1/checks/ping", map[string]any{"name": "e2e ping", "ping_hostname": peer, "ping_count": 2}),
			func() { setPeerLink("down") }, func() { setPeerLink("up") }},
		{"grpc", create("/v1/checks/grpc", map[string]any{"name": "e2e grpc", "grpc_hostname": "127.0.0.1",
			"grpc_port": grpcListener.Addr().(*net.TCPAddr).Port, "grpc_service": "shop.v1.Cart"}),
			func() { healthSrv.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_NOT_SERVING) },
			func() { healthSrv.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_SERVING) }},
		{"websocket", create("/v1/checks/websocket", map[string]any{"name": "e2e websocket",
			"url": "ws" + strings.TrimPrefix(ws.URL, "http") + "/feed", "websocket_message": "ping", "websocket_expected": "echo ping"}),
			func() { wsBroken.Store(true) }, func() { wsBroken.Store(false) }},
	}
	for _, c := range checks {
		s.waitStatus(t, c.id, "UP", 30*time.Second)
	}
	for _, c := range checks {
		c.breakIt()
	}
	for _, c := range checks {
		seen := s.waitStatus(t, c.id, "DOWN", fastInterval*time.Second+slack)
		mustOnlySee(t, seen, "UP", "VERIFYING", "DOWN")
	}
	for _, c := range checks {
		c.mend()
	}
	for _, c := range checks {
		seen := s.waitStatus(t, c.id, "UP", fastInterval*time.Second+slack)
		mustOnlySee(t, seen, "DOWN", "RECOVERING", "UP")
	}
	for _, c := range checks {
		if got := s.outbox(t, c.id, "uptime.down"); got != 1 {
			t.Errorf("%s: uptime.down outbox rows %d, want 1", c.kind, got)
		}
		if got := s.outbox(t, c.id, "uptime.up"); got != 1 {
			t.Errorf("%s: uptime.up outbox rows %d, want 1", c.kind, got)
		}
		if inc := s.incidents(t, c.kind, c.id); len(inc) != 1 || inc[0].EndedAt == nil {
			t.Errorf("%s: incidents %+v, want one, ended", c.kind, inc)
		}
		if dups := s.duplicateResults(t, c.id); len(dups) > 0 {
			t.Errorf("%s: results stored more than once: %v", c.kind, dups)
		}
	}
	// The kinds' own observations reached the stored results.
	for _, q := range []struct{ kind, sql string }{
		{"ping", `SELECT count(*) FROM check_results WHERE check_id = $1 AND passing AND (details->>'ping_received')::int = 2`},
		{"grpc", `SELECT count(*) FROM check_results WHERE check_id = $1 AND NOT passing AND details->>'grpc_status' = 'NOT_SERVING'`},
		{"websocket", `SELECT count(*) FROM check_results WHERE check_id = $1 AND passing AND response_code = 101 AND details->>'websocket_reply_ms' IS NOT NULL`},
	} {
		for _, c := range checks {
			if c.kind == q.kind && s.count(t, q.sql, c.id) == 0 {
				t.Errorf("%s: no stored result carries the kind's observations", q.kind)
			}
		}
	}
}

// pingPeer makes a network namespace joined to this one by a veth pair and returns the
// peer's address and a function setting its side of the link up or down. Named by the pid;
// deleted at cleanup.
func pingPeer(t *testing.T) (string, func(state string)) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		t.Skipf("ip netns is unavailable here: %v: %s", err, out)
	}
	pid := os.Getpid()
	ns, hostDev, nsDev := fmt.Sprintf("ve2e%d", pid), fmt.Sprintf("ve2eh%d", pid%100000), fmt.Sprintf("ve2en%d", pid%100000)
	base := fmt.Sprintf("10.%d.%d", 150+pid%100, (pid/100)%250)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", hostDev).Run()
		_ = exec.Command("ip", "netns", "del", ns).Run()
	})
	run("link", "add", hostDev, "type", "veth", "peer", "name", nsDev)
	run("link", "set", nsDev, "netns", ns)
	run("addr", "add", base+".1/30", "dev", hostDev)
	run("link", "set", hostDev, "up")
	run("-n", ns, "addr", "add", base+".2/30", "dev", nsDev)
	run("-n", ns, "link", "set", nsDev, "up")
	return base + ".2", func(state string) { run("-n", ns, "link", "set", nsDev, state) }
}
