package prober

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// startTCP serves handle on a loopback listener of network ("tcp4" or "tcp6") and returns
// its host and port.
func startTCP(t *testing.T, network string, handle func(net.Conn)) (string, int) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s: %v", network, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				handle(c)
			}()
		}
	}()
	a := l.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// The TCP targets.
var (
	echo   = func(c net.Conn) { _, _ = io.Copy(c, c) } // echoes, never closes first
	banner = func(c net.Conn) {
		_, _ = io.WriteString(c, "+OK ready\r\n")
		_, _ = io.Copy(io.Discard, c)
	}
	closer = func(c net.Conn) { // answers one line, then closes
		line, _ := bufio.NewReader(c).ReadString('\n')
		_, _ = io.WriteString(c, "bye: "+line)
	}
	silent = func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }
	reset  = func(c net.Conn) { // closes with RST at once
		_ = c.(*net.TCPConn).SetLinger(0)
	}
	replyThenReset = func(c net.Conn) {
		_, _ = io.WriteString(c, "hello")
		time.Sleep(50 * time.Millisecond)
		_ = c.(*net.TCPConn).SetLinger(0)
	}
	stream = func(c net.Conn) { // far more than MaxBodyRead
		chunk := []byte(strings.Repeat("z", 64<<10))
		for range 40 {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}
)

func tcpReq(host string, port int, data string, as ...*vantagev1.Assertion) *vantagev1.CheckJob {
	spec := &vantagev1.TCPSpec{Hostname: host, Port: uint32(port)}
	if data != "" {
		spec.Data = &data
	}
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_TCP, Spec: &vantagev1.CheckJob_Tcp{Tcp: spec}, Assertions: as}
}

