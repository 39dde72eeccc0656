package e2e

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// httpTarget is an HTTP server whose health the test flips: 200 "ok" while healthy, 500
// otherwise.
type httpTarget struct {
	URL      string
	healthy  atomic.Bool
	requests atomic.Int64
}

func newHTTPTarget(t *testing.T, healthy bool) *httpTarget {
	t.Helper()
	h := &httpTarget{}
	h.healthy.Store(healthy)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		if !h.healthy.Load() {
			http.Error(w, "unhealthy", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/health"
	return h
}

// The DNS test zone. Every record type a DNS check can ask for exists at these names; any
// other name in or out of the zone is NXDOMAIN.
const (
	zoneApex = "e2e-zone.test."
	zoneWWW  = "www.e2e-zone.test."
)

// zoneRecords are the zone's records in zone-file form.
var zoneRecords = []string{
	zoneApex + " 300 IN A 192.0.2.10",
	zoneApex + " 300 IN AAAA 2001:db8::10",
	zoneWWW + " 300 IN CNAME edge.e2e-zone.test.",
	zoneApex + " 300 IN MX 10 mail.e2e-zone.test.",
	zoneApex + " 300 IN NS ns1.e2e-zone.test.",
	zoneApex + " 300 IN SOA ns1.e2e-zone.test. hostmaster.e2e-zone.test. 2024010101 3600 600 86400 300",
	zoneApex + ` 300 IN TXT "v=vantage-e2e" "token=42"`,
}

// dnsServer is an authoritative DNS server for the test zone on 127.0.0.1 (UDP).
type dnsServer struct {
	Addr    string
	mu      sync.Mutex
	queries int
	rrs     map[string]map[uint16][]dns.RR // name → type → records
	soa     dns.RR
}

func newDNSServer(t *testing.T) *dnsServer {
	t.Helper()
	d := &dnsServer{rrs: map[string]map[uint16][]dns.RR{}}
	for _, s := range zoneRecords {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatalf("zone record %q: %v", s, err)
		}
		h := rr.Header()
		if d.rrs[h.Name] == nil {
			d.rrs[h.Name] = map[uint16][]dns.RR{}
		}
		d.rrs[h.Name][h.Rrtype] = append(d.rrs[h.Name][h.Rrtype], rr)
		if h.Rrtype == dns.TypeSOA {
			d.soa = rr
		}
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dns listen: %v", err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: d, NotifyStartedFunc: func() { close(started) }}
	served := make(chan error, 1)
	go func() { served <- srv.ActivateAndServe() }()
	select {
	case <-started:
	case err := <-served:
		t.Fatalf("dns server: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("dns server did not start within 10s")
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	d.Addr = pc.LocalAddr().String()
	return d
}

// Queries is how many queries the server has answered.
func (d *dnsServer) Queries() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries
}

// ServeDNS answers from the zone: the records of the asked name and type (NOERROR, maybe
// empty) for a name that exists, NXDOMAIN with the SOA for any other.
func (d *dnsServer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	d.mu.Lock()
	d.queries++
	d.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	types, ok := d.rrs[strings.ToLower(q.Name)]
	if !ok {
		m.Rcode = dns.RcodeNameError
		m.Ns = []dns.RR{d.soa}
	} else {
		m.Answer = types[q.Qtype]
	}
	_ = w.WriteMsg(m)
}

// echoServer is a TCP server on 127.0.0.1 that reads one line and answers "ECHO <line>", then
// closes the connection.
type echoServer struct {
	Port int
	ln   net.Listener
	once sync.Once
}

func newEchoServer(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("echo listen: %v", err)
	}
	e := &echoServer{ln: ln, Port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
				line, err := bufio.NewReader(conn).ReadString('\n')
				if err != nil {
					return
				}
				_, _ = conn.Write([]byte("ECHO " + line))
			}()
		}
	}()
	t.Cleanup(e.close)
	return e
}

// close stops listening: connections to the port are refused from now on.
func (e *echoServer) close() { e.once.Do(func() { _ = e.ln.Close() }) }

// closedPort is a TCP port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}
