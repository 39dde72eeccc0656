package worker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/uplink"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

const (
	token   = "test-agent-token-0123456789"
	usEast  = "cloud:us-east-1"
	euCent  = "cloud:eu-central-1"
	apSouth = "cloud:ap-south-1"
)

var _ worker.Uplink = (*uplink.Client)(nil)

// tcpRunner is a real, tiny TCP prober: it connects to the job's host and port and, when the job
// carries data, sends it as a line and passes only if the reply line is "ok".
type tcpRunner struct {
	delay time.Duration // waited (honouring ctx) before connecting: a slow target

	mu         sync.Mutex
	running    int
	maxRunning int
	runs       map[string]int // job id -> attempts run
	started    chan string    // job ids, as attempts start (buffered; never blocks)
}

func newTCPRunner(delay time.Duration) *tcpRunner {
	return &tcpRunner{delay: delay, runs: map[string]int{}, started: make(chan string, 100)}
}

var _ worker.Runner = (*tcpRunner)(nil)

func (r *tcpRunner) Run(ctx context.Context, job *vantagev1.CheckJob, attempt int) *vantagev1.CheckResult {
	r.mu.Lock()
	r.running++
	r.maxRunning = max(r.maxRunning, r.running)
	r.runs[job.GetJobId()]++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running--
		r.mu.Unlock()
	}()
	select {
	case r.started <- job.GetJobId():
	default:
	}
	if r.delay > 0 {
		t := time.NewTimer(r.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}

	start := time.Now()
	res := &vantagev1.CheckResult{}
	fail := func(ft string) *vantagev1.CheckResult {
		src := "TRANSPORT"
		res.Passing, res.FailureSource, res.FailureType = false, &src, &ft
		res.ResponseTimeMs = float64(time.Since(start).Milliseconds())
		return res
	}
	spec := job.GetTcp()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(spec.GetHostname(), strconv.Itoa(int(spec.GetPort()))))
	if err != nil {
		if ctx.Err() != nil {
			return fail("TIMEOUT")
		}
		return fail("CONNECTION_REFUSED")
	}
	defer conn.Close()
	if spec.Data != nil {
		stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
		defer stop()
		if _, err := io.WriteString(conn, spec.GetData()+"\n"); err != nil {
			return fail("CONNECTION_RESET")
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return fail("TIMEOUT")
		}
		body := strings.TrimSpace(line)
		res.ResponseBody = &body
		if body != "ok" {
			return fail("UNEXPECTED_RESPONSE")
		}
	}
	res.Passing = true
	res.ResponseTimeMs = float64(time.Since(start).Milliseconds())
	return res
}

func (r *tcpRunner) stats() (maxRunning int, runs map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.runs {
		out[k] = v
	}
	return r.maxRunning, out
}

// target is a TCP server answering each line with reply(n), n counting connections from 1;
// an empty reply means never answer.
func target(t *testing.T, reply func(n int) string) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			k := int(n.Add(1))
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				if rep := reply(k); rep != "" {
					io.WriteString(c, rep+"\n")
					return
				}
				io.Copy(io.Discard, c) // hang until the client gives up
			}()
		}
	}()
	return lis.Addr().(*net.TCPAddr).Port
}

// closedPort is a port nobody listens on: connecting is refused.
func closedPort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	return p
}

func tcpJob(id, region string, port int, maxAttempts uint32) *vantagev1.CheckJob {
	now := time.Now()
	data := "ping"
	return &vantagev1.CheckJob{
		JobId: id, CheckId: "chk-" + id, OrgId: "org-1", Kind: vantagev1.CheckKind_CHECK_KIND_TCP, Region: region,
		ScheduledAtUnixMs: now.UnixMilli(), DeadlineUnixMs: now.Add(time.Minute).UnixMilli(),
		TimeoutMs: 5000, MaxAttempts: maxAttempts,
		Spec: &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{Hostname: "127.0.0.1", Port: uint32(port), Data: &data}},
	}
}

type env struct {
	ns *server.Server
	js jetstream.JetStream
	cp *agenttest.ControlPlane
}

