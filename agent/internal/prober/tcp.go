package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/agent/internal/tlscert"
	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TCP probes TCP checks.
//
// The host name is resolved for the check's IP family only (A records for IPv4, AAAA for
// IPv6) and the addresses are tried in order over tcp4 or tcp6 until one connects. Then, when
// the check has data, it is sent; and when the check has data or a TCP_RESPONSE_DATA
// assertion, the reply is read until the target closes the connection, MaxBodyRead bytes have
// arrived, or the target has been silent for the read-idle time (WithTCPReadIdle) after its
// last byte. The first byte is awaited until the deadline when a TCP_RESPONSE_DATA assertion
// expects a reply (no reply at all is then a TIMEOUT), and for the read-idle time otherwise
// (a target that never answers is fine). A reset after some data ends the reply.
//
// The response time (TCP_RESPONSE_TIME, response_time_ms) is resolution + connection + data
// exchange up to the last byte received; it excludes the idle wait. Timings: DNS, Connect, Data.
//
// With tcp_tls, a TLS handshake follows the connection (server name: the host name; timing:
// TLS), the served chain is recorded on the result, and the data travels inside TLS. A
// handshake that fails is a TRANSPORT / TLS_ERROR failure; with verify_ssl on, a chain that
// does not verify for the host name fails so, its summary naming why ("expired on …",
// "unknown authority", "host mismatch for …") and the certificate.
//
// Verdict: a connection that cannot be made is a TRANSPORT failure (tcp_status says how far it
// got); with tcp_should_fail it passes instead — refused, timed out, unreachable or reset — but
// a host name that does not resolve, an address WithPrivateTargets forbids and an invalid
// check still fail, since they say nothing about the port. With tcp_should_fail a connection
// that succeeds fails with ASSERTION / UNEXPECTED_CONNECTION, no data is sent and assertions
// are not evaluated. Otherwise failed assertions give ASSERTION / ASSERTION_FAILED.
type TCP struct {
	opts options
}

var _ Prober = (*TCP)(nil)

// NewTCP returns the TCP prober.
func NewTCP(opts ...Option) *TCP { return &TCP{opts: newOptions(opts)} }

