package ingest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

const testToken = "agent-token-for-tests-0123456789"

// testSecretKey is the control plane's secret key in these tests: results are signed with it.
const testSecretKey = "0123456789abcdef0123456789abcdef"

// clock is the injected clock: tests step it instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// harness is the ingest pipeline on a real gRPC server (127.0.0.1, random port) and a fresh
// real database: agents are driven by a real gRPC client.
type harness struct {
	t       testing.TB
	st      *store.Store
	clock   *clock
	ev      *evaluator.Evaluator
	srv     *Server
	guard   *jobguard.Guard
	conn    *grpc.ClientConn
	reg     *prometheus.Registry // the pipeline's metrics
	org     uuid.UUID
	mu      sync.Mutex
	changes []string // "<check id> <state>" from OnStateChange
}

type harnessOptions struct {
	batcher   BatcherConfig
	evaluator evaluator.Config
}

func newHarness(t testing.TB, opts harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, st: storetest.New(t), clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	h.reg = reg
	onChange := func(id uuid.UUID, state string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changes = append(h.changes, id.String()+" "+state)
	}
	var err error
	if h.ev, err = evaluator.New(opts.evaluator, evaluator.Deps{Store: h.st, Logger: log, Now: h.clock.Now, Registerer: reg,
		OnStateChange: onChange}); err != nil {
		t.Fatal(err)
	}
	bo := opts.batcher
	if bo.FlushInterval == 0 {
		bo.FlushInterval = 5 * time.Millisecond
	}
	b, err := NewBatcher(bo, BatcherDeps{Sink: h.ev, Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if h.guard, err = jobguard.New([]byte(testSecretKey)); err != nil {
		t.Fatal(err)
	}
	if h.srv, err = NewServer(ServerConfig{AgentToken: testToken},
		ServerDeps{Batcher: b, Tokens: h.st, Guard: h.guard, Logger: log, Now: h.clock.Now, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(GRPCServerOptions(0)...)
	h.srv.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served, batched := make(chan struct{}), make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	go func() { defer close(batched); _ = b.Run(ctx) }()
	if h.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.conn.Close()
		gs.Stop()
		cancel()
		<-served
		<-batched
	})
	h.org = uuid.New()
	h.exec(`INSERT INTO organizations (id, name) VALUES ($1, 'Org')`, h.org)
	return h
}

func (h *harness) exec(sql string, args ...any) {
	h.t.Helper()
	if _, err := h.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

func (h *harness) count(sql string, args ...any) int {
	h.t.Helper()
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// checkSpec is a check row, inserted with SQL as 0001_init.sql defines it.
type checkSpec struct {
	regions      []string
	confirmation int // seconds
	recovery     int // seconds
	reminder     int // minutes, -1 never
	muted        bool
	paused       bool
}

func (h *harness) createCheck(c checkSpec) uuid.UUID {
	h.t.Helper()
	if len(c.regions) == 0 {
		c.regions = []string{"cloud:us-east-1"}
	}
	if c.reminder == 0 {
		c.reminder = -1
	}
	return storetest.Check(h.t, h.st, &storetest.CheckOpts{OrgID: h.org, Name: "Homepage", Muted: c.muted, Paused: c.paused,
		Spec: func(sp *check.Spec) {
			sp.TimeoutMs, sp.TestRegions, sp.Alerts.Webhook = new(5000), c.regions, []string{"wh1"}
			sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds, sp.ReminderAlertIntervalMinutes = c.confirmation, c.recovery, &c.reminder
		}}).ID
}

func (h *harness) state(checkID uuid.UUID) string {
	h.t.Helper()
	var s string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT state FROM checks WHERE id = $1`, checkID).Scan(&s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// outbox returns the check's outbox rows as (event type, payload), oldest first.
func (h *harness) outbox(checkID uuid.UUID) []outboxRow {
	h.t.Helper()
	rows, err := h.st.Pool().Query(context.Background(), `SELECT event_type, payload, incident_id FROM outbox
		WHERE check_id = $1 ORDER BY created_at, id`, checkID)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var payload []byte
		if err := rows.Scan(&r.event, &payload, &r.incidentID); err != nil {
			h.t.Fatal(err)
		}
		if err := json.Unmarshal(payload, &r.payload); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

type outboxRow struct {
	event      string
	incidentID *uuid.UUID
	payload    map[string]any
}

type incident struct {
	id        uuid.UUID
	startedAt time.Time
	endedAt   *time.Time
}

func (h *harness) incidents(checkID uuid.UUID) []incident {
	h.t.Helper()
	rows, err := h.st.Pool().Query(context.Background(), `SELECT id, started_at, ended_at FROM check_incidents
		WHERE check_id = $1 ORDER BY started_at`, checkID)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []incident
	for rows.Next() {
		var i incident
		if err := rows.Scan(&i.id, &i.startedAt, &i.endedAt); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, i)
	}
	return out
}

func (h *harness) stateChanges() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.changes...)
}

// agent is one agent's stream, driven by a real gRPC client.
type agent struct {
	t       testing.TB
	stream  grpc.BidiStreamingClient[vantagev1.AgentMessage, vantagev1.ControlMessage]
	cancel  context.CancelFunc
	session string
	keys    []*vantagev1.RegionKey // what Registered handed the agent
	seq     uint64
	// sign signs a result as if the control plane had sent its job.
	sign func(*vantagev1.CheckResult)
}

// dial opens a stream with the given bearer token ("" for none) without registering.
func (h *harness) dial(token string) (grpc.BidiStreamingClient[vantagev1.AgentMessage, vantagev1.ControlMessage], context.CancelFunc) {
	h.t.Helper()
	return h.dialVia(h.conn, token)
}

// dialVia is dial through conn.
func (h *harness) dialVia(conn *grpc.ClientConn, token string) (grpc.BidiStreamingClient[vantagev1.AgentMessage, vantagev1.ControlMessage], context.CancelFunc) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	stream, err := vantagev1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	h.t.Cleanup(cancel)
	return stream, cancel
}

// connect registers an agent serving regions.
func (h *harness) connect(agentID string, regions ...string) *agent {
	h.t.Helper()
	return h.register(agentID, nil, regions...)
}

// register registers an agent with capabilities serving regions.
func (h *harness) register(agentID string, capabilities []string, regions ...string) *agent {
	h.t.Helper()
	a, err := h.registerWith(testToken, agentID, capabilities, regions...)
	if err != nil {
		h.t.Fatalf("register: %v", err)
	}
	return a
}

// registerWith registers an agent presenting token; an error is the stream's refusal.
func (h *harness) registerWith(token, agentID string, capabilities []string, regions ...string) (*agent, error) {
	h.t.Helper()
	return h.registerVia(h.conn, token, agentID, capabilities, regions...)
}

// registerVia is registerWith through conn.
func (h *harness) registerVia(conn *grpc.ClientConn, token, agentID string, capabilities []string, regions ...string) (*agent, error) {
	h.t.Helper()
	stream, cancel := h.dialVia(conn, token)
	err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{Register: &vantagev1.Register{
		AgentId: agentID, Regions: regions, Version: "test", Capacity: 8, Hostname: "localhost", Capabilities: capabilities}}})
	if err != nil {
		h.t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if m.GetRegistered().GetSessionId() == "" {
		h.t.Fatalf("register: got %v, want Registered", m)
	}
	return &agent{t: h.t, stream: stream, cancel: cancel, session: m.GetRegistered().GetSessionId(),
		keys: m.GetRegistered().GetRegionKeys(), sign: h.sign}, nil
}

// sign gives r the signature of the job it reports on, as the scheduler signed it.
func (h *harness) sign(r *vantagev1.CheckResult) {
	job := jobOf(r)
	h.guard.Sign(job)
	r.JobSignature = job.Signature
}

// Bounds of the jobs the harness signs, as the scheduler makes them for createCheck's
// checks: two attempts of 5 s, to be started within 20 s of the due time.
const (
	testTimeout  = 5 * time.Second
	testAttempts = 2
	testDeadline = testAttempts*testTimeout + 10*time.Second
)

// jobOf is the job r reports on.
func jobOf(r *vantagev1.CheckResult) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{JobId: r.JobId, CheckId: r.CheckId, OrgId: r.OrgId, Region: r.Region,
		ScheduledAtUnixMs: r.ScheduledAtUnixMs, Kind: r.Kind,
		DeadlineUnixMs: r.ScheduledAtUnixMs + testDeadline.Milliseconds(),
		TimeoutMs:      uint32(testTimeout.Milliseconds()), MaxAttempts: testAttempts}
}

// send signs a result that has no signature yet, sends it and returns its seq.
func (a *agent) send(r *vantagev1.CheckResult) uint64 {
	a.t.Helper()
	if len(r.JobSignature) == 0 {
		a.sign(r)
	}
	return a.sendAsIs(r)
}

// sendAsIs sends a result as it is and returns its seq.
func (a *agent) sendAsIs(r *vantagev1.CheckResult) uint64 {
	a.t.Helper()
	a.seq++
	if err := a.stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Result{
		Result: &vantagev1.ResultEnvelope{Seq: a.seq, Result: r}}}); err != nil {
		a.t.Fatal(err)
	}
	return a.seq
}

// acks receives n acks, keyed by seq.
func (a *agent) acks(n int) map[uint64]*vantagev1.ResultAck {
	a.t.Helper()
	out := map[uint64]*vantagev1.ResultAck{}
	for len(out) < n {
		m, err := a.stream.Recv()
		if err != nil {
			a.t.Fatalf("waiting for %d acks, got %d: %v", n, len(out), err)
		}
		ack := m.GetAck()
		if ack == nil {
			a.t.Fatalf("got %v, want an ack", m)
		}
		out[ack.GetSeq()] = ack
	}
	return out
}

// report sends results and requires every one of them to be acked as stored.
func (a *agent) report(results ...*vantagev1.CheckResult) {
	a.t.Helper()
	for _, r := range results {
		a.send(r)
	}
	for seq, ack := range a.acks(len(results)) {
		if !ack.GetStored() {
			a.t.Fatalf("result %d not stored: %s", seq, ack.GetError())
		}
	}
}

// result is a final attempt of job for check from region, due at scheduled.
func (h *harness) result(checkID, job uuid.UUID, region string, passing bool, scheduled time.Time) *vantagev1.CheckResult {
	code := int32(200)
	r := &vantagev1.CheckResult{
		JobId: job.String(), CheckId: checkID.String(), OrgId: h.org.String(), Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME,
		Region: region, AgentId: "agent-" + region, AttemptNumber: 1, IsFinalAttempt: true,
		ScheduledAtUnixMs: scheduled.UnixMilli(), DispatchedAtUnixMs: scheduled.Add(10 * time.Millisecond).UnixMilli(),
		CheckedAtUnixMs: scheduled.Add(200 * time.Millisecond).UnixMilli(), Passing: passing, ResponseTimeMs: 190,
		ResponseCode: &code, BodyAvailability: "NOT_RECORDED",
		Timings: &vantagev1.Timings{TotalMs: 190},
	}
	if !passing {
		src, typ := "TRANSPORT", "TIMEOUT"
		r.FailureSource, r.FailureType, r.ResponseCode = &src, &typ, nil
	}
	return r
}
