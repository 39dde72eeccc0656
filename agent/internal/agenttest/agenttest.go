// Package agenttest holds the agent's test fixtures: a real in-process NATS server with JetStream
// and the job stream created the way the control plane creates it, and the control-plane side of
// the gRPC agent stream (a real grpc.Server) that records results and acks them. Only tests
// import it, so nats-server never reaches the agent binary.
package agenttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// StartNATS starts a NATS server with JetStream on a random port, storing in a test directory,
// and shuts it down when the test ends.
func StartNATS(t testing.TB) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// Connect connects to s and returns the connection (closed when the test ends) and its
// JetStream context.
func Connect(t testing.TB, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatalf("nats connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// CreateJobStream creates VANTAGE_JOBS as the control plane does (controlplane/internal/
// jobqueue.StreamConfig, which the agent module cannot import): work-queue retention over
// vantage.jobs.>, stale jobs dropped after wire.JobMaxAge. Consumers are left to the agents.
func CreateJobStream(t testing.TB, js jetstream.JetStream) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        wire.JobStream,
		Description: "Vantage check jobs, one subject per region",
		Subjects:    []string{wire.JobSubjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		MaxAge:      wire.JobMaxAge,
		Duplicates:  2 * time.Minute,
		Storage:     jetstream.FileStorage,
		Discard:     jetstream.DiscardOld,
	})
	if err != nil {
		t.Fatalf("create job stream: %v", err)
	}
	return st
}

// PublishJob publishes job on its subject (the region's, or its browser subject).
func PublishJob(t testing.TB, js jetstream.JetStream, job *vantagev1.CheckJob) {
	t.Helper()
	b, err := wire.EncodeJob(job)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, wire.SubjectOf(job), b, jetstream.WithMsgID(wire.JobMsgID(job))); err != nil {
		t.Fatalf("publish job %s: %v", job.GetJobId(), err)
	}
}

// StreamMsgs is how many jobs the stream still holds (acked jobs leave a work queue).
func StreamMsgs(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	st, err := js.Stream(ctx, wire.JobStream)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Key identifies a result the way ingest de-duplicates it.
type Key struct {
	JobID, Region string
	Attempt       uint32
}

// KeyOf is r's Key.
func KeyOf(r *vantagev1.CheckResult) Key {
	return Key{JobID: r.GetJobId(), Region: r.GetRegion(), Attempt: r.GetAttemptNumber()}
}

// ControlPlane is the control plane's end of the agent stream: it checks the bearer token,
// answers Register with Registered, and acks each result as OnResult decides (stored by default),
// storing each Key once like ingest does.
type ControlPlane struct {
	Token string
	Addr  string

	mu            sync.Mutex
	protocol      uint32
	ackDelay      time.Duration
	onResult      func(ctx context.Context, r *vantagev1.CheckResult) (stored bool, reason string)
	received      []*vantagev1.CheckResult
	receivedByKey map[Key]int
	stored        map[Key]*vantagev1.CheckResult
	registers     []*vantagev1.Register
	ends          []error // why each registered stream ended, as Recv reported it
	srv           *grpc.Server
	opts          []grpc.ServerOption // beyond the keepalive policy
	vantagev1.UnimplementedAgentServiceServer
}

var _ vantagev1.AgentServiceServer = (*ControlPlane)(nil)

// StartControlPlane serves the agent stream on 127.0.0.1 at a random port until the test ends,
// with the gRPC server options opts added (keepalive.ServerParameters, say).
func StartControlPlane(t testing.TB, token string, opts ...grpc.ServerOption) *ControlPlane {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cp := ServeControlPlane(lis, token, opts...)
	t.Cleanup(cp.Stop)
	return cp
}

// ServeControlPlane serves the agent stream on lis until Stop, for a process of its own (the
// pipeline benchmark's), where there is no test to clean up after.
func ServeControlPlane(lis net.Listener, token string, opts ...grpc.ServerOption) *ControlPlane {
	cp := &ControlPlane{Token: token, protocol: wire.StreamProtocol, receivedByKey: map[Key]int{}, stored: map[Key]*vantagev1.CheckResult{}, opts: opts}
	cp.Addr = lis.Addr().String()
	cp.serve(lis)
	return cp
}

func (cp *ControlPlane) serve(lis net.Listener) {
	srv := grpc.NewServer(append([]grpc.ServerOption{grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
		MinTime: 5 * time.Second, PermitWithoutStream: true,
	})}, cp.opts...)...)
	vantagev1.RegisterAgentServiceServer(srv, cp)
	cp.mu.Lock()
	cp.srv = srv
	cp.mu.Unlock()
	go func() { _ = srv.Serve(lis) }()
}

// Stop closes the listener and every stream at once, like a crashed control plane.
func (cp *ControlPlane) Stop() {
	cp.mu.Lock()
	srv := cp.srv
	cp.srv = nil
	cp.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
}

