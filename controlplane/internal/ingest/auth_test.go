package ingest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// agentToken creates an agent token for regions and returns its id and secret.
func (h *harness) agentToken(regions ...string) (uuid.UUID, string) {
	h.t.Helper()
	secret, hash := auth.NewAgentSecret()
	tok, err := h.st.CreateAgentToken(context.Background(), "agents of "+regions[0], regions, hash)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok.ID, secret
}

// listenRevocations runs the API's revocation feed for srv, as serve wires it, until the test
// ends, and returns once it listens.
func listenRevocations(t *testing.T, st *store.Store, srv *Server) {
	t.Helper()
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	authn.AddChangeListener(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = authn.Run(ctx, st) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the revocation feed", authn.Listening))
}

// replica is a second control-plane replica's agent server on the harness's database, with
// the same secret key.
func (h *harness) replica() (*Server, *grpc.ClientConn) {
	h.t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	b, err := NewBatcher(BatcherConfig{FlushInterval: 5 * time.Millisecond}, BatcherDeps{Sink: h.ev, Logger: log, Registerer: reg})
	if err != nil {
		h.t.Fatal(err)
	}
	guard, err := jobguard.New([]byte(testSecretKey))
	if err != nil {
		h.t.Fatal(err)
	}
	srv, err := NewServer(ServerConfig{},
		ServerDeps{Batcher: b, Tokens: h.st, Guard: guard, Logger: log, Now: h.clock.Now, Registerer: reg})
	if err != nil {
		h.t.Fatal(err)
	}
	gs := grpc.NewServer(GRPCServerOptions(0)...)
	srv.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served, batched := make(chan struct{}), make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	go func() { defer close(batched); _ = b.Run(ctx) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		conn.Close()
		gs.Stop()
		cancel()
		<-served
		<-batched
	})
	return srv, conn
}

func TestAgentTokenRegistration(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	_, eu := h.agentToken("cloud:eu-west-2")
	_, both := h.agentToken("cloud:eu-west-2", "cloud:us-east-1")
	revokedID, revoked := h.agentToken("cloud:eu-west-2")
	if _, err := h.st.RevokeAgentToken(context.Background(), revokedID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		token   string
		regions []string
		want    codes.Code // codes.OK: registered
	}{
		{"token of the region", eu, []string{"cloud:eu-west-2"}, codes.OK},
		{"token of several regions, one of them", both, []string{"cloud:us-east-1"}, codes.OK},
		{"token of several regions, all of them", both, []string{"cloud:us-east-1", "cloud:eu-west-2"}, codes.OK},
		{"region outside the token", eu, []string{"cloud:us-east-1"}, codes.PermissionDenied},
		{"one region outside the token", eu, []string{"cloud:eu-west-2", "cloud:us-east-1"}, codes.PermissionDenied},
		{"a region string no token names", eu, []string{"cloud:anywhere"}, codes.PermissionDenied},
		{"revoked token", revoked, []string{"cloud:eu-west-2"}, codes.Unauthenticated},
		{"unknown token", "vta_not-a-token-of-this-deployment", []string{"cloud:eu-west-2"}, codes.Unauthenticated},
		{"shared token, any region", testToken, []string{"cloud:ap-south-1"}, codes.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := h.registerWith(tc.token, "agent-"+tc.name, nil, tc.regions...)
			if status.Code(err) != tc.want {
				t.Fatalf("register: %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			// Registered carries the keys of the registered regions and of no other.
			var keyed []string
			for _, k := range a.keys {
				keyed = append(keyed, k.GetRegion())
			}
			slices.Sort(keyed)
			want := slices.Sorted(slices.Values(tc.regions))
			if !slices.Equal(keyed, want) {
				t.Errorf("region keys for %v, want %v", keyed, want)
			}
		})
	}
}

func TestResultRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	euCheck := h.createCheck(checkSpec{regions: []string{"cloud:eu-west-2"}})
	usCheck := h.createCheck(checkSpec{regions: []string{"cloud:us-east-1"}})
	_, eu := h.agentToken("cloud:eu-west-2")
	a, err := h.registerWith(eu, "eu-agent", nil, "cloud:eu-west-2")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := jobguard.New([]byte("another-control-plane-secret-key"))
	if err != nil {
		t.Fatal(err)
	}
	now := h.clock.Now()
	signedBy := func(g *jobguard.Guard, r *vantagev1.CheckResult) {
		j := jobOf(r)
		g.Sign(j)
		r.JobSignature = j.Signature
	}
	// The refusal reasons the agent reads in its ack: a missing signature, a signature that
	// matches no job published to the stream's regions, a region the stream did not register.
	const (
		unsigned   = "the result carries no job signature"
		noSuchJob  = "the job signature does not match the result: no such job was published to this region"
		notEnabled = `region "cloud:us-east-1" is not one this agent registered for`
	)
	tests := []struct {
		name   string
		result func() *vantagev1.CheckResult
		reason string
	}{
		{"unsigned", func() *vantagev1.CheckResult {
			return h.result(euCheck, uuid.New(), "cloud:eu-west-2", false, now)
		}, unsigned},
		{"forged check id", func() *vantagev1.CheckResult { // a job of its own check, reported for another check
			r := h.result(euCheck, uuid.New(), "cloud:eu-west-2", false, now)
			h.sign(r)
			r.CheckId = usCheck.String()
			return r
		}, noSuchJob},
		{"tampered job", func() *vantagev1.CheckResult { // the signed job's scheduled time moved
			r := h.result(euCheck, uuid.New(), "cloud:eu-west-2", false, now)
			h.sign(r)
			r.ScheduledAtUnixMs += 60_000
			return r
		}, noSuchJob},
		{"job of another region", func() *vantagev1.CheckResult { // a us-east-1 job, reported as eu-west-2's
			r := h.result(usCheck, uuid.New(), "cloud:us-east-1", false, now)
			h.sign(r)
			r.Region = "cloud:eu-west-2"
			return r
		}, noSuchJob},
		{"region the stream does not serve", func() *vantagev1.CheckResult { // a genuine us-east-1 job
			r := h.result(usCheck, uuid.New(), "cloud:us-east-1", false, now)
			h.sign(r)
			return r
		}, notEnabled},
		{"signed by another deployment", func() *vantagev1.CheckResult {
			r := h.result(euCheck, uuid.New(), "cloud:eu-west-2", false, now)
			signedBy(otherKey, r)
			return r
		}, noSuchJob},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seq := a.sendAsIs(tc.result())
			ack := a.acks(1)[seq]
			if ack.GetStored() {
				t.Fatal("stored")
			}
			if !strings.Contains(ack.GetError(), tc.reason) {
				t.Errorf("refused with %q, want the reason %q", ack.GetError(), tc.reason)
			}
		})
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != 0 {
		t.Fatalf("%d refused results were stored", n)
	}
	for _, id := range []uuid.UUID{euCheck, usCheck} {
		if s := h.state(id); s != "UP" && s != "PENDING" {
			t.Errorf("check %s is %s after refused failing results", id, s)
		}
	}
	// The stream still works for the results it may send.
	a.report(h.result(euCheck, uuid.New(), "cloud:eu-west-2", true, now))
}