func TestTCPExchange(t *testing.T) {
	t.Parallel()
	p := NewTCP(WithTCPReadIdle(200 * time.Millisecond))
	t.Run("echo with assertions", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", echo)
		res := run(t, p, tcpReq(host, port, "PING\r\n",
			assertion(check.TCPResponseData, "", check.Equals, "PING\r\n"),
			assertion(check.TCPResponseTime, "responseTime", check.LessThan, "5000"),
		), 5*time.Second)
		wantPass(t, res)
		if res.TCPStatus != TCPConnected || res.ResponseBody != "PING\r\n" || res.BodyAvailability != BodyAvailable {
			t.Errorf("tcp_status %s, body %q (%s)", res.TCPStatus, res.ResponseBody, res.BodyAvailability)
		}
		tm := res.Timings
		if tm.DNS != 0 || tm.Connect <= 0 || tm.Data <= 0 || tm.Total < 200*time.Millisecond {
			t.Errorf("Timings = %+v: want no DNS for an address, connect and data measured, the idle wait in the total", tm)
		}
		if res.ResponseTime >= 200*time.Millisecond || res.ResponseTime != tm.Connect+tm.Data {
			t.Errorf("ResponseTime = %s, want connect + data without the idle wait (%+v)", res.ResponseTime, tm)
		}
		wantSummary(t, res, "connected to "+host, "received 6 bytes")
	})
	t.Run("banner read for a data assertion", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", banner)
		res := run(t, p, tcpReq(host, port, "", assertion(check.TCPResponseData, "", check.Contains, "+OK")), 5*time.Second)
		wantPass(t, res)
		if res.ResponseBody != "+OK ready\r\n" {
			t.Errorf("body = %q", res.ResponseBody)
		}
	})
	t.Run("connect only", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", banner)
		res := run(t, p, tcpReq(host, port, "", assertion(check.TCPResponseTime, "responseTime", check.LessThan, "1000")), 5*time.Second)
		wantPass(t, res)
		if res.BodyAvailability != BodyNotRecorded || res.Timings.Total >= 200*time.Millisecond {
			t.Errorf("body %s, total %s: want no read at all", res.BodyAvailability, res.Timings.Total)
		}
	})
	t.Run("reply ends at close", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", closer)
		res := run(t, p, tcpReq(host, port, "hello\n", assertion(check.TCPResponseData, "", check.Equals, "bye: hello\n")), 5*time.Second)
		wantPass(t, res)
		if res.Timings.Total >= 200*time.Millisecond {
			t.Errorf("total %s: EOF should end the read without the idle wait", res.Timings.Total)
		}
	})
	t.Run("silent target without a data assertion", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", silent)
		res := run(t, p, tcpReq(host, port, "fire and forget"), 5*time.Second)
		wantPass(t, res)
		if res.ResponseBody != "" || res.BodyAvailability != BodyAvailable {
			t.Errorf("body %q (%s)", res.ResponseBody, res.BodyAvailability)
		}
	})
	t.Run("silent target with a data assertion", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", silent)
		res := run(t, p, tcpReq(host, port, "hello?", assertion(check.TCPResponseData, "", check.NotEmpty, "")), 400*time.Millisecond)
		wantFail(t, res, SourceTransport, Timeout)
		wantSummary(t, res, "no reply from")
		if res.TCPStatus != TCPConnected {
			t.Errorf("tcp_status = %s", res.TCPStatus)
		}
	})
	t.Run("failing assertions", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", echo)
		res := run(t, p, tcpReq(host, port, "PING",
			assertion(check.TCPResponseData, "", check.Contains, "PONG"),
			assertion(check.TCPResponseTime, "responseTime", check.GreaterThan, "60000"),
		), 5*time.Second)
		wantFail(t, res, SourceAssertion, AssertionFailed)
		wantSummary(t, res, `response data: expected CONTAINS "PONG", got "PING" (and 1 more)`)
	})
	t.Run("reply is capped", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", stream)
		res := run(t, p, tcpReq(host, port, "", assertion(check.TCPResponseData, "", check.Contains, "zzz")), 10*time.Second)
		wantPass(t, res)
		if len(res.ResponseBody) != MaxBodyStored {
			t.Errorf("stored %d bytes, want %d", len(res.ResponseBody), MaxBodyStored)
		}
	})
	t.Run("reset before any reply", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", reset)
		res := run(t, p, tcpReq(host, port, "hello", assertion(check.TCPResponseData, "", check.NotEmpty, "")), 5*time.Second)
		wantFail(t, res, SourceTransport, ConnectionReset)
		if res.TCPStatus != TCPReset {
			t.Errorf("tcp_status = %s", res.TCPStatus)
		}
	})
	t.Run("reset after the reply ends it", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", replyThenReset)
		res := run(t, NewTCP(WithTCPReadIdle(2*time.Second)), tcpReq(host, port, "", assertion(check.TCPResponseData, "", check.Equals, "hello")), 5*time.Second)
		wantPass(t, res)
	})
	t.Run("secrets redacted", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", echo)
		req := tcpReq(host, port, "AUTH hunter2\r\n", assertion(check.TCPResponseData, "", check.Equals, "OK"))
		req.Redact = []string{"hunter2"}
		res := run(t, p, req, 5*time.Second)
		wantFail(t, res, SourceAssertion, AssertionFailed)
		if res.ResponseBody != "AUTH [REDACTED]\r\n" || strings.Contains(res.ResultSummary, "hunter2") || strings.Contains(res.Assertions[0].Actual, "hunter2") {
			t.Errorf("body %q, summary %q, actual %q", res.ResponseBody, res.ResultSummary, res.Assertions[0].Actual)
		}
	})
}

