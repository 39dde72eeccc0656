package prober

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// grpcTarget is a real gRPC server with the standard health service.
type grpcTarget struct {
	health *health.Server
	port   uint32
	seenMD chan metadata.MD // the metadata of each health call
}

// startGRPC serves the standard health service on loopback; with cert, over TLS. A call whose
// metadata has "x-delay" sleeps that long first; one with "x-deny" is refused with its value.
func startGRPC(t *testing.T, cert *tls.Certificate) *grpcTarget {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcTarget{health: health.NewServer(), port: uint32(l.Addr().(*net.TCPAddr).Port), seenMD: make(chan metadata.MD, 16)}
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		select {
		case g.seenMD <- md:
		default:
		}
		if d := md.Get("x-delay"); len(d) > 0 {
			wait, _ := time.ParseDuration(d[0])
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if v := md.Get("x-deny"); len(v) > 0 {
			return nil, status.Error(codes.PermissionDenied, "token "+v[0]+" refused")
		}
		return next(ctx, req)
	})}
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
	}
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, g.health)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return g
}

func grpcJob(spec *vantagev1.GRPCSpec) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_GRPC, Spec: &vantagev1.CheckJob_Grpc{Grpc: spec}}
}

func TestGRPCServingThenNotServing(t *testing.T) {
	t.Parallel()
	g := startGRPC(t, nil)
	p := NewGRPC()
	job := grpcJob(&vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Service: "shop.v1.Cart"})

	g.health.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_SERVING)
	res := run(t, p, job, 5*time.Second)
	wantPass(t, res)
	if res.GRPCStatus != "SERVING" || res.ResponseTime <= 0 || res.Timings.Connect <= 0 {
		t.Fatalf("status %q, response time %s, connect %s", res.GRPCStatus, res.ResponseTime, res.Timings.Connect)
	}

	g.health.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_NOT_SERVING)
	res = run(t, p, job, 5*time.Second)
	wantFail(t, res, SourceAssertion, NotServing)
	if res.GRPCStatus != "NOT_SERVING" {
		t.Fatalf("status %q", res.GRPCStatus)
	}

	g.health.SetServingStatus("shop.v1.Cart", healthpb.HealthCheckResponse_SERVING)
	wantPass(t, run(t, p, job, 5*time.Second))

	// The server as a whole ("") is SERVING by default; an unknown service is SERVICE_UNKNOWN.
	wantPass(t, run(t, p, grpcJob(&vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port}), 5*time.Second))
	res = run(t, p, grpcJob(&vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Service: "no.such.Service"}), 5*time.Second)
	wantFail(t, res, SourceAssertion, NotServing)
	if res.GRPCStatus != "SERVICE_UNKNOWN" {
		t.Fatalf("status %q", res.GRPCStatus)
	}
}

func TestGRPCMetadataAndSecrets(t *testing.T) {
	t.Parallel()
	g := startGRPC(t, nil)
	job := grpcJob(&vantagev1.GRPCSpec{Hostname: "localhost", Port: g.port,
		Metadata: map[string]string{"authorization": "Bearer s3cret-token", "x-deny": "s3cret-token"}})
	job.Redact = []string{"s3cret-token"}
	res := run(t, NewGRPC(), job, 5*time.Second)
	wantFail(t, res, SourceTransport, InvalidResponse)
	if res.GRPCStatus != "PERMISSION_DENIED" {
		t.Errorf("status %q", res.GRPCStatus)
	}
	if strings.Contains(res.ResultSummary, "s3cret") || !strings.Contains(res.ResultSummary, "refused") {
		t.Errorf("summary %q: the secret must be redacted, the rest kept", res.ResultSummary)
	}
	md := <-g.seenMD
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer s3cret-token" {
		t.Errorf("metadata sent: %v", md)
	}
}

func TestGRPCTransportFailures(t *testing.T) {
	t.Parallel()
	g := startGRPC(t, nil)
	_, closed := closedPort(t)
	cases := []struct {
		name    string
		p       *GRPC
		spec    *vantagev1.GRPCSpec
		timeout time.Duration
		source  string
		ft      string
	}{
		{"refused", NewGRPC(), &vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: uint32(closed)}, 5 * time.Second, SourceTransport, ConnectionRefused},
		{"timeout", NewGRPC(), &vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Metadata: map[string]string{"x-delay": "3s"}}, 300 * time.Millisecond, SourceTransport, Timeout},
		{"policy", NewGRPC(WithPrivateTargets(false)), &vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port}, 5 * time.Second, SourceTransport, ForbiddenTarget},
		{"plaintext server, TLS client", NewGRPC(), &vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Tls: true}, 5 * time.Second, SourceTransport, ConnectionError},
		{"no port", NewGRPC(), &vantagev1.GRPCSpec{Hostname: "127.0.0.1"}, 5 * time.Second, SourceTransport, InvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, tc.p, grpcJob(tc.spec), tc.timeout)
			if tc.name == "plaintext server, TLS client" {
				// Either the handshake error or the RPC's UNAVAILABLE: a transport failure.
				if res.Passing || res.FailureSource != SourceTransport {
					t.Fatalf("got %v %s/%s: %s", res.Passing, res.FailureSource, res.FailureType, res.ResultSummary)
				}
				return
			}
			wantFail(t, res, tc.source, tc.ft)
		})
	}
}

func TestGRPCTLS(t *testing.T) {
	t.Parallel()
	cert := selfSignedCert(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	g := startGRPC(t, &cert)
	res := run(t, NewGRPC(), grpcJob(&vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Tls: true, VerifySsl: false}), 5*time.Second)
	wantPass(t, res)
	res = run(t, NewGRPC(), grpcJob(&vantagev1.GRPCSpec{Hostname: "127.0.0.1", Port: g.port, Tls: true, VerifySsl: true}), 5*time.Second)
	wantFail(t, res, SourceTransport, TLSError)
}
