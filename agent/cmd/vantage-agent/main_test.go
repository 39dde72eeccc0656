package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/pkg/testwait"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

const token = "test-agent-token-0123456789"

// freeAddr is a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// syncBuffer collects the agent's log lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestRunEndToEnd(t *testing.T) {
	t.Parallel()
	ns := agenttest.StartNATS(t)
	_, js := agenttest.Connect(t, ns)
	agenttest.CreateJobStream(t, js)
	cp := agenttest.StartControlPlane(t, token)
	cp.Stop() // the control plane comes up after the agent

	// The probe target: a TCP server.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	httpAddr, metricsAddr := freeAddr(t), freeAddr(t)
	env := map[string]string{
		"VANTAGE_NATS_URL":          ns.ClientURL(),
		"VANTAGE_CONTROLPLANE_ADDR": cp.Addr,
		"VANTAGE_AGENT_TOKEN":       token,
		"VANTAGE_REGIONS":           "cloud:us-east-1,cloud:eu-west-2",
		"VANTAGE_AGENT_CONCURRENCY": "3",
		"VANTAGE_AGENT_ID":          "agent-e2e",
		"VANTAGE_HTTP_ADDR":         httpAddr,
		"VANTAGE_METRICS_ADDR":      metricsAddr,
		"VANTAGE_SHUTDOWN_TIMEOUT":  "1s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, io.Discard, &logs) }()

	base := "http://" + httpAddr
	testwait.Eventually(t, 10*time.Second, func() error {
		code, _, err := get(base + "/healthz")
		if err != nil || code != 200 {
			return fmt.Errorf("healthz: %d %v", code, err)
		}
		return nil
	})
	if code, body, err := get(base + "/readyz"); err != nil || code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "not registered with the control plane") {
		t.Errorf("readyz without control plane = %d %q %v, want 503 naming the control plane", code, body, err)
	}

	cp.Restart(t)
	testwait.Eventually(t, 15*time.Second, func() error {
		code, body, err := get(base + "/readyz")
		if err != nil || code != 200 {
			return fmt.Errorf("readyz: %d %q %v", code, body, err)
		}
		return nil
	})
	regs := cp.Registers()
	if len(regs) == 0 || regs[0].GetAgentId() != "agent-e2e" || regs[0].GetCapacity() != 3 || len(regs[0].GetRegions()) != 2 {
		t.Errorf("registers = %v", regs)
	}

	port := lis.Addr().(*net.TCPAddr).Port
	now := time.Now()
	agenttest.PublishJob(t, js, &vantagev1.CheckJob{
		JobId: "job-e2e", CheckId: "chk-1", OrgId: "org-1", Kind: vantagev1.CheckKind_CHECK_KIND_TCP, Region: "cloud:eu-west-2",
		ScheduledAtUnixMs: now.UnixMilli(), DeadlineUnixMs: now.Add(time.Minute).UnixMilli(), TimeoutMs: 5000, MaxAttempts: 2,
		Spec: &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{Hostname: "127.0.0.1", Port: uint32(port), IpFamily: "IPv4"}},
	})
	testwait.Eventually(t, 10*time.Second, func() error {
		n, err := agenttest.StreamMsgs(context.Background(), js)
		if err != nil || n != 0 {
			return fmt.Errorf("stream holds %d jobs (%v)", n, err)
		}
		return nil
	})
	r := cp.Stored(agenttest.Key{JobID: "job-e2e", Region: "cloud:eu-west-2", Attempt: 1})
	if r == nil || !r.GetPassing() || !r.GetIsFinalAttempt() || r.GetAgentId() != "agent-e2e" || r.GetTcpStatus() != "CONNECTED" {
		t.Fatalf("stored result = %v", r)
	}

	// Metrics are on their own listener, not on the probes' one.
	if code, _, err := get(base + "/metrics"); err != nil || code != http.StatusNotFound {
		t.Errorf("GET /metrics on VANTAGE_HTTP_ADDR = %d %v, want 404", code, err)
	}
	_, metrics, err := get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`vantage_agent_probes_total{kind="tcp",outcome="pass"} 1`,
		`vantage_agent_jobs_total{outcome="acked"} 1`,
		`vantage_agent_jobs_in_flight 0`,
		`vantage_agent_probe_duration_seconds_count{kind="tcp"} 1`,
		`vantage_agent_uplink_connected 1`,
		`vantage_agent_uplink_reconnects_total`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after SIGTERM = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	out := logs.String()
	if strings.Contains(out, token) {
		t.Error("the agent token reached the log")
	}
	for _, want := range []string{`"component":"uplink"`, `"msg":"vantage agent stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
}

func TestRunBadTokenIsFatal(t *testing.T) {
	t.Parallel()
	ns := agenttest.StartNATS(t)
	cp := agenttest.StartControlPlane(t, token)
	env := map[string]string{
		"VANTAGE_NATS_URL":          ns.ClientURL(),
		"VANTAGE_CONTROLPLANE_ADDR": cp.Addr,
		"VANTAGE_AGENT_TOKEN":       "not-the-agent-token-000",
		"VANTAGE_REGIONS":           "all",
		"VANTAGE_HTTP_ADDR":         "127.0.0.1:0",
		"VANTAGE_METRICS_ADDR":      "127.0.0.1:0",
	}
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), nil, func(k string) string { return env[k] }, io.Discard, io.Discard)
	}()
	select {
	case err := <-done:
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("run = %v, want an Unauthenticated error", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run kept going with a rejected token")
	}
}

func TestRunConfig(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "VANTAGE_AGENT_TOKEN") || !strings.Contains(err.Error(), "VANTAGE_REGIONS") {
		t.Errorf("run without configuration = %v, want an error naming VANTAGE_AGENT_TOKEN and VANTAGE_REGIONS", err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"config"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"VANTAGE_NATS_URL", "VANTAGE_AGENT_CONCURRENCY", "VANTAGE_HTTP_ADDR", strconv.Itoa(32)} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("config output lacks %s", v)
		}
	}
	if err := run(context.Background(), []string{"bogus"}, nil, io.Discard, io.Discard); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("unknown command = %v, want an error", err)
	}
}

// TestRunNATSUnreachableOrRefused: an agent given a NATS address where nothing listens, or
// credentials NATS refuses, says why in its log and in /readyz, keeps retrying with backoff,
// and becomes ready once NATS is there.
func TestRunNATSUnreachableOrRefused(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	start := func(t *testing.T, natsURL string) (base string, logs *syncBuffer) {
		httpAddr := freeAddr(t)
		env := map[string]string{
			"VANTAGE_NATS_URL":          natsURL,
			"VANTAGE_CONTROLPLANE_ADDR": cp.Addr,
			"VANTAGE_AGENT_TOKEN":       token,
			"VANTAGE_REGIONS":           "cloud:us-east-1",
			"VANTAGE_HTTP_ADDR":         httpAddr,
			"VANTAGE_METRICS_ADDR":      "127.0.0.1:0",
			"VANTAGE_BROWSER_PATH":      "none",
			"VANTAGE_SHUTDOWN_TIMEOUT":  "1s",
		}
		ctx, cancel := context.WithCancel(context.Background())
		logs = &syncBuffer{}
		done := make(chan error, 1)
		go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, io.Discard, logs) }()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run = %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("run did not stop")
			}
		})
		return "http://" + httpAddr, logs
	}
	notReadyBecause := func(t *testing.T, base string, logs *syncBuffer, reason string) {
		t.Helper()
		testwait.Eventually(t, 15*time.Second, func() error {
			code, body, err := get(base + "/readyz")
			if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "NATS not connected: ") ||
				!strings.Contains(body, reason) {
				return fmt.Errorf("readyz = %d %q %v, want 503 naming NATS and %q", code, body, err, reason)
			}
			if !strings.Contains(logs.String(), "cannot connect to NATS; retrying with backoff") {
				return errors.New("no failed attempt logged")
			}
			if !strings.Contains(logs.String(), reason) {
				return fmt.Errorf("the log does not say %q", reason)
			}
			return nil
		})
	}

	// natsAt serves NATS with JetStream and the job stream at addr, requiring authToken unless
	// it is "".
	natsAt := func(t *testing.T, addr, authToken, dir string) *server.Server {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		ns, err := server.NewServer(&server.Options{Host: host, Port: p, Authorization: authToken, JetStream: true,
			StoreDir: dir, NoLog: true, NoSigs: true})
		if err != nil {
			t.Fatal(err)
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			t.Fatal("nats not ready")
		}
		return ns
	}
	readyWithin := func(t *testing.T, base string) {
		t.Helper()
		testwait.Eventually(t, 60*time.Second, func() error {
			if code, body, err := get(base + "/readyz"); err != nil || code != http.StatusOK {
				return fmt.Errorf("readyz = %d %q %v", code, body, err)
			}
			return nil
		})
	}

	t.Run("wrong token, then NATS accepts it", func(t *testing.T) {
		t.Parallel()
		addr := freeAddr(t)
		ns := natsAt(t, addr, "the-right-nats-token", t.TempDir())
		t.Cleanup(ns.Shutdown)
		base, logs := start(t, "nats://a-wrong-nats-token@"+addr)
		notReadyBecause(t, base, logs, "Authorization Violation")
		if strings.Contains(logs.String(), "a-wrong-nats-token") {
			t.Error("the NATS token reached the log")
		}
		// The operator fixes NATS's side: the agent, still retrying, gets in.
		ns.Shutdown()
		ns.WaitForShutdown()
		ns = natsAt(t, addr, "", t.TempDir())
		t.Cleanup(ns.Shutdown)
		_, js := agenttest.Connect(t, ns)
		agenttest.CreateJobStream(t, js)
		readyWithin(t, base)
	})

	t.Run("nothing listening, then NATS comes up", func(t *testing.T) {
		t.Parallel()
		addr := freeAddr(t)
		base, logs := start(t, "nats://"+addr)
		notReadyBecause(t, base, logs, "connection refused")

		ns := natsAt(t, addr, "", t.TempDir())
		t.Cleanup(ns.Shutdown)
		_, js := agenttest.Connect(t, ns)
		agenttest.CreateJobStream(t, js)
		readyWithin(t, base)
		if !strings.Contains(logs.String(), `"msg":"NATS connected"`) {
			t.Error("the log does not say NATS connected")
		}
	})
}