func TestRevocationEndsStreamsOnEveryReplica(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	listenRevocations(t, h.st, h.srv)
	srv2, conn2 := h.replica()
	listenRevocations(t, h.st, srv2)
	id, secret := h.agentToken("cloud:eu-west-2")
	_, other := h.agentToken("cloud:eu-west-2")

	first, err := h.registerWith(secret, "agent-1", nil, "cloud:eu-west-2")
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.registerVia(conn2, secret, "agent-2", nil, "cloud:eu-west-2")
	if err != nil {
		t.Fatal(err)
	}
	bystander, err := h.registerWith(other, "agent-3", nil, "cloud:eu-west-2")
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if _, err := h.st.RevokeAgentToken(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*agent{first, second} {
		_, err := a.stream.Recv()
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("%s: Recv after revocation: %v, want Unauthenticated", a.session, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("streams ended %s after the revocation, want within seconds", d)
	}
	t.Logf("both replicas ended the streams %s after the revocation", time.Since(start))
	if _, err := h.registerVia(conn2, secret, "agent-2", nil, "cloud:eu-west-2"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("reconnect with the revoked token: %v", err)
	}
	// Another token's stream is untouched.
	bystander.report(h.result(h.createCheck(checkSpec{regions: []string{"cloud:eu-west-2"}}), uuid.New(), "cloud:eu-west-2", true, h.clock.Now()))
}

func TestRevocationRecheckWithoutFeed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{}) // nobody listens to the revocation feed
	id, secret := h.agentToken("cloud:eu-west-2")
	a, err := h.registerWith(secret, "agent-1", nil, "cloud:eu-west-2")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.srv.WatchRevocations(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, err := h.st.RevokeAgentToken(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	h.srv.ChangesMissed() // what a feed that listens again says
	if _, err := a.stream.Recv(); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Recv after revocation and recheck: %v, want Unauthenticated", err)
	}
}