// Probe runs one TCP attempt; see TCP.
func (p *TCP) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.TCP}
	assertions := check.AssertionsOfJob(job.GetAssertions())
	compiled, err := assert.CompileAll(check.TCP, assertions)
	if err != nil {
		res.failTransport(InvalidRequest, "invalid assertion: "+err.Error())
		res.finish(job, nil)
		return res, nil
	}
	spec := job.GetTcp()
	network, lookup, err := tcpFamily(spec)
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}
	port := int(spec.GetPort())
	target := net.JoinHostPort(spec.GetHostname(), strconv.Itoa(port))

	start := time.Now()
	addrs, looked, err := p.resolve(ctx, spec.GetHostname(), lookup)
	if looked {
		res.Timings.DNS = time.Since(start)
	}
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		ft := classify(ctx, err)
		if errors.Is(err, errFamily) {
			ft = InvalidRequest
		} else if ft != Timeout {
			ft = DNSError
		}
		res.TCPStatus = TCPDNSError
		res.failTransport(ft, describe(ft, err))
		res.finish(job, nil)
		return res, nil
	}

	connStart := time.Now()
	conn, err := p.connect(ctx, network, addrs, port)
	res.Timings.Connect = time.Since(connStart)
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		ft := classify(ctx, err)
		res.TCPStatus = tcpStatusOf(ft)
		summary := describe(ft, err)
		if ft == Timeout {
			summary = fmt.Sprintf("timed out after %s connecting to %s", millis(res.ResponseTime), target)
		}
		switch ft {
		case ConnectionRefused, Timeout, HostUnreachable, ConnectionReset, ConnectionError:
			if spec.GetShouldFail() {
				res.pass("connection to " + target + " failed as expected: " + summary)
				res.finish(job, nil)
				return res, nil
			}
		}
		res.failTransport(ft, summary)
		res.finish(job, nil)
		return res, nil
	}
	defer conn.Close()
	res.TCPStatus = TCPConnected
	if spec.GetShouldFail() {
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		res.failAssertion(UnexpectedConnection, fmt.Sprintf("connected to %s, but the check expects the connection to fail", conn.RemoteAddr()))
		res.finish(job, nil)
		return res, nil
	}

	var stream net.Conn = conn
	if spec.GetTls() {
		tlsConn, ft, fail := p.handshake(ctx, conn, spec, &res)
		if fail != "" {
			if cerr := cancelled(ctx); cerr != nil {
				return Result{}, cerr
			}
			res.ResponseTime = time.Since(start)
			res.Timings.Total = res.ResponseTime
			res.failTransport(ft, fail)
			res.finish(job, nil)
			return res, nil
		}
		defer func() { _ = tlsConn.Close() }() // sends close_notify; conn.Close follows
		stream = tlsConn
	}

	expectReply := false
	for _, a := range assertions {
		expectReply = expectReply || a.Type == check.TCPResponseData
	}
	ex := p.exchange(ctx, stream, []byte(spec.GetData()), expectReply)
	end := time.Now()
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	res.Timings.Data = ex.dataTime
	res.ResponseTime = res.Timings.DNS + res.Timings.Connect + res.Timings.TLS + ex.dataTime
	res.Timings.Total = end.Sub(start)
	var body []byte
	if ex.read {
		body = ex.data
	}
	if ex.err != nil || ex.noReply {
		if ex.noReply {
			res.failTransport(Timeout, fmt.Sprintf("no reply from %s within %s", conn.RemoteAddr(), millis(end.Sub(start))))
		} else {
			ft := classify(ctx, ex.err)
			if ft == ConnectionReset {
				res.TCPStatus = TCPReset
			}
			res.failTransport(ft, describe(ft, ex.err))
		}
		res.finish(job, body)
		return res, nil
	}

	outcomes := assert.EvaluateAll(compiled, assert.TCPObservation{Data: ex.data, ResponseTime: res.ResponseTime})
	res.Assertions = outcomes
	if !assert.AllPassed(outcomes) {
		res.failAssertion(AssertionFailed, assertionSummary(outcomes))
	} else {
		s := fmt.Sprintf("connected to %s in %s", conn.RemoteAddr(), millis(res.Timings.Connect))
		if spec.GetTls() {
			s += fmt.Sprintf(", TLS in %s", millis(res.Timings.TLS))
		}
		if ex.read {
			s += fmt.Sprintf(", received %d %s", len(ex.data), plural(len(ex.data), "byte"))
		}
		res.pass(s)
	}
	res.finish(job, body)
	return res, nil
}

// handshake runs the TLS handshake of a tcp_tls check on conn, with the check's host name as
// the server name, and records the served chain on res (verified here whether or not the
// check verifies: expiry is watched either way). It returns the TLS connection, or the failure
// type and summary of the attempt: with verify_ssl on, a chain that does not verify for the
// host fails with the reason and the certificate's subject, as HTTPS checks say it.
func (p *TCP) handshake(ctx context.Context, conn net.Conn, spec *vantagev1.TCPSpec, res *Result) (*tls.Conn, string, string) {
	host := strings.TrimSuffix(strings.TrimPrefix(spec.GetHostname(), "["), "]")
	tc := tls.Client(conn, &tls.Config{
		ServerName: host,
		// verify_ssl false is the user's explicit choice for this check.
		InsecureSkipVerify: !spec.GetVerifySsl(), //nolint:gosec // G402: see above
		RootCAs:            p.opts.rootCAs,
		MinVersion:         tls.VersionTLS12,
	})
	begin := time.Now()
	err := tc.HandshakeContext(ctx)
	res.Timings.TLS = time.Since(begin)
	if err != nil {
		if served := tlscert.Served(err); served != nil {
			chain := tlscert.Record(served, host, p.opts.rootCAs, time.Now())
			res.TLS = &chain
			res.CertNotAfter = served[0].NotAfter
			return nil, TLSError, fmt.Sprintf("TLS error: %s (certificate %s)", tlscert.Reason(err, host, served[0], time.Now()), served[0].Subject)
		}
		ft := classify(ctx, err)
		if ft == Timeout {
			return nil, ft, fmt.Sprintf("timed out after %s in the TLS handshake with %s", millis(res.Timings.TLS), conn.RemoteAddr())
		}
		return nil, ft, "TLS handshake with " + conn.RemoteAddr().String() + " failed: " + err.Error()
	}
	if peers := tc.ConnectionState().PeerCertificates; len(peers) > 0 {
		chain := tlscert.Record(peers, host, p.opts.rootCAs, time.Now())
		res.TLS = &chain
		res.CertNotAfter = peers[0].NotAfter
	}
	return tc, "", ""
}

