package prober

import (
	"bufio"
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/tlscert/tlscerttest"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// tlsEcho serves cert over TLS on 127.0.0.1: it answers each line with "PONG <line>", and
// remembers the server names clients asked for (SNI).
type tlsEcho struct {
	port  int
	mu    sync.Mutex
	names []string
}

func newTLSEcho(t *testing.T, cert tls.Certificate) *tlsEcho {
	t.Helper()
	e := &tlsEcho{}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		e.mu.Lock()
		e.names = append(e.names, h.ServerName)
		e.mu.Unlock()
		return nil, nil
	}}
	ln, err := tls.Listen("tcp4", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	e.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					_, _ = c.Write([]byte("PONG " + line))
				}
			}()
		}
	}()
	return e
}

func (e *tlsEcho) serverNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.names...)
}

func tcpTLSReq(host string, port int, verify bool, as ...*vantagev1.Assertion) *vantagev1.CheckJob {
	job := tcpReq(host, port, "PING\n", as...)
	job.GetTcp().Tls, job.GetTcp().VerifySsl = true, verify
	return job
}

// TestTCPTLS serves certificates made here over TLS and checks the TCP prober's handshake:
// the data travels inside TLS, the chain is recorded with verify_ssl on and off, and with it on
// a chain that does not verify fails the attempt, saying why.
func TestTCPTLS(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ca := tlscerttest.NewCA(t, "Vantage Test CA")
	stranger := tlscerttest.NewCA(t, "Unknown CA")
	expiredAt := now.Add(-3*24*time.Hour + time.Hour)
	cases := []struct {
		name     string
		cert     tls.Certificate
		verified bool
		problem  string
		daysLeft int
	}{
		{"expiring in 10 days", ca.Issue(t, now.Add(-time.Hour), now.Add(10*24*time.Hour+time.Hour), "127.0.0.1"), true, "", 10},
		{"expired", ca.Issue(t, now.Add(-30*24*time.Hour), expiredAt, "127.0.0.1"), false,
			"expired on " + expiredAt.UTC().Format(time.DateOnly), -3},
		{"wrong host", ca.Issue(t, now.Add(-time.Hour), now.Add(60*24*time.Hour+time.Hour), "www.example.test"), false,
			"host mismatch for 127.0.0.1", 60},
		{"unknown CA", stranger.Issue(t, now.Add(-time.Hour), now.Add(20*24*time.Hour+time.Hour), "127.0.0.1"), false,
			"unknown authority", 20},
	}
	reply := assertion(check.TCPResponseData, "", check.Contains, "PONG PING")
	for _, tc := range cases {
		srv := newTLSEcho(t, tc.cert)
		for _, verify := range []bool{true, false} {
			name := tc.name + map[bool]string{true: ", verify_ssl on", false: ", verify_ssl off"}[verify]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				res := run(t, NewTCP(WithRootCAs(ca.Pool())), tcpTLSReq("127.0.0.1", srv.port, verify, reply), 5*time.Second)
				if verify && !tc.verified {
					wantFail(t, res, SourceTransport, TLSError)
					wantSummary(t, res, "TLS error: "+tc.problem, "certificate CN=")
				} else {
					wantPass(t, res)
					wantSummary(t, res, "TLS in")
					if res.Timings.TLS <= 0 {
						t.Errorf("TLS timing %s", res.Timings.TLS)
					}
				}
				c := res.TLS
				if c == nil {
					t.Fatal("no certificate chain recorded")
				}
				if c.Verified != tc.verified || c.Problem != tc.problem || c.Host != "127.0.0.1" {
					t.Errorf("chain verified %v, problem %q, host %q; want %v, %q", c.Verified, c.Problem, c.Host, tc.verified, tc.problem)
				}
				leaf := c.Leaf()
				if !leaf.NotAfter.Equal(tc.cert.Leaf.NotAfter) || leaf.SHA256 == "" || leaf.Subject != tc.cert.Leaf.Subject.String() {
					t.Errorf("leaf %+v does not describe the served %s", leaf, tc.cert.Leaf.Subject)
				}
				if d := leaf.DaysLeft(time.Now()); d != tc.daysLeft {
					t.Errorf("days left %d, want %d", d, tc.daysLeft)
				}
			})
		}
	}

	t.Run("the host name is the server name", func(t *testing.T) {
		t.Parallel()
		srv := newTLSEcho(t, ca.Issue(t, now.Add(-time.Hour), now.Add(30*24*time.Hour), "localhost"))
		res := run(t, NewTCP(WithRootCAs(ca.Pool())), tcpTLSReq("localhost", srv.port, true, reply), 5*time.Second)
		wantPass(t, res)
		if names := srv.serverNames(); len(names) != 1 || names[0] != "localhost" {
			t.Errorf("server names %q, want [localhost]", names)
		}
		if res.TLS == nil || !res.TLS.Verified || res.TLS.Host != "localhost" {
			t.Errorf("chain %+v", res.TLS)
		}
	})

	t.Run("a server that does not speak TLS", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = c.Write([]byte("220 plain text greeting\r\n"))
				c.Close()
			}
		}()
		res := run(t, NewTCP(), tcpTLSReq("127.0.0.1", ln.Addr().(*net.TCPAddr).Port, false), 5*time.Second)
		wantFail(t, res, SourceTransport, TLSError)
		wantSummary(t, res, "TLS handshake with")
		if res.TLS != nil {
			t.Errorf("chain %+v from a plain server", res.TLS)
		}
	})

	t.Run("without tcp_tls no handshake", func(t *testing.T) {
		t.Parallel()
		srv := newTLSEcho(t, ca.Issue(t, now.Add(-time.Hour), now.Add(30*24*time.Hour), "127.0.0.1"))
		res := run(t, NewTCP(WithTCPReadIdle(200*time.Millisecond)), tcpReq("127.0.0.1", srv.port, ""), 5*time.Second)
		wantPass(t, res)
		if res.TLS != nil || res.Timings.TLS != 0 {
			t.Errorf("chain %+v, TLS timing %s without tcp_tls", res.TLS, res.Timings.TLS)
		}
	})
}
