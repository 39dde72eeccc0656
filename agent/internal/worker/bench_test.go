package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/miekg/dns"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/probe"
	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/uplink"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// BenchmarkPipeline measures the agent's whole path for each job — fetch from JetStream,
// decode, probe, result streamed to the control plane, ack — against the same probes made by a
// bare loop of the probers (the ceiling), in the same run. NATS (nats-server), the targets
// (HTTP, TCP, DNS, gRPC health, WebSocket; ping goes to 127.0.0.1) and the control plane's end of the stream (agenttest, acking each result
// VANTAGE_BENCH_ACK_DELAY after receipt, default 25ms: ingest's flush interval; the last two
// in this test binary re-executed) are processes of their own, so the CPU counted is the
// agent's alone (and the bare loop's, the probers' alone):
//
//	go test -run '^$' -bench BenchmarkPipeline -benchtime 20000x ./agent/internal/worker/
//
// Reported per kind: probes/s and process CPU µs per probe for the pipeline and the bare
// loop, their ratio, and the difference (µs of pipeline overhead per job).
func BenchmarkPipeline(b *testing.B) {
	natsURL := startNATSProcess(b)
	t := startTargetsProcess(b)
	kinds := []struct {
		name string
		job  *vantagev1.CheckJob
	}{
		{"http", benchHTTPJob(t.http)},
		{"tcp", benchTCPJob(t.tcp)},
		{"dns", benchDNSJob(t.dns)},
		{"ping", benchPingJob()},
		{"grpc", benchGRPCJob(t.grpc)},
		{"websocket", benchWebSocketJob(t.ws)},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			job := k.job
			n := b.N
			bare := bareLoop(b, job, n)
			pipe := pipeline(b, natsURL, t.cp, job, n)
			b.ReportMetric(float64(n)/pipe.wall.Seconds(), "probes/s")
			b.ReportMetric(float64(n)/bare.wall.Seconds(), "bare-probes/s")
			b.ReportMetric(pipe.cpuPerProbe(n), "cpu-µs/probe")
			b.ReportMetric(bare.cpuPerProbe(n), "bare-cpu-µs/probe")
			b.ReportMetric(pipe.cpuPerProbe(n)/bare.cpuPerProbe(n), "cpu-ratio")
			b.ReportMetric(pipe.cpuPerProbe(n)-bare.cpuPerProbe(n), "overhead-µs/job")
		})
	}
}

// benchConcurrency is the probes in flight of the agent and of the bare loop:
// VANTAGE_BENCH_CONCURRENCY, default 64 (local targets answer at once; more only queues).
func benchConcurrency() int {
	if n, err := strconv.Atoi(os.Getenv("VANTAGE_BENCH_CONCURRENCY")); err == nil && n > 0 {
		return n
	}
	return 64
}

type measured struct{ wall, cpu time.Duration }

func (m measured) cpuPerProbe(n int) float64 { return float64(m.cpu.Microseconds()) / float64(n) }

// processCPU is the user and system CPU this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bareLoop makes n probes of job with benchConcurrency goroutines and the agent's probers.
func bareLoop(b *testing.B, job *vantagev1.CheckJob, n int) measured {
	p := prober.New(prober.WithPrivateTargets(true))
	var next sync.WaitGroup
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	start, cpu0 := time.Now(), processCPU(b)
	for range benchConcurrency() {
		next.Add(1)
		go func() {
			defer next.Done()
			for range jobs {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := p.Probe(ctx, job)
				cancel()
				if err != nil || !res.Passing {
					b.Errorf("bare probe: %v %s", err, res.ResultSummary)
					return
				}
			}
		}()
	}
	next.Wait()
	return measured{wall: time.Since(start), cpu: processCPU(b) - cpu0}
}

