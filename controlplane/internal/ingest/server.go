// Package ingest is the control plane's side of the agents' gRPC stream (AgentService.Connect):
// it authenticates agents, keeps the registry of live agents by region, gathers results from
// every stream into batches that are stored and judged in one transaction each (Batcher, with
// the evaluator as its Sink), acks each result once its batch has committed, and maintains the
// time partitions of the results (Maintainer).
//
// The stream protocol, per agent connection:
//
//	agent                                   control plane
//	  metadata authorization: Bearer <agent token>
//	  Register{agent_id, regions, ...}  ─▶    Unauthenticated on a missing, wrong or revoked
//	                                          token, InvalidArgument unless Register comes
//	                                          first, PermissionDenied for a region the token
//	                                          does not allow (auth.go)
//	                                    ◀─    Registered{session_id, region_keys}
//	  ResultEnvelope{seq, result}       ─▶    queued for the next batch, when it carries the
//	                                          signature of a job of its region (auth.go) and
//	                                          lies within the job's signed bounds (convert.go)
//	                                    ◀─    ResultAck{seq, stored: true} once committed
//	                                          (also for a duplicate, a result whose check was
//	                                          deleted, or one that came too late and was
//	                                          recorded as a run skipped LATE: there is
//	                                          nothing left to redo)
//	                                    ◀─    ResultAck{seq, stored: false, error} when the
//	                                          result is invalid, unsigned or outside its job's
//	                                          bounds, or its batch failed; the agent does not
//	                                          ack the job, so JetStream redelivers it — until
//	                                          the job's deadline, after which the agent
//	                                          reports it EXPIRED, which is stored
//
// That is protocol version 1. On version 2 (agreed in Register/Registered: the lower of both
// sides' versions) results come many to a message (ResultBatch) and acks likewise
// (ResultAckBatch: every ack ready when the stream's writer is free goes in one message), and
// a result may report a run the agent did not run (not_run_reason): it goes through the
// batcher like any result, is recorded as a skipped run (skipped_runs, once however often it
// is delivered) and counted in vantage_runs_skipped_total, is acked once committed, and is
// never judged.
//
// Acks may come out of order (batches commit concurrently); the agent matches them by seq.
// When the agent closes its side, the stream ends after the last pending ack is sent; an agent
// does that when its connection gets GOAWAY (GRPCServerOptions: the max connection age that
// spreads agents over the replicas) and reconnects. When the replica shuts down (Drain), it
// stops reading results and ends each stream the same way, with Unavailable, and the agent
// reconnects.
package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// ServerConfig holds the Server's settings. Zero values take the documented defaults.
type ServerConfig struct {
	// AgentToken is the shared token every agent may present, for any region
	// (VANTAGE_AGENT_TOKEN, for local development). Default "": none. One of AgentToken and
	// ServerDeps.Tokens is required.
	AgentToken string
	// MaxInFlight is how many results of one stream may wait for their ack; the stream is not
	// read further until acks go out. Default 4096.
	MaxInFlight int
	// CanaryURL is the control plane's public endpoint, which agents probe among their
	// canaries (Registered.canary_url). Default "": none.
	CanaryURL string
}

// Canaries takes the agents' canary rounds (probehealth.Monitor); it judges the regions'
// health at once.
type Canaries interface {
	Canary(ctx context.Context, r store.CanaryReport) error
}

// ServerDeps are what the Server works with.
type ServerDeps struct {
	Batcher *Batcher // required: takes the results
	// Guard verifies that results belong to a job of their region, and hands agents their
	// regions' keys. Required.
	Guard JobGuard
	// Tokens resolves agent tokens bound to regions. Nil: only ServerConfig.AgentToken is
	// accepted.
	Tokens AgentTokens
	// Logger receives the server's log (component ingest). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Registerer takes the server's metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// Canaries takes the agents' canary rounds. Nil: they are acked and dropped.
	Canaries Canaries
}

// Server implements vantagev1.AgentServiceServer.
type Server struct {
	vantagev1.UnimplementedAgentServiceServer

	log        *slog.Logger
	now        func() time.Time
	sharedHash []byte // of the shared token; nil: none
	tokens     AgentTokens
	guard      JobGuard
	canaries   Canaries
	revs       *revocations
	batcher    *Batcher
	registry   *Registry
	cfg        ServerConfig

	streams  prometheus.Gauge
	rejected *prometheus.CounterVec

	draining  chan struct{} // closed by Drain
	drainOnce sync.Once
}

var _ vantagev1.AgentServiceServer = (*Server)(nil)

