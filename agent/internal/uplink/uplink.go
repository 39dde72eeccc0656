// Package uplink is the agent's one long-lived gRPC stream to the control plane. It opens the
// stream with the agent token, registers (id, regions, version, capacity) and waits for
// Registered, then sends results with an increasing sequence number — pipelined and, on protocol
// version 2, many to a message — and tells each ResultAck to the Done of that sequence number. gRPC keepalive detects a dead peer; a lost stream
// is reopened with jittered exponential backoff that starts over after a session that lived long
// enough to count as healthy. Errors are sorted into fatal (the control plane rejects the agent:
// Run returns), cancelled (the agent stops: Run returns nil) and transient (reconnect).
//
// Results waiting for an ack when the stream drops fail at once with ErrSessionLost, so the
// worker hands the job back to JetStream instead of waiting for its AckWait. A connection the
// control plane sends GOAWAY (its max connection age, to spread agents over its replicas) is
// not dropped but handed over: the session stops sending, waits for the acks of what it sent
// and the end of the stream, and the next one opens a new connection at once (watchGoAway).
package uplink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

var (
	// ErrSessionLost means the stream ended before the result was acked. The result may or may not
	// have been stored; the job must be redelivered (results are idempotent on job, region and
	// attempt, so a second copy does no harm).
	ErrSessionLost = errors.New("uplink: stream to the control plane ended before the result was acked")
	// ErrClosed means Run has returned; nothing can be sent any more.
	ErrClosed = errors.New("uplink: closed")
)

// Config holds a Client's settings. Zero values take the documented defaults.
type Config struct {
	Addr  string // control plane gRPC address, host:port (required)
	Token string // agent token, sent as "authorization: Bearer <token>" (required)

	// What the agent registers with.
	AgentID  string
	Hostname string
	Version  string
	Regions  []string
	Capacity int
	// Capabilities are what the agent runs beyond HTTP, DNS and TCP (wire.CapabilityBrowser).
	Capabilities []string

	// RegisterTimeout bounds the wait for Registered after Register. Default 10s.
	RegisterTimeout time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential delay between reconnects.
	// Defaults 500ms and 5s: an agent is back within seconds of a control plane's restart,
	// and the jitter spreads a fleet's reconnects.
	MinBackoff, MaxBackoff time.Duration
	// HealthySession is how long a session must have lived for the backoff to start over.
	// Default 30s.
	HealthySession time.Duration
	// KeepaliveTime is the idle time after which the client pings the control plane, and
	// KeepaliveTimeout how long it waits for the answer before it declares the connection dead.
	// Defaults 30s and 10s. The server's keepalive enforcement policy must permit pings this
	// often (keepalive.EnforcementPolicy{MinTime: <= KeepaliveTime, PermitWithoutStream: true}).
	KeepaliveTime, KeepaliveTimeout time.Duration
	// CloseTimeout bounds how long a stopping agent, or a stream being handed over after
	// GOAWAY, waits for the control plane to end the stream after the agent closed its side.
	// Default 5s.
	CloseTimeout time.Duration
	// MaxUnacked bounds the results sent (or queued) and not yet acked; Submit waits beyond
	// it. Default 4096, the control plane's per-stream bound (ingest.ServerConfig.MaxInFlight).
	MaxUnacked int
	// MaxBatch bounds the results of one ResultBatch message. Default 512.
	MaxBatch int
}

// Deps are what a Client works with.
type Deps struct {
	// Logger receives the client's log (component uplink). Default: discarded.
	Logger *slog.Logger
	// Registerer takes the client's metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// TransportCredentials secures the connection. Default: plaintext (insecure.NewCredentials);
	// pass TLS or mTLS credentials in deployments that cross untrusted networks.
	TransportCredentials credentials.TransportCredentials
	// OnRegistered is told every registration the control plane answers, before results
	// are sent on it: it carries the keys of the agent's regions (probe.Runner.Registered). Optional.
	OnRegistered func(*vantagev1.Registered)
	// OnServerTime is told the control plane's clock whenever a message brings it
	// (Registered, CanaryAck), with the agent's clock at receipt: the canaries measure the
	// agent's clock skew from it. Optional; it must not block.
	OnServerTime func(server, received time.Time)
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RegisterTimeout, 10*time.Second)
	def(&c.MinBackoff, 500*time.Millisecond)
	def(&c.MaxBackoff, 5*time.Second)
	def(&c.HealthySession, 30*time.Second)
	def(&c.KeepaliveTime, 30*time.Second)
	def(&c.KeepaliveTimeout, 10*time.Second)
	def(&c.CloseTimeout, 5*time.Second)
	if c.MaxUnacked <= 0 {
		c.MaxUnacked = 4096
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 512
	}
}