// errFamily marks an IP literal of the other family than the check's.
var errFamily = errors.New("address family mismatch")

// tcpFamily validates spec and returns the socket network and the lookup network.
func tcpFamily(spec *vantagev1.TCPSpec) (network, lookup string, err error) {
	if strings.TrimSpace(spec.GetHostname()) == "" {
		return "", "", errors.New("no hostname")
	}
	if spec.GetPort() < 1 || spec.GetPort() > 65535 {
		return "", "", fmt.Errorf("port %d is not in 1..65535", spec.GetPort())
	}
	switch spec.GetIpFamily() {
	case "", "IPv4":
		return "tcp4", "ip4", nil
	case "IPv6":
		return "tcp6", "ip6", nil
	case check.IPFamilyAny:
		return "tcp", "ip", nil
	}
	return "", "", fmt.Errorf("IP family %q is not IPv4, IPv6 or Any", spec.GetIpFamily())
}

// resolve returns the addresses of host in the family of lookup; see resolveFamily.
func (p *TCP) resolve(ctx context.Context, host, lookup string) (addrs []netip.Addr, looked bool, err error) {
	return resolveFamily(ctx, p.opts.resolver, host, lookup)
}

// resolveFamily returns the addresses of host in the family of lookup ("ip4", "ip6" or "ip"
// for both), and whether that took a lookup (it does not for an IP address).
func resolveFamily(ctx context.Context, r *net.Resolver, host, lookup string) (addrs []netip.Addr, looked bool, err error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if lookup != "ip" && a.Is4() != (lookup == "ip4") {
			family := map[string]string{"ip4": "IPv4", "ip6": "IPv6"}[lookup]
			return nil, false, fmt.Errorf("%w: %s is not an %s address", errFamily, a, family)
		}
		return []netip.Addr{a}, false, nil
	}
	addrs, err = r.LookupNetIP(ctx, lookup, host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no " + lookup + " address", Name: host, IsNotFound: true}
	}
	return addrs, true, err
}

// happyEyeballsDelay is how long the IPv6 attempts of an Any check lead before IPv4 ones
// start (RFC 8305 recommends 250 ms).
const happyEyeballsDelay = 250 * time.Millisecond