// NewServer returns the agents' gRPC service, feeding deps.Batcher.
func NewServer(cfg ServerConfig, deps ServerDeps) (*Server, error) {
	if cfg.AgentToken == "" && deps.Tokens == nil {
		return nil, errors.New("ingest: agents need a credential: agent tokens, or the shared VANTAGE_AGENT_TOKEN")
	}
	if deps.Guard == nil {
		return nil, errors.New("ingest: a job guard is required")
	}
	if deps.Batcher == nil {
		return nil, errors.New("ingest: a batcher is required")
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 4096
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	s := &Server{
		log:      deps.Logger.With("component", "ingest"),
		now:      deps.Now,
		tokens:   deps.Tokens,
		guard:    deps.Guard,
		canaries: deps.Canaries,
		revs:     newRevocations(),
		batcher:  deps.Batcher,
		registry: newRegistry(),
		cfg:      cfg,
		draining: make(chan struct{}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "vantage_ingest_streams",
			Help: "Open agent streams on this replica."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_ingest_rejected_total",
			Help: "Streams and results turned away, by reason (unauthenticated, forbidden_region, protocol, invalid_result, unsigned_result, out_of_bounds)."}, []string{"reason"}),
	}
	if cfg.AgentToken != "" {
		h := sha256.Sum256([]byte(cfg.AgentToken))
		s.sharedHash = h[:]
	}
	for _, c := range []prometheus.Collector{s.streams, s.rejected, s.registry.gauge, s.registry.browsers} {
		if err := deps.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("ingest metrics: %w", err)
		}
	}
	return s, nil
}

// Register adds the service to a gRPC server.
func (s *Server) Register(g grpc.ServiceRegistrar) { vantagev1.RegisterAgentServiceServer(g, s) }

// GRPCServerOptions are the server options the agents' stream expects: keepalive pings from
// agents every 10s or more are welcome (also without active calls), and the server pings idle
// connections itself, so dead agents leave the registry within a minute.
//
// A connection older than maxConnectionAge (VANTAGE_GRPC_MAX_CONNECTION_AGE; 0: never; gRPC
// adds ±10 % jitter) is sent GOAWAY. An agent's stream lives as long as the agent, so without
// this the agents that moved to another replica while one was down would stay there: on GOAWAY
// the agent (uplink) stops sending, this server acks what it took and ends the stream (the
// agent closed its side, see serve), and the agent's next stream takes a new connection
// through its address list or load balancer. An agent that does not hand over is cut off after
// maxConnectionAgeGrace, like a dropped connection: its unacked jobs are redelivered.
func GRPCServerOptions(maxConnectionAge time.Duration) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 20 * time.Second,
			MaxConnectionAge: maxConnectionAge, MaxConnectionAgeGrace: maxConnectionAgeGrace}),
	}
}

// maxConnectionAgeGrace bounds a handover after GOAWAY: acking the results in flight takes a
// batch's commit, well below it.
const maxConnectionAgeGrace = 30 * time.Second

// Drain ends every agent stream of this replica and refuses new ones, for shutdown: each
// stream stops reading results, sends the acks of the results it took once their batch has
// committed (the batcher must still run), and ends with Unavailable, so that its agent
// reconnects — to another replica, or to this one once it is back — and hands back the jobs
// whose results were not acked. Call it before grpc.Server.GracefulStop, which otherwise waits
// for the agents' long-lived streams, which never end on their own, until it is forced.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// errDraining ends streams while the replica shuts down.
var errDraining = status.Error(codes.Unavailable, "the control plane is shutting down; reconnect")

// Registry returns the live-agent registry.
func (s *Server) Registry() *Registry { return s.registry }

// LiveRegions returns how many agents connected to this replica serve each region.
func (s *Server) LiveRegions() map[string]int { return s.registry.LiveRegions() }