// Client is the agent's uplink. Run keeps the stream up; Send may be called from any number of
// goroutines.
type Client struct {
	cfg          Config
	log          *slog.Logger
	creds        credentials.TransportCredentials
	onRegistered func(*vantagev1.Registered) // nil: nobody to tell
	onServerTime func(server, received time.Time)
	m            *metrics
	seq          atomic.Uint64
	// unacked holds a token per result submitted and not yet acked (or lost).
	unacked chan struct{}

	mu      sync.Mutex
	cur     *session      // the registered session, nil between sessions
	changed chan struct{} // closed (and replaced) whenever cur changes or the client closes
	closed  bool
}

// New returns a client; it connects when Run is called.
func New(cfg Config, deps Deps) (*Client, error) {
	if cfg.Addr == "" {
		return nil, errors.New("uplink: no control plane address")
	}
	if cfg.Token == "" {
		return nil, errors.New("uplink: no agent token")
	}
	cfg.setDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	if deps.TransportCredentials == nil {
		deps.TransportCredentials = insecure.NewCredentials()
	}
	m, err := newMetrics(deps.Registerer)
	if err != nil {
		return nil, err
	}
	return &Client{
		cfg:          cfg,
		log:          deps.Logger.With("component", "uplink"),
		creds:        deps.TransportCredentials,
		onRegistered: deps.OnRegistered,
		onServerTime: deps.OnServerTime,
		m:            m,
		changed:      make(chan struct{}),
		unacked:      make(chan struct{}, cfg.MaxUnacked),
	}, nil
}