// pipeline publishes n copies of job, then runs an agent (worker, uplink, the real runner)
// until the control plane has every result and JetStream every ack.
func pipeline(b *testing.B, natsURL, cpAddr string, job *vantagev1.CheckJob, n int) measured {
	nc, err := nats.Connect(natsURL)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_ = js.DeleteStream(ctx, wire.JobStream)
	agenttest.CreateJobStream(b, js)
	region := job.GetRegion()
	now := time.Now()
	for i := range n {
		j := proto.CloneOf(job)
		j.JobId = fmt.Sprintf("bench-%d-%d", now.UnixNano(), i)
		j.ScheduledAtUnixMs, j.DeadlineUnixMs = now.UnixMilli(), now.Add(10*time.Minute).UnixMilli()
		data, err := wire.EncodeJob(j)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := js.PublishAsync(wire.JobSubject(region), data); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("publishing jobs timed out")
	}

	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	up, err := uplink.New(uplink.Config{Addr: cpAddr, Token: token, AgentID: "bench", Regions: []string{region},
		Capacity: benchConcurrency()}, uplink.Deps{Logger: log, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	runner, err := probe.New(probe.Deps{Prober: prober.New(prober.WithPrivateTargets(true)), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	anc, err := nats.Connect(natsURL)
	if err != nil {
		b.Fatal(err)
	}
	defer anc.Close()
	ajs, err := jetstream.New(anc)
	if err != nil {
		b.Fatal(err)
	}
	w, err := worker.New(worker.Config{AgentID: "bench", Regions: []string{region}, Concurrency: benchConcurrency(),
		PollWait: time.Second}, worker.Deps{JetStream: ajs, Runner: runner, Uplink: up, Logger: log, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU(b)
	uctx, stopUp := context.WithCancel(ctx)
	wctx, stopW := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Add(2)
	go func() { defer running.Done(); _ = up.Run(uctx) }()
	go func() { defer running.Done(); _ = w.Run(wctx) }()
	// The agent's own count of acked jobs (every result confirmed) says when it is done,
	// without asking NATS from this process.
	acked := 0
	deadline := time.Now().Add(5 * time.Minute)
	for acked < n {
		if time.Now().After(deadline) {
			b.Fatalf("after 5 minutes %d of %d jobs acked", acked, n)
		}
		time.Sleep(10 * time.Millisecond)
		acked = int(counterValue(b, reg, "vantage_agent_jobs_total", "acked"))
	}
	m := measured{wall: time.Since(start), cpu: processCPU(b) - cpu0}
	b.StopTimer()
	stopW()
	stopUp()
	running.Wait()
	if failed := counterValue(b, reg, "vantage_agent_probes_total", "fail"); failed > 0 {
		b.Fatalf("%v probes failed", failed)
	}
	if left, err := agenttest.StreamMsgs(ctx, js); err != nil || left != 0 {
		b.Fatalf("%d jobs left in the stream (%v)", left, err)
	}
	return m
}

// startNATSProcess runs nats-server with JetStream in its own process, so that its CPU is not
// the agent's.
func startNATSProcess(b *testing.B) string {
	path, err := exec.LookPath("nats-server")
	if err != nil {
		b.Fatalf("nats-server is needed for the pipeline benchmark: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	cmd := exec.Command(path, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", b.TempDir())
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	testwait.Eventually(b, 10*time.Second, func() error {
		nc, err := nats.Connect(url)
		if err != nil {
			return err
		}
		nc.Close()
		return nil
	})
	return url
}

func benchJob(kind vantagev1.CheckKind) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{CheckId: "bench-check", OrgId: "bench-org", Kind: kind, Region: usEast,
		TimeoutMs: 5000, MaxAttempts: 1}
}

func benchHTTPJob(url string) *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_UPTIME)
	text := `"ok"`
	j.Spec = &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Url: &url, FollowRedirects: true, VerifySsl: true,
		TextToSearchFor: &text}}
	j.Assertions = []*vantagev1.Assertion{
		{Type: check.JSONBody, Property: "$.status", Comparison: check.Equals, Expected: "ok"},
		{Type: check.ResponseHeaders, Property: "content-type", Comparison: check.Contains, Expected: "json"},
	}
	return j
}

func benchTCPJob(port int) *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_TCP)
	j.Spec = &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{Hostname: "127.0.0.1", Port: uint32(port), IpFamily: "IPv4"}}
	return j
}

