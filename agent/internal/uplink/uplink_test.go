package uplink_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/uplink"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

const token = "test-agent-token-0123456789"

type harness struct {
	cp     *agenttest.ControlPlane
	client *uplink.Client
	reg    *prometheus.Registry
	done   chan error // Run's result
	cancel context.CancelFunc
}

func start(t *testing.T, cp *agenttest.ControlPlane, tok string) *harness {
	t.Helper()
	reg := prometheus.NewRegistry()
	c, err := uplink.New(uplink.Config{
		Addr: cp.Addr, Token: tok, AgentID: "agent-1", Hostname: "host-1", Version: "test",
		Regions: []string{"cloud:us-east-1"}, Capacity: 4, Capabilities: []string{"browser"},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	}, uplink.Deps{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{cp: cp, client: c, reg: reg, done: make(chan error, 1), cancel: cancel}
	go func() { h.done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return h
}

func result(job string, attempt uint32) *vantagev1.CheckResult {
	return &vantagev1.CheckResult{JobId: job, Region: "cloud:us-east-1", AttemptNumber: attempt, Passing: true}
}

// send submits r and waits for its outcome, or for ctx.
func send(ctx context.Context, c *uplink.Client, r *vantagev1.CheckResult) (bool, error) {
	type outcome struct {
		stored bool
		err    error
	}
	got := make(chan outcome, 1)
	if err := c.Submit(ctx, r, func(stored bool, err error) { got <- outcome{stored, err} }); err != nil {
		return false, err
	}
	select {
	case o := <-got:
		return o.stored, o.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func waitReady(t *testing.T, c *uplink.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("uplink never registered: %v", err)
	}
}

func TestRegisterAndSend(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	h := start(t, cp, token)
	waitReady(t, h.client)

	regs := cp.Registers()
	if len(regs) != 1 {
		t.Fatalf("registers = %d, want 1", len(regs))
	}
	if r := regs[0]; r.GetAgentId() != "agent-1" || r.GetHostname() != "host-1" || r.GetCapacity() != 4 ||
		r.GetVersion() != "test" || len(r.GetRegions()) != 1 || r.GetRegions()[0] != "cloud:us-east-1" ||
		!slices.Equal(r.GetCapabilities(), append([]string{"browser"}, wire.StreamCapabilities...)) || r.GetProtocolVersion() != wire.StreamProtocol {
		t.Errorf("register = %v", r)
	}

	// Acks are matched to their senders by sequence number: odd attempts are refused.
	cp.SetOnResult(func(_ context.Context, r *vantagev1.CheckResult) (bool, string) {
		if r.GetAttemptNumber()%2 == 1 {
			return false, "odd attempt"
		}
		return true, ""
	})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			attempt := uint32(i%5 + 1)
			stored, err := send(ctx, h.client, result(fmt.Sprintf("job-%d", i), attempt))
			if err != nil {
				errs <- err
				return
			}
			if want := attempt%2 == 0; stored != want {
				errs <- fmt.Errorf("job-%d attempt %d: stored = %v, want %v", i, attempt, stored, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// attempts 2 and 4 (i%5 == 1 or 3) are stored: 16 of 40.
	if got := metricValue(t, h.reg, "vantage_agent_uplink_results_total", map[string]string{"outcome": "stored"}); got != 16 {
		t.Errorf("stored results metric = %v, want 16", got)
	}
	if got := metricValue(t, h.reg, "vantage_agent_uplink_results_total", map[string]string{"outcome": "not_stored"}); got != 24 {
		t.Errorf("not_stored results metric = %v, want 24", got)
	}
	if got := metricValue(t, h.reg, "vantage_agent_uplink_connected", nil); got != 1 {
		t.Errorf("connected gauge = %v, want 1", got)
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	h := start(t, cp, token)
	waitReady(t, h.client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if stored, err := send(ctx, h.client, result("before", 1)); err != nil || !stored {
		t.Fatalf("send before restart: stored=%v err=%v", stored, err)
	}

	cp.Restart(t)
	testwait.Eventually(t, 10*time.Second, func() error {
		if n := len(cp.Registers()); n != 2 {
			return fmt.Errorf("registers = %d, want 2", n)
		}
		return nil
	})
	waitReady(t, h.client)
	if stored, err := send(ctx, h.client, result("after", 1)); err != nil || !stored {
		t.Fatalf("send after restart: stored=%v err=%v", stored, err)
	}
	if cp.Stored(agenttest.Key{JobID: "after", Region: "cloud:us-east-1", Attempt: 1}) == nil {
		t.Error("result sent after the restart was not stored")
	}
	if n := metricValue(t, h.reg, "vantage_agent_uplink_reconnects_total", nil); n < 1 {
		t.Errorf("reconnects = %v, want >= 1", n)
	}
}

func TestInFlightSendFailsFastWhenStreamDrops(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	received := make(chan struct{})
	cp.SetOnResult(func(ctx context.Context, _ *vantagev1.CheckResult) (bool, string) {
		close(received)
		<-ctx.Done() // never ack
		return false, "gone"
	})
	h := start(t, cp, token)
	waitReady(t, h.client)

	sendErr := make(chan error, 1)
	go func() {
		_, err := send(context.Background(), h.client, result("job", 1))
		sendErr <- err
	}()
	<-received
	cp.Stop()
	select {
	case err := <-sendErr:
		if !errors.Is(err, uplink.ErrSessionLost) {
			t.Fatalf("Send error = %v, want ErrSessionLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Send still waiting after the stream dropped")
	}
	if h.client.Ready() {
		t.Error("Ready after the stream dropped")
	}
}

func TestSendWaitsForSession(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	cp.Stop() // nobody listening yet
	h := start(t, cp, token)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := send(ctx, h.client, result("early", 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send without a session = %v, want deadline exceeded", err)
	}

	cp.Restart(t)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if stored, err := send(ctx2, h.client, result("late", 1)); err != nil || !stored {
		t.Fatalf("Send once the control plane is up: stored=%v err=%v", stored, err)
	}
}

func TestBadTokenIsFatal(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	h := start(t, cp, "wrong-token-0123456789")
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Run = %v, want Unauthenticated", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept retrying with a bad token")
	}
	if _, err := send(context.Background(), h.client, result("x", 1)); !errors.Is(err, uplink.ErrClosed) {
		t.Errorf("Send after fatal Run = %v, want ErrClosed", err)
	}
}

func TestCancelClosesStreamGracefully(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	h := start(t, cp, token)
	waitReady(t, h.client)
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	testwait.Eventually(t, 5*time.Second, func() error {
		ends := cp.Ends()
		if len(ends) != 1 || !errors.Is(ends[0], io.EOF) {
			return fmt.Errorf("stream ends seen by the control plane = %v, want [EOF]", ends)
		}
		return nil
	})
}

func TestCancelBeforeRegistration(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token)
	cp.Stop() // nothing to register with: Run is in its reconnect loop
	h := start(t, cp, token)
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
}

// metricValue sums the series of a counter or gauge family whose labels include want.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for k, w := range want {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || (lp.GetName() == k && lp.GetValue() == w)
				}
				if !found {
					continue series
				}
			}
			v += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return v
}

// TestResultsBatchedByProtocol: a protocol-2 control plane gets results many to a message,
// pipelined; a protocol-1 one gets them one to a message (agenttest refuses batches on
// protocol 1), and no not-run result, which it would store as a failed probe.
func TestResultsBatchedByProtocol(t *testing.T) {
	t.Parallel()
	for _, protocol := range []uint32{2, 1} {
		t.Run(fmt.Sprintf("protocol %d", protocol), func(t *testing.T) {
			t.Parallel()
			cp := agenttest.StartControlPlane(t, token)
			cp.SetProtocol(protocol)
			h := start(t, cp, token)
			waitReady(t, h.client)
			const n = 300
			var wg sync.WaitGroup
			var failed sync.Map
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range n {
				wg.Add(1)
				r := result(fmt.Sprintf("job-%d", i), 1)
				if i == 0 {
					r.NotRunReason = "EXPIRED"
				}
				err := h.client.Submit(ctx, r, func(stored bool, err error) {
					if !stored || err != nil {
						failed.Store(i, fmt.Sprintf("stored=%v err=%v", stored, err))
					}
					wg.Done()
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			failed.Range(func(k, v any) bool {
				t.Errorf("result %v: %v", k, v)
				return true
			})
			want := n
			if protocol < 2 {
				want = n - 1 // the not-run result stays home
			}
			if got := len(cp.Received()); got != want {
				t.Errorf("control plane received %d results, want %d", got, want)
			}
			msgs := metricValue(t, h.reg, "vantage_agent_uplink_batch_results", nil)
			if protocol >= 2 && (msgs == 0 || msgs >= n/2) {
				t.Errorf("%d results went out in %v messages, want them batched", n, msgs)
			}
		})
	}
}

// TestShedIsExpiredForProtocolTwo: a control plane of protocol 2 does not know the not-run
// reason SHED; it gets the run as EXPIRED, a protocol-3 one as SHED.
func TestShedIsExpiredForProtocolTwo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		protocol uint32
		want     string
	}{{3, wire.NotRunShed}, {2, wire.NotRunExpired}} {
		t.Run(fmt.Sprintf("protocol %d", tt.protocol), func(t *testing.T) {
			t.Parallel()
			cp := agenttest.StartControlPlane(t, token)
			cp.SetProtocol(tt.protocol)
			h := start(t, cp, token)
			waitReady(t, h.client)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := result("job-shed", 1)
			r.NotRunReason = wire.NotRunShed
			done := make(chan bool, 1)
			if err := h.client.Submit(ctx, r, func(stored bool, _ error) { done <- stored }); err != nil {
				t.Fatal(err)
			}
			select {
			case stored := <-done:
				if !stored {
					t.Fatal("the shed run was not stored")
				}
			case <-ctx.Done():
				t.Fatal("no ack")
			}
			if got := cp.Received(); len(got) != 1 || got[0].GetNotRunReason() != tt.want {
				t.Errorf("control plane received %v, want one result with reason %s", got, tt.want)
			}
		})
	}
}

// TestGoAwayHandsOver: a control plane that sends GOAWAY (gRPC's MaxConnectionAge, as ingest
// does after VANTAGE_GRPC_MAX_CONNECTION_AGE) gets a new connection from the agent at once,
// and the old stream is handed over gracefully: the agent stops sending on it, the control
// plane acks every result it took, and only then does the stream end. Results flow throughout
// and none is lost (ErrSessionLost) or left unacked, over many handovers.
func TestGoAwayHandsOver(t *testing.T) {
	t.Parallel()
	cp := agenttest.StartControlPlane(t, token, grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge: 300 * time.Millisecond, MaxConnectionAgeGrace: 30 * time.Second}))
	cp.SetAckDelay(20 * time.Millisecond) // results are in flight whenever GOAWAY comes
	h := start(t, cp, token)
	waitReady(t, h.client)

	const senders = 4
	var sent, stored atomic.Int64
	var failures sync.Map // error text → true
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				ok, err := send(ctx, h.client, result(fmt.Sprintf("job-%d-%d", i, n), 1))
				cancel()
				sent.Add(1)
				switch {
				case err != nil:
					failures.Store(err.Error(), true)
				case ok:
					stored.Add(1)
				}
			}
		}()
	}
	wg.Wait()

	failures.Range(func(k, _ any) bool { t.Errorf("a result failed across a handover: %v", k); return true })
	if stored.Load() != sent.Load() || int(sent.Load()) != cp.StoredCount() {
		t.Errorf("%d results sent, %d acked as stored, %d stored by the control plane; want all", sent.Load(), stored.Load(), cp.StoredCount())
	}
	regs := len(cp.Registers())
	if regs < 4 {
		t.Fatalf("%d registrations in 3s with a connection age of 300ms: the agent did not reconnect on GOAWAY", regs)
	}
	// Every stream but the one still open ended by the agent closing its side (EOF).
	for i, err := range cp.Ends() {
		if !errors.Is(err, io.EOF) {
			t.Errorf("stream %d ended with %v, want the agent's graceful close (EOF)", i+1, err)
		}
	}
	if lost := metricValue(t, h.reg, "vantage_agent_uplink_results_total", map[string]string{"outcome": "lost"}); lost != 0 {
		t.Errorf("vantage_agent_uplink_results_total{outcome=lost} = %v, want 0", lost)
	}
	if n := metricValue(t, h.reg, "vantage_agent_uplink_handovers_total", nil); n < float64(regs-2) {
		t.Errorf("vantage_agent_uplink_handovers_total = %v after %d registrations", n, regs)
	}
	t.Logf("%d results over %d streams", sent.Load(), regs)
}