func setup(t *testing.T) *env {
	t.Helper()
	ns := agenttest.StartNATS(t)
	_, js := agenttest.Connect(t, ns)
	agenttest.CreateJobStream(t, js)
	return &env{ns: ns, js: js, cp: agenttest.StartControlPlane(t, token)}
}

type agent struct {
	nc     *nats.Conn // the agent's own NATS connection
	w      *worker.Worker
	up     *uplink.Client
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startAgent runs an uplink and a worker the way main wires them, on their own NATS connection,
// and waits until the agent is ready.
func (e *env) startAgent(t *testing.T, id string, runner worker.Runner, cfg worker.Config) *agent {
	t.Helper()
	a := e.startAgentUnready(t, id, runner, cfg)
	testwait.Eventually(t, 10*time.Second, func() error {
		if !a.w.Ready() || !a.up.Ready() {
			return errors.New("agent not ready")
		}
		return nil
	})
	return a
}

// startAgentUnready is startAgent without the wait.
func (e *env) startAgentUnready(t *testing.T, id string, runner worker.Runner, cfg worker.Config) *agent {
	t.Helper()
	nc, js := agenttest.Connect(t, e.ns)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	if cfg.Regions == nil {
		cfg.Regions = []string{usEast}
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 4
	}
	cfg.AgentID = id
	if cfg.PollWait == 0 {
		cfg.PollWait = 300 * time.Millisecond
	}
	if cfg.RetryNakDelay == 0 {
		cfg.RetryNakDelay = 20 * time.Millisecond
	}
	up, err := uplink.New(uplink.Config{
		Addr: e.cp.Addr, Token: token, AgentID: id, Regions: cfg.Regions, Capacity: cfg.Concurrency,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	}, uplink.Deps{Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(cfg, worker.Deps{JetStream: js, Runner: runner, Uplink: up, Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	uctx, ucancel := context.WithCancel(context.Background())
	a := &agent{nc: nc, w: w, up: up, reg: reg, cancel: wcancel, done: make(chan struct{})}
	upDone := make(chan struct{})
	go func() {
		defer close(upDone)
		if err := up.Run(uctx); err != nil {
			t.Errorf("uplink: %v", err)
		}
	}()
	go func() {
		defer close(a.done)
		if err := w.Run(wctx); err != nil {
			t.Errorf("worker: %v", err)
		}
		ucancel() // like main: the uplink outlives the worker's drain
		<-upDone
	}()
	t.Cleanup(a.stop)
	return a
}

func (a *agent) stop() {
	a.once.Do(func() {
		a.cancel()
		<-a.done
	})
}

func (e *env) streamMsgs(t *testing.T) uint64 {
	t.Helper()
	n, err := agenttest.StreamMsgs(context.Background(), e.js)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) consumerInfo(t *testing.T, region string) *jetstream.ConsumerInfo {
	t.Helper()
	ctx := context.Background()
	c, err := e.js.Consumer(ctx, wire.JobStream, wire.ConsumerName(region))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func waitStreamMsgs(t *testing.T, e *env, want uint64) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, func() error {
		if n := e.streamMsgs(t); n != want {
			return fmt.Errorf("stream holds %d jobs, want %d", n, want)
		}
		return nil
	})
}

func key(job, region string, attempt uint32) agenttest.Key {
	return agenttest.Key{JobID: job, Region: region, Attempt: attempt}
}

func TestJobsAckedOnlyAfterResultAck(t *testing.T) {
	t.Parallel()
	e := setup(t)
	release := make(chan struct{})
	arrived := make(chan string, 10)
	e.cp.SetOnResult(func(ctx context.Context, r *vantagev1.CheckResult) (bool, string) {
		arrived <- r.GetJobId()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return true, ""
	})
	port := target(t, func(int) string { return "ok" })
	e.startAgent(t, "agent-a", newTCPRunner(0), worker.Config{Regions: []string{usEast, euCent}})

	agenttest.PublishJob(t, e.js, tcpJob("job-us", usEast, port, 3))
	agenttest.PublishJob(t, e.js, tcpJob("job-eu", euCent, port, 3))
	agenttest.PublishJob(t, e.js, tcpJob("job-ap", apSouth, port, 3)) // a region this agent does not serve

	first := <-arrived // this result now waits for its ack
	region := map[string]string{"job-us": usEast, "job-eu": euCent}[first]
	if n := e.streamMsgs(t); n != 3 {
		t.Fatalf("stream holds %d jobs while a result is unacked, want 3", n)
	}
	if info := e.consumerInfo(t, region); info.NumAckPending != 1 {
		t.Errorf("%s: unacked jobs = %d, want 1 (the job whose result is unacked)", first, info.NumAckPending)
	}
	close(release)

	waitStreamMsgs(t, e, 1) // only the ap-south-1 job is left
	for _, k := range []agenttest.Key{key("job-us", usEast, 1), key("job-eu", euCent, 1)} {
		r := e.cp.Stored(k)
		if r == nil {
			t.Fatalf("%v not stored", k)
		}
		if !r.GetPassing() || !r.GetIsFinalAttempt() || r.GetAgentId() != "agent-a" || r.GetCheckId() != "chk-"+k.JobID ||
			r.GetOrgId() != "org-1" || r.GetKind() != vantagev1.CheckKind_CHECK_KIND_TCP || r.GetScheduledAtUnixMs() == 0 ||
			r.GetDispatchedAtUnixMs() == 0 || r.GetCheckedAtUnixMs() < r.GetDispatchedAtUnixMs() {
			t.Errorf("result %v = %v", k, r)
		}
	}
	if n := len(e.cp.Received()); n != 2 {
		t.Errorf("received %d results, want 2", n)
	}
}

func TestNotStoredIsRedelivered(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var refused atomic.Bool
	e.cp.SetOnResult(func(_ context.Context, r *vantagev1.CheckResult) (bool, string) {
		if refused.CompareAndSwap(false, true) {
			return false, "database unavailable"
		}
		return true, ""
	})
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(0)
	e.startAgent(t, "agent-a", runner, worker.Config{})
	agenttest.PublishJob(t, e.js, tcpJob("job-1", usEast, port, 1))

	waitStreamMsgs(t, e, 0)
	k := key("job-1", usEast, 1)
	if got := e.cp.ReceivedCount(k); got != 2 {
		t.Errorf("result received %d times, want 2 (refused, then stored after redelivery)", got)
	}
	if e.cp.Stored(k) == nil {
		t.Error("result never stored")
	}
	if _, runs := runner.stats(); runs["job-1"] != 2 {
		t.Errorf("job ran %d times, want 2", runs["job-1"])
	}
}

func TestExpiredJobIsReportedNotRun(t *testing.T) {
	t.Parallel()
	for _, protocol := range []uint32{2, 1} {
		t.Run(fmt.Sprintf("protocol %d", protocol), func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			e.cp.SetProtocol(protocol)
			port := target(t, func(int) string { return "ok" })
			runner := newTCPRunner(0)
			a := e.startAgent(t, "agent-a", runner, worker.Config{})

			late := tcpJob("late", usEast, port, 3)
			late.DeadlineUnixMs = time.Now().Add(-time.Second).UnixMilli()
			late.Signature = []byte("sig")
			agenttest.PublishJob(t, e.js, late)
			ctx := context.Background()
			if _, err := e.js.Publish(ctx, wire.JobSubject(usEast), []byte("\xffnot a job")); err != nil {
				t.Fatal(err)
			}

			waitStreamMsgs(t, e, 0) // both settled: the late one acked, the undecodable one terminated
			if _, runs := runner.stats(); len(runs) != 0 {
				t.Errorf("runner ran %v", runs)
			}
			got := e.cp.Received()
			if protocol < 2 {
				// A protocol-1 control plane would store a not-run result as a failed probe.
				if len(got) != 0 {
					t.Errorf("a protocol-1 control plane received %v", got)
				}
			} else {
				r := e.cp.Stored(key("late", usEast, 1))
				if len(got) != 1 || r == nil || r.GetNotRunReason() != wire.NotRunExpired || r.GetPassing() ||
					!r.GetIsFinalAttempt() || r.GetCheckId() != late.GetCheckId() || string(r.GetJobSignature()) != "sig" ||
					r.GetScheduledAtUnixMs() != late.GetScheduledAtUnixMs() {
					t.Errorf("results = %v, want one not-run EXPIRED result for the late job", got)
				}
			}
			if n := metricValue(t, a.reg, "vantage_agent_jobs_not_run_total", map[string]string{"region": usEast, "reason": "EXPIRED"}); n != 1 {
				t.Errorf("not_run{EXPIRED} = %v, want 1", n)
			}
			if n := metricValue(t, a.reg, "vantage_agent_jobs_skipped_total", map[string]string{"reason": "undecodable"}); n != 1 {
				t.Errorf("skipped{undecodable} = %v, want 1", n)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		maxAttempts uint32
		port        func(t *testing.T) int
		want        []bool // passing, per attempt; the last is final
	}{
		{"passes at once", 3, func(t *testing.T) int { return target(t, func(int) string { return "ok" }) }, []bool{true}},
		{"passes on the third", 5, func(t *testing.T) int {
			return target(t, func(n int) string { return map[bool]string{true: "ok", false: "down"}[n >= 3] })
		}, []bool{false, false, true}},
		{"always fails", 3, closedPort, []bool{false, false, false}},
		{"max attempts 0 means one", 0, closedPort, []bool{false}},
	}
	e := setup(t)
	runner := newTCPRunner(0)
	e.startAgent(t, "agent-a", runner, worker.Config{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("job-%d", i)
			agenttest.PublishJob(t, e.js, tcpJob(id, usEast, tt.port(t), tt.maxAttempts))
			testwait.Eventually(t, 10*time.Second, func() error {
				if e.cp.Stored(key(id, usEast, uint32(len(tt.want)))) == nil {
					return errors.New("final attempt not stored")
				}
				return nil
			})
			for a, pass := range tt.want {
				r := e.cp.Stored(key(id, usEast, uint32(a+1)))
				final := a == len(tt.want)-1
				if r == nil || r.GetPassing() != pass || r.GetIsFinalAttempt() != final {
					t.Errorf("attempt %d = %v, want passing=%v final=%v", a+1, r, pass, final)
				}
			}
			if e.cp.Stored(key(id, usEast, uint32(len(tt.want)+1))) != nil {
				t.Errorf("an attempt after the final one was sent")
			}
		})
	}
	waitStreamMsgs(t, e, 0)
}

func TestBackPressure(t *testing.T) {
	t.Parallel()
	e := setup(t)
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(150 * time.Millisecond)
	e.startAgent(t, "agent-a", runner, worker.Config{Concurrency: 2})
	for i := range 10 {
		agenttest.PublishJob(t, e.js, tcpJob(fmt.Sprintf("slow-%d", i), usEast, port, 1))
	}
	// A slot is free once its probe ends, so JetStream's ack-pending count may include jobs
	// whose results wait for the control plane; what the slots bound is the probes running.
	testwait.Eventually(t, 20*time.Second, func() error {
		if n := e.cp.StoredCount(); n != 10 {
			return fmt.Errorf("%d of 10 jobs stored", n)
		}
		return nil
	})
	waitStreamMsgs(t, e, 0)
	if maxRunning, _ := runner.stats(); maxRunning != 2 {
		t.Errorf("at most %d probes ran at once, want exactly 2", maxRunning)
	}
}

func TestLongJobIsKeptInProgress(t *testing.T) {
	t.Parallel()
	e := setup(t)
	port := target(t, func(int) string { return "ok" })
	runner := newTCPRunner(1500 * time.Millisecond) // longer than AckWait
	e.startAgent(t, "agent-a", runner, worker.Config{
		Concurrency: 2, AckWait: 500 * time.Millisecond, ProgressInterval: 100 * time.Millisecond,
	})
	agenttest.PublishJob(t, e.js, tcpJob("long", usEast, port, 1))
	waitStreamMsgs(t, e, 0)
	if _, runs := runner.stats(); runs["long"] != 1 {
		t.Errorf("job ran %d times, want 1 (redelivered despite progress)", runs["long"])
	}
}

func TestStoppedAgentHandsJobToAnother(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hang := target(t, func(int) string { return "" })     // agent A's probe never finishes
	okPort := target(t, func(int) string { return "ok" }) // …agent B's does (same job, another target)

	runnerA := newTCPRunner(0)
	a := e.startAgent(t, "agent-a", runnerA, worker.Config{DrainTimeout: 100 * time.Millisecond})
	job := tcpJob("job-1", usEast, hang, 1)
	job.TimeoutMs = 60_000
	agenttest.PublishJob(t, e.js, job)
	<-runnerA.started

	// B probes the same job against a target that answers: it stands for "another vantage
	// point that can finish the job".
	runnerB := &redirectRunner{tcpRunner: newTCPRunner(0), port: okPort}
	e.startAgent(t, "agent-b", runnerB, worker.Config{})

	stopped := time.Now()
	a.stop()
	if d := time.Since(stopped); d > 3*time.Second {
		t.Errorf("stopping agent A took %s", d)
	}
	waitStreamMsgs(t, e, 0)
	if d := time.Since(stopped); d >= wire.JobAckWait {
		t.Errorf("job redelivered after %s: handed back only by AckWait", d)
	}
	k := key("job-1", usEast, 1)
	if n := e.cp.ReceivedCount(k); n != 1 {
		t.Errorf("attempt key received %d times, want 1", n)
	}
	if r := e.cp.Stored(k); r == nil || r.GetAgentId() != "agent-b" || !r.GetPassing() {
		t.Errorf("stored result = %v, want agent-b's passing result", r)
	}
}

// redirectRunner probes another port than the job names.
type redirectRunner struct {
	*tcpRunner
	port int
}

func (r *redirectRunner) Run(ctx context.Context, job *vantagev1.CheckJob, attempt int) *vantagev1.CheckResult {
	j := proto.CloneOf(job)
	j.GetTcp().Port = uint32(r.port)
	return r.tcpRunner.Run(ctx, j, attempt)
}

func TestResultsFlowAfterControlPlaneRestart(t *testing.T) {
	t.Parallel()
	e := setup(t)
	port := target(t, func(int) string { return "ok" })
	a := e.startAgent(t, "agent-a", newTCPRunner(0), worker.Config{})
	agenttest.PublishJob(t, e.js, tcpJob("before", usEast, port, 1))
	waitStreamMsgs(t, e, 0)

	e.cp.Stop()
	testwait.Eventually(t, 10*time.Second, func() error {
		if a.up.Ready() {
			return errors.New("uplink still ready")
		}
		return nil
	})
	agenttest.PublishJob(t, e.js, tcpJob("during", usEast, port, 1))
	e.cp.Restart(t)
	waitStreamMsgs(t, e, 0)
	if e.cp.Stored(key("during", usEast, 1)) == nil {
		t.Error("job published while the control plane was down was not stored after it came back")
	}
}

// metricValue sums the series of a counter or gauge family whose labels include want (for a
// histogram, their sample counts).
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

func TestUsesTheControlPlanesConsumerAsItIs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	// The control plane created the consumer with its own settings.
	if _, err := e.js.CreateConsumer(ctx, wire.JobStream, jetstream.ConsumerConfig{
		Durable: wire.ConsumerName(usEast), FilterSubject: wire.JobSubject(usEast), Description: "agents of " + usEast,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 45 * time.Second, MaxDeliver: 7, MaxAckPending: 50000,
	}); err != nil {
		t.Fatal(err)
	}
	port := target(t, func(int) string { return "ok" })
	e.startAgent(t, "agent-a", newTCPRunner(0), worker.Config{Regions: []string{usEast, euCent}})
	agenttest.PublishJob(t, e.js, tcpJob("job-us", usEast, port, 1))
	agenttest.PublishJob(t, e.js, tcpJob("job-eu", euCent, port, 1))
	waitStreamMsgs(t, e, 0)

	if cfg := e.consumerInfo(t, usEast).Config; cfg.AckWait != 45*time.Second || cfg.MaxDeliver != 7 {
		t.Errorf("the agent changed the control plane's consumer: AckWait %s, MaxDeliver %d", cfg.AckWait, cfg.MaxDeliver)
	}
	// The missing one the agent created, like the control plane would have.
	if cfg := e.consumerInfo(t, euCent).Config; cfg.AckWait != wire.JobAckWait || cfg.MaxDeliver != 5 ||
		cfg.FilterSubject != wire.JobSubject(euCent) || cfg.AckPolicy != jetstream.AckExplicitPolicy {
		t.Errorf("consumer created by the agent = %+v", cfg)
	}
}

func TestAgentStartsBeforeTheStreamExists(t *testing.T) {
	t.Parallel()
	ns := agenttest.StartNATS(t)
	_, js := agenttest.Connect(t, ns)
	e := &env{ns: ns, js: js, cp: agenttest.StartControlPlane(t, token)}
	port := target(t, func(int) string { return "ok" })

	// The agent comes up first: no stream, so no consumer, so not ready.
	a := e.startAgentUnready(t, "agent-a", newTCPRunner(0), worker.Config{})
	if a.w.Ready() {
		t.Fatal("worker ready without a job stream")
	}
	agenttest.CreateJobStream(t, js) // the control plane comes up
	testwait.Eventually(t, 15*time.Second, func() error {
		if !a.w.Ready() {
			return errors.New("worker not ready")
		}
		return nil
	})
	agenttest.PublishJob(t, js, tcpJob("job-1", usEast, port, 1))
	waitStreamMsgs(t, e, 0)
	if e.cp.Stored(key("job-1", usEast, 1)) == nil {
		t.Error("job not stored")
	}
}

// kindRunner passes every attempt and records the kinds of the jobs it ran.
type kindRunner struct {
	mu    sync.Mutex
	kinds []vantagev1.CheckKind
}

func (r *kindRunner) Run(_ context.Context, job *vantagev1.CheckJob, _ int) *vantagev1.CheckResult {
	r.mu.Lock()
	r.kinds = append(r.kinds, job.GetKind())
	r.mu.Unlock()
	return &vantagev1.CheckResult{Passing: true}
}

func (r *kindRunner) ran() []vantagev1.CheckKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]vantagev1.CheckKind(nil), r.kinds...)
}

func browserJob(id, region string) *vantagev1.CheckJob {
	now := time.Now()
	return &vantagev1.CheckJob{
		JobId: id, CheckId: "chk-" + id, OrgId: "org-1", Kind: vantagev1.CheckKind_CHECK_KIND_BROWSER, Region: region,
		ScheduledAtUnixMs: now.UnixMilli(), DeadlineUnixMs: now.Add(time.Minute).UnixMilli(), TimeoutMs: 5000, MaxAttempts: 1,
		Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Url: proto.String("http://127.0.0.1:1/")}},
	}
}