// Connect serves one agent stream (see the package doc).
func (s *Server) Connect(stream grpc.BidiStreamingServer[vantagev1.AgentMessage, vantagev1.ControlMessage]) error {
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	cred, err := s.authenticate(ctx)
	if err != nil {
		s.rejected.WithLabelValues("unauthenticated").Inc()
		return err
	}
	select {
	case <-s.draining:
		return errDraining
	default:
	}
	first, err := stream.Recv()
	if err != nil {
		return streamErr(err)
	}
	agent, err := s.registration(ctx, first)
	if err != nil {
		s.rejected.WithLabelValues("protocol").Inc()
		return err
	}
	if err := admit(cred, agent.Regions); err != nil {
		s.rejected.WithLabelValues("forbidden_region").Inc()
		return err
	}
	agent.TokenID, agent.TokenName = cred.tokenID, cred.name
	untrack, err := s.revs.track(cred, agent.SessionID, cancel)
	if err != nil {
		s.rejected.WithLabelValues("unauthenticated").Inc()
		return err
	}
	defer untrack()
	registered, err := s.registered(agent)
	if err != nil {
		return err
	}
	if err := stream.Send(&vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Registered{
		Registered: registered}}); err != nil {
		return err
	}
	s.registry.add(agent)
	defer s.registry.remove(agent.SessionID)
	s.streams.Inc()
	defer s.streams.Dec()
	log := s.log.With("agent_id", agent.AgentID, "session_id", agent.SessionID)
	log.Info("agent connected", "regions", agent.Regions, "version", agent.Version, "capacity", agent.Capacity,
		"capabilities", agent.Capabilities, "peer", agent.Peer)
	err = s.serve(ctx, stream, agent)
	if cause := context.Cause(ctx); errors.Is(cause, errRevoked) {
		err = cause
	}
	log.Info("agent disconnected", "code", status.Code(err).String())
	return err
}

// registration validates the first message of a stream.
func (s *Server) registration(ctx context.Context, m *vantagev1.AgentMessage) (Agent, error) {
	reg := m.GetRegister()
	if reg == nil {
		return Agent{}, status.Error(codes.InvalidArgument, "the first message must be Register")
	}
	if reg.GetAgentId() == "" {
		return Agent{}, status.Error(codes.InvalidArgument, "register: agent_id is required")
	}
	if len(reg.GetRegions()) == 0 {
		return Agent{}, status.Error(codes.InvalidArgument, "register: at least one region is required")
	}
	regions := slices.Clone(reg.GetRegions())
	slices.Sort(regions)
	regions = slices.Compact(regions)
	for _, r := range regions {
		if !validRegion(r) {
			return Agent{}, status.Errorf(codes.InvalidArgument, "register: region %q is not of the form cloud:<name>", r)
		}
	}
	caps := wire.Agreed(wire.PeerCapabilities(reg.GetCapabilities(), reg.GetProtocolVersion()))
	a := Agent{SessionID: uuid.NewString(), AgentID: reg.GetAgentId(), Regions: regions, Version: reg.GetVersion(),
		Capacity: reg.GetCapacity(), Hostname: reg.GetHostname(), Capabilities: slices.Clone(reg.GetCapabilities()),
		Caps: caps, Protocol: wire.ProtocolOf(caps), ConnectedAt: s.now(), Stats: &AgentStats{}, Health: &AgentHealth{}}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		a.Peer = p.Addr.String()
	}
	return a, nil
}