func TestTCPConnectFailures(t *testing.T) {
	t.Parallel()
	p := NewTCP()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		res := run(t, p, tcpReq(host, port, "data"), 5*time.Second)
		wantFail(t, res, SourceTransport, ConnectionRefused)
		if res.TCPStatus != TCPRefused || res.BodyAvailability != BodyNotRecorded {
			t.Errorf("tcp_status %s, body %s", res.TCPStatus, res.BodyAvailability)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		host, port := blackhole(t)
		start := time.Now()
		res := run(t, p, tcpReq(host, port, ""), 300*time.Millisecond)
		wantFail(t, res, SourceTransport, Timeout)
		wantSummary(t, res, "timed out after", "connecting to")
		if res.TCPStatus != TCPTimeout {
			t.Errorf("tcp_status = %s", res.TCPStatus)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %s for a 300ms deadline", took)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		host, port := startTCP(t, "tcp4", silent)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := p.Probe(ctx, tcpReq(host, port, "x", assertion(check.TCPResponseData, "", check.NotEmpty, "")))
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("err = %v, want ErrCancelled", err)
		}
	})
}

// blackhole returns a loopback address whose connection attempts hang: a listener with a
// backlog of 0 that never accepts, its queue filled first.
func blackhole(t *testing.T) (string, int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for range 16 {
		c, err := net.DialTimeout("tcp4", addr, 200*time.Millisecond)
		if err != nil {
			return "127.0.0.1", port // the queue is full: connecting now hangs
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatal("could not fill the accept queue of a backlog-0 listener")
	return "", 0
}

func TestTCPShouldFail(t *testing.T) {
	t.Parallel()
	p := NewTCP()
	t.Run("refused passes", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		req := tcpReq(host, port, "")
		req.GetTcp().ShouldFail = true
		res := run(t, p, req, 5*time.Second)
		wantPass(t, res)
		wantSummary(t, res, "failed as expected", "connection refused")
		if res.TCPStatus != TCPRefused {
			t.Errorf("tcp_status = %s", res.TCPStatus)
		}
	})
	t.Run("timeout passes", func(t *testing.T) {
		t.Parallel()
		host, port := blackhole(t)
		req := tcpReq(host, port, "")
		req.GetTcp().ShouldFail = true
		res := run(t, p, req, 300*time.Millisecond)
		wantPass(t, res)
		if res.TCPStatus != TCPTimeout {
			t.Errorf("tcp_status = %s", res.TCPStatus)
		}
	})
	t.Run("connection fails", func(t *testing.T) {
		t.Parallel()
		received := make(chan int, 1)
		host, port := startTCP(t, "tcp4", func(c net.Conn) {
			n, _ := io.Copy(io.Discard, c)
			received <- int(n)
		})
		req := tcpReq(host, port, "must not be sent", assertion(check.TCPResponseData, "", check.Empty, ""))
		req.GetTcp().ShouldFail = true
		res := run(t, p, req, 5*time.Second)
		wantFail(t, res, SourceAssertion, UnexpectedConnection)
		wantSummary(t, res, "expects the connection to fail")
		if res.TCPStatus != TCPConnected || len(res.Assertions) != 0 {
			t.Errorf("tcp_status %s, %d outcomes", res.TCPStatus, len(res.Assertions))
		}
		if n := <-received; n != 0 {
			t.Errorf("the target received %d bytes", n)
		}
	})
	t.Run("forbidden target still fails", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		req := tcpReq(host, port, "")
		req.GetTcp().ShouldFail = true
		wantFail(t, run(t, NewTCP(WithPrivateTargets(false)), req, 5*time.Second), SourceTransport, ForbiddenTarget)
	})
	t.Run("unresolvable name still fails", func(t *testing.T) {
		t.Parallel()
		srv := startDNS(t)
		req := tcpReq("nowhere.test", 80, "")
		req.GetTcp().ShouldFail = true
		wantFail(t, run(t, NewTCP(WithResolver(srv.resolver())), req, 5*time.Second), SourceTransport, DNSError)
	})
}