// Run keeps a registered stream to the control plane until ctx ends (it then returns nil) or the
// control plane rejects the agent's credentials (it returns that error: retrying cannot help).
func (c *Client) Run(ctx context.Context) error {
	defer c.close()
	conn, err := grpc.NewClient(c.cfg.Addr,
		grpc.WithTransportCredentials(c.creds),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                c.cfg.KeepaliveTime,
			Timeout:             c.cfg.KeepaliveTimeout,
			PermitWithoutStream: true,
		}),
		// gRPC's own reconnect backoff defaults to a 120s ceiling; keep it in step with ours so a
		// restarted control plane is found again promptly.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: grpcbackoff.Config{
				BaseDelay: c.cfg.MinBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: c.cfg.MaxBackoff,
			},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	if err != nil {
		return fmt.Errorf("uplink: dial %s: %w", c.cfg.Addr, err)
	}
	defer conn.Close() //nolint:errcheck // closing the client connection we own

	bo := backoff{min: c.cfg.MinBackoff, max: c.cfg.MaxBackoff}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			c.m.reconnects.Inc()
		}
		start := time.Now()
		registered, err := c.session(ctx, conn)
		if ctx.Err() != nil {
			return nil
		}
		if isFatal(err) {
			return fmt.Errorf("uplink: control plane %s rejected agent %s: %w", c.cfg.Addr, c.cfg.AgentID, err)
		}
		if time.Since(start) >= c.cfg.HealthySession {
			bo.reset()
		}
		if errors.Is(err, errHandedOver) {
			// Not a failure: the control plane asked for a new connection, which goes through
			// the address list or load balancer again. Reconnect at once.
			c.m.handovers.Inc()
			c.log.Info("control plane asked for a new connection (GOAWAY); every result sent was acked, reconnecting",
				"session_lived", time.Since(start).Round(time.Millisecond))
			continue
		}
		delay := bo.next()
		if registered {
			c.log.Warn("stream to the control plane lost; reconnecting", "err", err, "retry_in", delay)
		} else {
			c.log.Warn("cannot register with the control plane", "addr", c.cfg.Addr, "err", err, "retry_in", delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// isFatal reports whether err means the control plane refuses this agent, which reconnecting
// cannot fix.
func isFatal(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return true
	}
	return false
}

// errHandedOver ends a session that closed because its connection went away gracefully (the
// control plane's GOAWAY), after every result sent on it was acked.
var errHandedOver = errors.New("uplink: the control plane asked for a new connection")

// session runs one stream: register, then pump results out and acks in until the stream fails
// or is handed over (watchGoAway). It reports whether registration succeeded, and why the
// stream ended.
func (c *Client) session(ctx context.Context, conn *grpc.ClientConn) (registered bool, err error) {
	// The stream's context is not ctx: once registered, stopping closes the stream gracefully
	// (CloseSend, then the control plane sends what acks remain and ends it), bounded by
	// CloseTimeout. Until then, stopping aborts at once.
	sctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.WithoutCancel(ctx),
		"authorization", "Bearer "+c.cfg.Token))
	defer cancel()
	abort := context.AfterFunc(ctx, cancel)
	defer abort()
	stream, err := vantagev1.NewAgentServiceClient(conn).Connect(sctx)
	if err != nil {
		return false, fmt.Errorf("open stream: %w", err)
	}
	reg := &vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{Register: &vantagev1.Register{
		AgentId:         c.cfg.AgentID,
		Regions:         c.cfg.Regions,
		Version:         c.cfg.Version,
		Capacity:        uint32(c.cfg.Capacity),
		Hostname:        c.cfg.Hostname,
		Capabilities:    append(slices.Clone(c.cfg.Capabilities), wire.StreamCapabilities...),
		ProtocolVersion: wire.StreamProtocol, // for control planes that predate named capabilities
	}}}
	if err := stream.Send(reg); err != nil {
		if errors.Is(err, io.EOF) { // the real reason comes with Recv
			_, err = stream.Recv()
		}
		return false, fmt.Errorf("register: %w", err)
	}
	timer := time.AfterFunc(c.cfg.RegisterTimeout, cancel)
	first, err := stream.Recv()
	if !timer.Stop() && ctx.Err() == nil {
		return false, fmt.Errorf("register: no answer within %s", c.cfg.RegisterTimeout)
	}
	if err != nil {
		return false, fmt.Errorf("register: %w", streamErr(err))
	}
	regd := first.GetRegistered()
	if regd == nil {
		return false, fmt.Errorf("register: control plane answered %T instead of Registered", first.GetMsg())
	}

	if c.onRegistered != nil {
		c.onRegistered(regd)
	}
	c.serverTime(regd.GetServerTimeUnixMs())
	s := newSession(regd.GetSessionId(), agreedCapabilities(regd), c.cfg.MaxBatch, c.m.batch)
	if abort() {
		graceful := context.AfterFunc(ctx, func() {
			time.AfterFunc(c.cfg.CloseTimeout, cancel)
			s.close()
		})
		defer graceful()
	}
	c.setSession(s)
	c.m.connected.Set(1)
	c.log.Info("registered with the control plane", "addr", c.cfg.Addr, "session_id", s.id,
		"agent_id", c.cfg.AgentID, "regions", c.cfg.Regions, "capabilities", s.caps)
	defer func() {
		c.clearSession(s)
		c.m.connected.Set(0)
	}()

	var handingOver atomic.Bool
	go func() {
		if watchGoAway(sctx, conn) {
			handingOver.Store(true)
			time.AfterFunc(c.cfg.CloseTimeout, cancel) // the control plane has that long to ack what it took
			s.close()
		}
	}()

	sendDone := make(chan error, 1)
	go func() {
		err := s.sendLoop(sctx, stream)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				cancel() // a failed Send aborts the stream; make Recv return too
			}
			s.kill() // senders waiting for acks fail fast, before Recv notices
		}
		sendDone <- err
	}()
	for {
		m, rerr := stream.Recv()
		if rerr != nil {
			err = streamErr(rerr)
			if errors.Is(rerr, io.EOF) && handingOver.Load() {
				err = errHandedOver
			}
			break
		}
		if ack := m.GetAck(); ack != nil {
			s.deliver(ack)
			continue
		}
		if acks := m.GetAcks(); acks != nil {
			for _, ack := range acks.GetAcks() {
				s.deliver(ack)
			}
			continue
		}
		if ca := m.GetCanaryAck(); ca != nil {
			c.serverTime(ca.GetServerTimeUnixMs())
			continue
		}
		c.log.Debug("ignoring unexpected control message", "type", fmt.Sprintf("%T", m.GetMsg()))
	}
	s.kill()
	cancel()
	if serr := <-sendDone; serr != nil && !errors.Is(serr, io.EOF) && ctx.Err() == nil {
		err = fmt.Errorf("send: %w", serr)
	}
	return true, err
}

// watchGoAway waits until the connection the stream runs on stops being the one new streams
// would take, and reports true then (false when ctx ends first). That happens when the control
// plane sends GOAWAY — it does after VANTAGE_GRPC_MAX_CONNECTION_AGE, so that agents spread
// again over the replicas behind the address list or load balancer — and when the connection
// fails (then the stream fails too). The stream itself goes on over the old connection until
// it ends, so the session hands over: it stops sending, the control plane acks what it took and
// ends the stream, and the next session opens a new connection, from the first address again.
func watchGoAway(ctx context.Context, conn *grpc.ClientConn) bool {
	return conn.WaitForStateChange(ctx, connectivity.Ready)
}

// streamErr names a clean end of stream, which gRPC reports as io.EOF.
func streamErr(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("control plane closed the stream")
	}
	return err
}

// Done is told how one submitted result ended: stored (the control plane acked it as stored),
// not stored (acked with stored=false), or err when no ack will come (ErrSessionLost: the
// stream ended first). It is called exactly once, from the uplink's own goroutines: it must not
// block.
type Done = func(stored bool, err error)