// Restart stops the server and serves again on the same address.
func (cp *ControlPlane) Restart(t testing.TB) {
	t.Helper()
	cp.Stop()
	var lis net.Listener
	testwait.Eventually(t, 5*time.Second, func() error {
		var err error
		lis, err = net.Listen("tcp", cp.Addr)
		return err
	})
	cp.serve(lis)
}

// SetProtocol sets the highest stream protocol version it speaks to streams opened from now
// on (default wire.StreamProtocol): 1 is a control plane from before batched results.
func (cp *ControlPlane) SetProtocol(v uint32) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.protocol = v
}

// SetAckDelay makes every ack leave d after its results arrived, without holding up the
// results that follow, as ingest acks once a batch has been written (its flush interval and
// transaction).
func (cp *ControlPlane) SetAckDelay(d time.Duration) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.ackDelay = d
}

// SetOnResult sets how results are acked; f may block (the agent then waits for its ack).
func (cp *ControlPlane) SetOnResult(f func(ctx context.Context, r *vantagev1.CheckResult) (stored bool, reason string)) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.onResult = f
}

// Received is every result that arrived, in order, duplicates included.
func (cp *ControlPlane) Received() []*vantagev1.CheckResult {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]*vantagev1.CheckResult(nil), cp.received...)
}

// ReceivedCount is how many times a result with key k arrived.
func (cp *ControlPlane) ReceivedCount(k Key) int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.receivedByKey[k]
}

// Stored is the stored result of key k, or nil.
func (cp *ControlPlane) Stored(k Key) *vantagev1.CheckResult {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.stored[k]
}

// StoredCount is how many distinct keys are stored.
func (cp *ControlPlane) StoredCount() int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return len(cp.stored)
}

// Registers is every Register received, in order.
func (cp *ControlPlane) Registers() []*vantagev1.Register {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]*vantagev1.Register(nil), cp.registers...)
}

// Ends is why each registered stream ended on the server's side: io.EOF when the agent closed
// its side gracefully.
func (cp *ControlPlane) Ends() []error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]error(nil), cp.ends...)
}

// Connect implements the agent stream.
func (cp *ControlPlane) Connect(stream vantagev1.AgentService_ConnectServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+cp.Token {
		return status.Error(codes.Unauthenticated, "invalid agent token")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegister()
	if reg == nil {
		return status.Error(codes.InvalidArgument, "first message must be Register")
	}
	cp.mu.Lock()
	cp.registers = append(cp.registers, reg)
	n := len(cp.registers)
	protocol := min(max(reg.GetProtocolVersion(), 1), cp.protocol)
	delay := cp.ackDelay
	cp.mu.Unlock()
	if err := stream.Send(&vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Registered{
		Registered: &vantagev1.Registered{SessionId: fmt.Sprintf("session-%d", n), ProtocolVersion: protocol},
	}}); err != nil {
		return err
	}
	var sendMu sync.Mutex // gRPC allows one sender at a time; delayed acks send from timers
	var delayed sync.WaitGroup
	for {
		m, err := stream.Recv()
		if err != nil {
			cp.mu.Lock()
			cp.ends = append(cp.ends, err)
			cp.mu.Unlock()
			if errors.Is(err, io.EOF) { // the agent closed its side: end the stream cleanly, after the acks, as ingest does
				delayed.Wait()
				return nil
			}
			return err
		}
		envs := m.GetResults().GetResults()
		if env := m.GetResult(); env != nil {
			envs = []*vantagev1.ResultEnvelope{env}
		} else if len(envs) == 0 || protocol < 2 {
			return status.Error(codes.InvalidArgument, "expected results")
		}
		acks := make([]*vantagev1.ResultAck, 0, len(envs))
		for _, env := range envs {
			acks = append(acks, cp.take(stream.Context(), env))
		}
		msg := &vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Acks{Acks: &vantagev1.ResultAckBatch{Acks: acks}}}
		if protocol < 2 {
			msg = &vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Ack{Ack: acks[0]}}
		}
		if delay > 0 {
			delayed.Add(1)
			time.AfterFunc(delay, func() {
				defer delayed.Done()
				sendMu.Lock()
				defer sendMu.Unlock()
				_ = stream.Send(msg) // fails only once the stream is gone, and the agent with it
			})
			continue
		}
		sendMu.Lock()
		err = stream.Send(msg)
		sendMu.Unlock()
		if err != nil {
			return err
		}
	}
}

// take records one result and decides its ack.
func (cp *ControlPlane) take(ctx context.Context, env *vantagev1.ResultEnvelope) *vantagev1.ResultAck {
	r := env.GetResult()
	cp.mu.Lock()
	f := cp.onResult
	cp.mu.Unlock()
	stored, reason := true, ""
	if f != nil {
		stored, reason = f(ctx, r)
	}
	cp.mu.Lock()
	cp.received = append(cp.received, r)
	cp.receivedByKey[KeyOf(r)]++
	if stored && cp.stored[KeyOf(r)] == nil {
		cp.stored[KeyOf(r)] = r
	}
	cp.mu.Unlock()
	return &vantagev1.ResultAck{Seq: env.GetSeq(), Stored: stored, Error: reason}
}