func TestTCPFamilies(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	p := NewTCP(WithResolver(srv.resolver()))
	_, port4 := startTCP(t, "tcp4", banner)
	_, port6 := startTCP(t, "tcp6", banner)
	cases := []struct {
		name, host, family string
		port               int
		source, failure    string // "" = pass
		dns                bool   // a lookup was made
	}{
		{"IPv4 address", "127.0.0.1", "IPv4", port4, "", "", false},
		{"default family is IPv4", "127.0.0.1", "", port4, "", "", false},
		{"IPv6 address", "::1", "IPv6", port6, "", "", false},
		{"bracketed IPv6 address", "[::1]", "IPv6", port6, "", "", false},
		{"IPv4 name", "loop.test", "IPv4", port4, "", "", true},
		{"IPv6 name", "v6only.test", "IPv6", port6, "", "", true},
		{"IPv6-only name over IPv4", "v6only.test", "IPv4", port4, SourceTransport, DNSError, true},
		{"IPv4-only name over IPv6", "loop.test", "IPv6", port6, SourceTransport, DNSError, true},
		{"unknown name", "nowhere.test", "IPv4", port4, SourceTransport, DNSError, true},
		{"IPv4 address over IPv6", "127.0.0.1", "IPv6", port6, SourceTransport, InvalidRequest, false},
		{"IPv6 address over IPv4", "::1", "IPv4", port4, SourceTransport, InvalidRequest, false},
		// Any (an extension): whichever family answers, raced as happy eyeballs does.
		{"Any, IPv4 address", "127.0.0.1", "Any", port4, "", "", false},
		{"Any, IPv6 address", "::1", "Any", port6, "", "", false},
		{"Any, IPv4-only name", "loop.test", "Any", port4, "", "", true},
		{"Any, IPv6-only name", "v6only.test", "Any", port6, "", "", true},
		{"Any, dual-stack name answered over IPv4", "dual.test", "Any", port4, "", "", true},
		{"Any, dual-stack name answered over IPv6", "dual.test", "Any", port6, "", "", true},
		{"Any, unknown name", "nowhere.test", "Any", port4, SourceTransport, DNSError, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := tcpReq(tc.host, tc.port, "", assertion(check.TCPResponseData, "", check.Contains, "+OK"))
			req.GetTcp().IpFamily = tc.family
			res := run(t, p, req, 5*time.Second)
			if tc.failure == "" {
				wantPass(t, res)
			} else {
				wantFail(t, res, tc.source, tc.failure)
			}
			if (res.Timings.DNS > 0) != tc.dns {
				t.Errorf("Timings.DNS = %s, lookup expected: %v", res.Timings.DNS, tc.dns)
			}
			if tc.failure == DNSError && res.TCPStatus != TCPDNSError {
				t.Errorf("tcp_status = %s", res.TCPStatus)
			}
		})
	}
}

func TestTCPPrivateTargets(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	host, port := startTCP(t, "tcp4", banner)
	p := NewTCP(WithPrivateTargets(false), WithResolver(srv.resolver()))
	for _, h := range []string{host, "loop.test", "private.test"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			res := run(t, p, tcpReq(h, port, ""), 5*time.Second)
			wantFail(t, res, SourceTransport, ForbiddenTarget)
			if res.TCPStatus != TCPForbidden {
				t.Errorf("tcp_status = %s", res.TCPStatus)
			}
		})
	}
}

func TestTCPInvalidRequest(t *testing.T) {
	t.Parallel()
	p := NewTCP()
	for name, req := range map[string]*vantagev1.CheckJob{
		"no host":   tcpReq("", 80, ""),
		"port 0":    tcpReq("127.0.0.1", 0, ""),
		"port high": tcpReq("127.0.0.1", 65536, ""),
		"family":    {Kind: vantagev1.CheckKind_CHECK_KIND_TCP, Spec: &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{Hostname: "127.0.0.1", Port: 80, IpFamily: "IPv5"}}},
		"assertion": tcpReq("127.0.0.1", 80, "", assertion(check.TCPResponseTime, "responseTime", check.Contains, "1")),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := run(t, p, req, time.Second)
			wantFail(t, res, SourceTransport, InvalidRequest)
			if res.TCPStatus != "" {
				t.Errorf("tcp_status = %q for a check that was never attempted", res.TCPStatus)
			}
		})
	}
}
