package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// GRPC probes gRPC health checks: one grpc.health.v1.Health/Check call for grpc_service over
// a fresh connection (TLS with grpc_tls, the certificate verified with verify_ssl), with the
// check's metadata. The connection is dialled through the outbound address policy, on the
// address the socket connects to.
//
// Verdict: SERVING passes; another answer (NOT_SERVING, SERVICE_UNKNOWN, UNKNOWN) is
// ASSERTION / NOT_SERVING; a failed call is TRANSPORT, classified by the connection's error
// when the connection failed (refused, DNS, forbidden, TLS) and by the RPC's code otherwise.
// The response time is the whole attempt: connection, handshake and call.
type GRPC struct {
	opts options
}

var _ Prober = (*GRPC)(nil)

// NewGRPC returns the gRPC health prober.
func NewGRPC(opts ...Option) *GRPC { return &GRPC{opts: newOptions(opts)} }

// Probe runs one gRPC health attempt; see GRPC.
func (p *GRPC) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.GRPC}
	spec := job.GetGrpc()
	if strings.TrimSpace(spec.GetHostname()) == "" || spec.GetPort() < 1 || spec.GetPort() > 65535 {
		res.failTransport(InvalidRequest, "the check has no hostname or port")
		res.finish(job, nil)
		return res, nil
	}
	target := net.JoinHostPort(spec.GetHostname(), strconv.Itoa(int(spec.GetPort())))
	dial := &recordingDialer{d: p.opts.dialer(true)}
	creds := insecure.NewCredentials()
	if spec.GetTls() {
		creds = credentials.NewTLS(&tls.Config{
			ServerName:         spec.GetHostname(),
			InsecureSkipVerify: !spec.GetVerifySsl(), //nolint:gosec // the check's verify_ssl
			RootCAs:            p.opts.rootCAs,
			MinVersion:         tls.VersionTLS12,
		})
	}
	start := time.Now()
	// passthrough: the target goes to the dialer as written, which resolves it itself, so
	// that the policy sees every address.
	conn, err := grpc.NewClient("passthrough:///"+target,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(dial.DialContext),
		grpc.WithUserAgent("Vantage-Agent"),
	)
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}
	defer func() { _ = conn.Close() }()
	callCtx := ctx
	if md := spec.GetMetadata(); len(md) > 0 {
		callCtx = metadata.NewOutgoingContext(ctx, metadata.New(md))
	}
	reply, err := healthpb.NewHealthClient(conn).Check(callCtx, &healthpb.HealthCheckRequest{Service: spec.GetService()})
	res.ResponseTime = time.Since(start)
	res.Timings.Total = res.ResponseTime
	res.Timings.Connect = dial.elapsed()
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	what := "the server"
	if spec.GetService() != "" {
		what = "service " + spec.GetService()
	}
	if status.Code(err) == codes.NotFound {
		// The health service's answer for a service it does not know (grpc.health.v1).
		res.GRPCStatus = healthpb.HealthCheckResponse_SERVICE_UNKNOWN.String()
		res.failAssertion(NotServing, fmt.Sprintf("%s at %s is SERVICE_UNKNOWN: the health service does not know it", what, target))
		res.finish(job, nil)
		return res, nil
	}
	if err != nil {
		st := status.Convert(err)
		res.GRPCStatus = upperSnake(st.Code().String())
		ft := grpcFailureType(ctx, st.Code())
		summary := fmt.Sprintf("health check of %s at %s failed: %s: %s", what, target, res.GRPCStatus, st.Message())
		switch derr := dial.err(); {
		case derr != nil && st.Code() == codes.Unavailable:
			ft = classify(ctx, derr)
			summary = describe(ft, derr)
		case st.Code() == codes.Unavailable && strings.Contains(st.Message(), "authentication handshake failed"):
			// grpc-go reports a failed TLS handshake only in the status's text.
			ft = TLSError
		}
		res.failTransport(ft, summary)
		res.finish(job, nil)
		return res, nil
	}
	res.GRPCStatus = reply.GetStatus().String()
	if reply.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		res.failAssertion(NotServing, fmt.Sprintf("%s at %s is %s", what, target, res.GRPCStatus))
	} else {
		res.pass(fmt.Sprintf("%s at %s is SERVING (%s)", what, target, millis(res.ResponseTime)))
	}
	res.finish(job, nil)
	return res, nil
}

// grpcFailureType classifies a failed call by its code.
func grpcFailureType(ctx context.Context, c codes.Code) string {
	switch {
	case c == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Timeout
	case c == codes.Unavailable:
		return ConnectionError
	case c == codes.Unimplemented:
		return NotServing // no health service: the target cannot say it serves
	}
	return InvalidResponse
}

// upperSnake turns a gRPC code name (DeadlineExceeded) into the status form (DEADLINE_EXCEEDED).
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// recordingDialer dials through the policy dialer and keeps the last failure and the time
// the connection took, which the RPC's status only paraphrases.
type recordingDialer struct {
	d       *net.Dialer
	mu      sync.Mutex
	lastErr error
	took    time.Duration
}

func (r *recordingDialer) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	start := time.Now()
	c, err := r.d.DialContext(ctx, "tcp", addr)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.took, r.lastErr = time.Since(start), err
	return c, err
}

func (r *recordingDialer) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

func (r *recordingDialer) elapsed() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.took
}