// connect tries addrs in order until one connects, within ctx. For network "tcp" (the Any
// family) it races the families as happy eyeballs does: IPv6 addresses first, IPv4 ones
// starting happyEyeballsDelay later (or as soon as the IPv6 ones have all failed), and the
// first connection wins.
func (p *TCP) connect(ctx context.Context, network string, addrs []netip.Addr, port int) (net.Conn, error) {
	if network != "tcp" {
		return p.connectInOrder(ctx, network, addrs, port)
	}
	var v6, v4 []netip.Addr
	for _, a := range addrs {
		if a.Unmap().Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	if len(v6) == 0 || len(v4) == 0 {
		return p.connectInOrder(ctx, network, addrs, port)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		conn net.Conn
		err  error
	}
	results := make(chan outcome, 2)
	v6done := make(chan struct{})
	go func() {
		c, err := p.connectInOrder(ctx, "tcp6", v6, port)
		close(v6done)
		results <- outcome{c, err}
	}()
	go func() {
		t := time.NewTimer(happyEyeballsDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-v6done:
		case <-ctx.Done():
		}
		c, err := p.connectInOrder(ctx, "tcp4", v4, port)
		results <- outcome{c, err}
	}()
	var first error
	for i := range 2 {
		r := <-results
		if r.err == nil {
			cancel()
			if i == 1 {
				return r.conn, nil
			}
			go func() { // the loser, if it connected too, is closed
				if l := <-results; l.conn != nil {
					l.conn.Close()
				}
			}()
			return r.conn, nil
		}
		if first == nil || errors.Is(r.err, errForbiddenTarget) {
			first = r.err
		}
	}
	return nil, first
}

// connectInOrder tries addrs in order until one connects, within ctx.
func (p *TCP) connectInOrder(ctx context.Context, network string, addrs []netip.Addr, port int) (net.Conn, error) {
	d := p.opts.dialer(true)
	var err error
	for _, a := range addrs {
		var conn net.Conn
		conn, err = d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil || errors.Is(err, errForbiddenTarget) {
			break
		}
	}
	return nil, err
}

// exchangeResult is what sending and reading gave.
type exchangeResult struct {
	data     []byte
	read     bool          // the reply was read (so data is the response body)
	dataTime time.Duration // from the start of sending to the last byte received
	noReply  bool          // a reply was expected and nothing came before the deadline
	err      error         // a write or read failure
}

// exchange sends data (if any) and reads the reply when there is data or expectReply, over
// conn (the TLS connection of a tcp_tls check).
func (p *TCP) exchange(ctx context.Context, conn net.Conn, data []byte, expectReply bool) exchangeResult {
	// Cancellation of ctx (not only its deadline) unblocks the socket at once.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		_ = conn.SetWriteDeadline(deadline)
	}
	var ex exchangeResult
	begin := time.Now()
	last := begin
	if len(data) > 0 {
		if _, err := conn.Write(data); err != nil {
			ex.err = err
			return ex
		}
		last = time.Now()
	}
	if len(data) == 0 && !expectReply {
		ex.dataTime = last.Sub(begin)
		return ex
	}
	ex.read = true
	ex.data = []byte{}
	buf := make([]byte, 32<<10)
	for len(ex.data) < MaxBodyRead {
		var rd time.Time
		if len(ex.data) > 0 || !expectReply {
			rd = time.Now().Add(p.opts.tcpReadIdle)
		}
		if hasDeadline && (rd.IsZero() || deadline.Before(rd)) {
			rd = deadline
		}
		_ = conn.SetReadDeadline(rd)
		n, err := conn.Read(buf[:min(len(buf), MaxBodyRead-len(ex.data))])
		if n > 0 {
			ex.data = append(ex.data, buf[:n]...)
			last = time.Now()
		}
		if err == nil {
			continue
		}
		var ne net.Error
		switch {
		case errors.Is(err, io.EOF):
		case errors.As(err, &ne) && ne.Timeout():
			if len(ex.data) == 0 && expectReply {
				ex.noReply = true
			}
		case len(ex.data) > 0 && classify(ctx, err) == ConnectionReset:
			// Many servers reset rather than close after replying.
		default:
			ex.err = err
		}
		break
	}
	ex.dataTime = last.Sub(begin)
	return ex
}

func tcpStatusOf(failureType string) string {
	switch failureType {
	case ConnectionRefused:
		return TCPRefused
	case Timeout:
		return TCPTimeout
	case ConnectionReset:
		return TCPReset
	case HostUnreachable:
		return TCPUnreachable
	case ForbiddenTarget:
		return TCPForbidden
	case DNSError:
		return TCPDNSError
	}
	return TCPError
}