// Submit queues one result for the control plane and returns at once; done is told its ack
// later. Results are sent pipelined, without waiting for earlier acks, and batched (protocol
// version 2): whatever queued while the previous message was being written goes out in the
// next one. Submit waits while no session is registered or MaxUnacked results already wait
// for their ack (bounded by ctx); an error (ctx's, or ErrClosed after Run returned) means the
// result was not queued and done will not be called.
//
// A not-run result (CheckResult.not_run_reason) is sent only to a control plane that speaks
// protocol version 2; an older one would store it as a failed probe, so for it done is told
// stored at once and the result goes nowhere, as before not-run results existed. A control
// plane of version 2 does not know the reason SHED (wire.NotRunShed): it gets the run as
// EXPIRED, the closest reason it knows (a late job not run).
func (c *Client) Submit(ctx context.Context, r *vantagev1.CheckResult, done Done) error {
	select {
	case c.unacked <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		s, err := c.waitSession(ctx)
		if err != nil {
			<-c.unacked
			return err
		}
		if r.GetNotRunReason() != "" && !s.caps.Has(wire.CapabilityBatchedResults) {
			<-c.unacked
			c.m.acks.WithLabelValues("not_run_unsupported").Inc()
			done(true, nil)
			return nil
		}
		if r.GetNotRunReason() == wire.NotRunShed && !s.caps.Has(wire.CapabilityShedReason) {
			r.NotRunReason = wire.NotRunExpired
		}
		seq := c.seq.Add(1)
		p := &pending{done: done, c: c}
		if !s.expect(seq, p) {
			continue // the session died meanwhile: wait for the next one
		}
		err = s.enqueue(ctx, &vantagev1.ResultEnvelope{Seq: seq, Result: r})
		switch {
		case err == nil:
			return nil
		case !s.forget(seq):
			return nil // told already: the session died meanwhile
		case errors.Is(err, errClosing):
			continue // never sent: the next session takes it
		default:
			<-c.unacked
			return err
		}
	}
}

// pending is a result waiting for its ack.
type pending struct {
	done Done
	c    *Client
}

// finish tells the result's outcome and frees its place among the unacked.
func (p *pending) finish(ack *vantagev1.ResultAck, err error) {
	<-p.c.unacked
	switch {
	case err != nil:
		p.c.m.acks.WithLabelValues("lost").Inc()
		p.done(false, err)
	case !ack.GetStored():
		p.c.m.acks.WithLabelValues("not_stored").Inc()
		p.c.log.Warn("control plane did not store a result", "seq", ack.GetSeq(), "reason", ack.GetError())
		p.done(false, nil)
	default:
		p.c.m.acks.WithLabelValues("stored").Inc()
		p.done(true, nil)
	}
}

// agreedCapabilities are the capabilities the control plane answered, or, from one that
// predates named capabilities, those of the protocol version it answered.
func agreedCapabilities(r *vantagev1.Registered) wire.Capabilities {
	if len(r.GetCapabilities()) > 0 {
		return wire.Agreed(r.GetCapabilities())
	}
	return wire.ProtocolCapabilities(max(r.GetProtocolVersion(), 1))
}

// serverTime tells OnServerTime the control plane's clock, when the message carried it.
func (c *Client) serverTime(unixMs int64) {
	if c.onServerTime != nil && unixMs > 0 {
		c.onServerTime(time.UnixMilli(unixMs), time.Now())
	}
}

// SendCanary sends one canary round on the registered session, when the control plane
// takes canaries (capability "canaries"). It reports whether the round was queued: not while
// no session is up, nor to a control plane without the capability, nor while the previous
// round is still waiting to go out.
func (c *Client) SendCanary(r *vantagev1.CanaryReport) bool {
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	if s == nil || !s.usable() || !s.caps.Has(wire.CapabilityCanaries) {
		return false
	}
	return s.control(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Canaries{Canaries: r}})
}

// Ready reports whether a registered session is up.
func (c *Client) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil && c.cur.alive()
}

// WaitReady blocks until a registered session is up, ctx ends, or the client closes.
func (c *Client) WaitReady(ctx context.Context) error {
	_, err := c.waitSession(ctx)
	return err
}

func (c *Client) waitSession(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		s, changed, closed := c.cur, c.changed, c.closed
		c.mu.Unlock()
		if s != nil && s.usable() { // a dead session is cleared (and changed closed) shortly; a closing one is replaced
			return s, nil
		}
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *Client) setSession(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = s
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) clearSession(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == s {
		c.cur = nil
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

func (c *Client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.cur = nil
	close(c.changed)
	c.changed = make(chan struct{})
}