// serve reads results until the agent closes its side, the stream breaks or the replica drains.
// A single sender goroutine writes the acks (gRPC streams allow one concurrent sender) and a
// receiver goroutine reads, so that a drain need not wait for the agent's next message; slots
// bounds the results waiting for an ack.
func (s *Server) serve(ctx context.Context, stream grpc.BidiStreamingServer[vantagev1.AgentMessage, vantagev1.ControlMessage], agent Agent) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, s.cfg.MaxInFlight)
	acks := &ackQueue{ch: make(chan *vantagev1.ResultAck, s.cfg.MaxInFlight)}
	control := make(chan *vantagev1.ControlMessage, 1) // other messages than acks (CanaryAck)
	batched := agent.Caps.Has(wire.CapabilityBatchedResults)
	sendErr := make(chan error, 1)
	var sender sync.WaitGroup
	sender.Add(1)
	go func() {
		defer sender.Done()
		batch := make([]*vantagev1.ResultAck, 0, maxAckBatch)
		for {
			select {
			case ack := <-acks.ch:
				batch = append(batch[:0], ack)
				if batched { // every ack ready now goes in one message
				more:
					for len(batch) < maxAckBatch {
						select {
						case ack := <-acks.ch:
							batch = append(batch, ack)
						default:
							break more
						}
					}
				}
				if err := sendAcks(stream, batched, batch); err != nil {
					sendErr <- err
					cancel()
					return
				}
				for range batch {
					<-slots
				}
			case m := <-control:
				if err := stream.Send(m); err != nil {
					sendErr <- err
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel()
		sender.Wait()
		acks.close()
	}()

	// The receiver ends when Recv fails, at the latest once this handler has returned (gRPC
	// then cancels the stream).
	type received struct {
		m   *vantagev1.AgentMessage
		err error
	}
	msgs := make(chan received)
	go func() {
		for {
			m, err := stream.Recv()
			select {
			case msgs <- received{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// acked waits until every result taken has been acked.
	acked := func() error {
		for range cap(slots) {
			select {
			case slots <- struct{}{}:
			case err := <-sendErr:
				return err
			case <-ctx.Done():
				return streamErr(ctx.Err())
			}
		}
		return nil
	}
	stopped := func() error { // the stream broke or the sender failed
		select {
		case err := <-sendErr:
			return err
		default:
			return streamErr(ctx.Err())
		}
	}

	for {
		select {
		case <-s.draining: // checked first: take no result once draining
			if err := acked(); err != nil {
				return err
			}
			return errDraining
		default:
		}
		var r received
		select {
		case r = <-msgs:
		case <-s.draining:
			continue
		case <-ctx.Done():
			return stopped()
		}
		if errors.Is(r.err, io.EOF) {
			// The agent is done sending: wait until every pending ack has gone out.
			return acked()
		}
		if r.err != nil {
			return streamErr(r.err)
		}
		if c := r.m.GetCanaries(); c != nil && agent.Caps.Has(wire.CapabilityCanaries) {
			s.canary(ctx, agent, c, control)
			continue
		}
		envs := r.m.GetResults().GetResults()
		if env := r.m.GetResult(); env != nil {
			envs = []*vantagev1.ResultEnvelope{env}
		} else if !batched || len(envs) == 0 {
			s.rejected.WithLabelValues("protocol").Inc()
			return status.Error(codes.InvalidArgument, "only results may follow Register")
		}
		for _, env := range envs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return stopped()
			}
			if err := s.take(ctx, agent, env, acks); err != nil {
				return stopped()
			}
		}
	}
}

// take checks one result (accept) and hands it to the batcher, or acks it at once when it is
// refused. An error means the stream's context ended.
func (s *Server) take(ctx context.Context, agent Agent, env *vantagev1.ResultEnvelope, acks *ackQueue) error {
	seq := env.GetSeq()
	res := env.GetResult()
	row, reason, err := accept(res, agent, s.guard, s.now())
	if err != nil {
		s.rejected.WithLabelValues(reason).Inc()
		acks.push(&vantagev1.ResultAck{Seq: seq, Stored: false, Error: err.Error()})
		return nil
	}
	agent.Stats.observe(res)
	if why := agent.Health.Unhealthy(); why != "" {
		excludeUnhealthyAgent(&row, why)
	}
	// A run the agent did not run, or a result that came too late, is stored as a skipped
	// run, counted once stored, never judged.
	done := func(err error) {
		ack := &vantagev1.ResultAck{Seq: seq, Stored: err == nil}
		if err != nil {
			ack.Error = err.Error()
		}
		acks.push(ack)
	}
	if err := s.batcher.Submit(ctx, row, done); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		acks.push(&vantagev1.ResultAck{Seq: seq, Stored: false, Error: err.Error()})
	}
	return nil
}

// knownNotRunReason reports whether a stream with capabilities caps may report a run not
// run for reason r: not-run results came with batched results, SHED with shed_reason.
func knownNotRunReason(r string, caps wire.Capabilities) bool {
	switch r {
	case wire.NotRunExpired, wire.NotRunShutdown:
		return caps.Has(wire.CapabilityBatchedResults)
	case wire.NotRunShed:
		return caps.Has(wire.CapabilityShedReason)
	}
	return false
}

// maxAckBatch bounds the acks of one ResultAckBatch.
const maxAckBatch = 1024

// sendAcks writes acks as the stream's capabilities want them: one message with batched
// results, one message each without.
func sendAcks(stream grpc.BidiStreamingServer[vantagev1.AgentMessage, vantagev1.ControlMessage], batched bool, acks []*vantagev1.ResultAck) error {
	if batched {
		return stream.Send(&vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Acks{
			Acks: &vantagev1.ResultAckBatch{Acks: acks}}})
	}
	for _, ack := range acks {
		if err := stream.Send(&vantagev1.ControlMessage{Msg: &vantagev1.ControlMessage_Ack{Ack: ack}}); err != nil {
			return err
		}
	}
	return nil
}

// ackQueue carries acks to the sender. Its capacity equals the stream's in-flight bound, so a
// push never blocks; pushes after the stream ended are dropped (the agent is gone, and an
// unacked job is redelivered anyway).
type ackQueue struct {
	mu     sync.Mutex
	closed bool
	ch     chan *vantagev1.ResultAck
}

func (q *ackQueue) push(a *vantagev1.ResultAck) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.ch <- a
	}
}

func (q *ackQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

// streamErr turns a context error into the matching gRPC status; other errors pass through.
func streamErr(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "stream canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "stream deadline exceeded")
	}
	return err
}