func benchPingJob() *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_PING)
	j.Spec = &vantagev1.CheckJob_Ping{Ping: &vantagev1.PingSpec{Hostname: "127.0.0.1", Count: 1, IpFamily: "IPv4"}}
	return j
}

func benchGRPCJob(port int) *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_GRPC)
	j.Spec = &vantagev1.CheckJob_Grpc{Grpc: &vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: uint32(port)}}
	return j
}

func benchWebSocketJob(url string) *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_WEBSOCKET)
	msg := "ping"
	j.Spec = &vantagev1.CheckJob_Websocket{Websocket: &vantagev1.WebSocketSpec{Url: url, Message: &msg, Expected: &msg,
		Comparison: check.WebSocketEquals}}
	return j
}

func benchDNSJob(resolver string) *vantagev1.CheckJob {
	j := benchJob(vantagev1.CheckKind_CHECK_KIND_DNS)
	j.Spec = &vantagev1.CheckJob_Dns{Dns: &vantagev1.DNSSpec{Domain: "bench.test", RecordType: "A", Resolver: &resolver,
		Protocol: "UDP"}}
	return j
}

// targets are the benchmark's probe targets, served by another process.
type targets struct {
	http string // URL
	tcp  int    // port on 127.0.0.1
	dns  string // host:port, UDP
	cp   string // the control plane's end of the agent stream, host:port
	grpc int    // port on 127.0.0.1 of a gRPC server with the health service
	ws   string // URL of a WebSocket echo server
}

// targetsEnv tells a re-executed test binary to serve the targets (TestMain).
const targetsEnv = "VANTAGE_BENCH_TARGETS"

// startTargetsProcess re-executes this test binary to serve the targets until the benchmark
// ends.
func startTargetsProcess(b *testing.B) targets {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), targetsEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	var t targets
	if _, err := fmt.Fscan(out, &t.http, &t.tcp, &t.dns, &t.cp, &t.grpc, &t.ws); err != nil {
		b.Fatalf("targets process: %v", err)
	}
	return t
}

// serveTargets serves an HTTP, a TCP, a DNS, a gRPC health and a WebSocket target, prints where, and returns when stdin
// closes (the benchmark ended).
func serveTargets() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	defer ts.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA,
			Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(127, 0, 0, 1)})
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	defer func() { _ = srv.Shutdown() }()
	cpLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	cp := agenttest.ServeControlPlane(cpLis, token)
	defer cp.Stop()
	delay := 25 * time.Millisecond
	if v := os.Getenv("VANTAGE_BENCH_ACK_DELAY"); v != "" {
		if delay, err = time.ParseDuration(v); err != nil {
			panic(err)
		}
	}
	cp.SetAckDelay(delay)
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	grpcSrv := grpc.NewServer()
	healthpb.RegisterHealthServer(grpcSrv, health.NewServer())
	go func() { _ = grpcSrv.Serve(grpcLis) }()
	defer grpcSrv.Stop()
	ws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			if err := c.Write(r.Context(), typ, data); err != nil {
				return
			}
		}
	}))
	defer ws.Close()
	fmt.Println(ts.URL+"/health", lis.Addr().(*net.TCPAddr).Port, pc.LocalAddr().String(), cp.Addr,
		grpcLis.Addr().(*net.TCPAddr).Port, "ws"+strings.TrimPrefix(ws.URL, "http"))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func TestMain(m *testing.M) {
	if os.Getenv(targetsEnv) == "1" {
		serveTargets()
		return
	}
	os.Exit(m.Run())
}

// counterValue sums the series of a counter family that have a label of value value.
func counterValue(b *testing.B, reg *prometheus.Registry, name, value string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == value {
					v += m.GetCounter().GetValue()
				}
			}
		}
	}
	return v
}