// An agent without a browser never fetches a browser job, while it keeps serving the region's
// other jobs; the browser job waits in JetStream for an agent with a browser, which runs it.
func TestBrowserJobsGoOnlyToAgentsWithABrowser(t *testing.T) {
	t.Parallel()
	e := setup(t)
	port := target(t, func(int) string { return "ok" })
	plain := &kindRunner{}
	e.startAgent(t, "agent-plain", plain, worker.Config{})

	agenttest.PublishJob(t, e.js, browserJob("job-browser", usEast))
	agenttest.PublishJob(t, e.js, tcpJob("job-tcp", usEast, port, 1))
	testwait.Eventually(t, 10*time.Second, func() error {
		if e.cp.Stored(key("job-tcp", usEast, 1)) == nil {
			return errors.New("the TCP job's result is not stored")
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // a fetch of the browser job would happen within the poll wait
	if kinds := plain.ran(); len(kinds) != 1 || kinds[0] != vantagev1.CheckKind_CHECK_KIND_TCP {
		t.Fatalf("the agent without a browser ran %v, want only the TCP job", kinds)
	}
	if n := e.streamMsgs(t); n != 1 {
		t.Fatalf("stream holds %d jobs, want 1 (the browser job)", n)
	}

	withBrowser := &kindRunner{}
	e.startAgent(t, "agent-browser", withBrowser, worker.Config{BrowserConcurrency: 1})
	waitStreamMsgs(t, e, 0)
	if kinds := withBrowser.ran(); len(kinds) != 1 || kinds[0] != vantagev1.CheckKind_CHECK_KIND_BROWSER {
		t.Fatalf("the agent with a browser ran %v, want the browser job", kinds)
	}
	if e.cp.Stored(key("job-browser", usEast, 1)) == nil {
		t.Error("the browser job's result is not stored")
	}
}
