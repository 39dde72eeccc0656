package prober

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// run probes job with p under a deadline of timeout, as the worker does, and fails the test if
// the prober reports an agent-side error.
func run(t *testing.T, p Prober, job *vantagev1.CheckJob, timeout time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	res, err := p.Probe(ctx, job)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return res
}

// wantPass fails the test unless res passed cleanly.
func wantPass(t *testing.T, res Result) {
	t.Helper()
	if !res.Passing || res.FailureSource != "" || res.FailureType != "" {
		t.Fatalf("want a pass, got passing=%v %s/%s: %s", res.Passing, res.FailureSource, res.FailureType, res.ResultSummary)
	}
	for _, o := range res.Assertions {
		if !o.Passed {
			t.Errorf("assertion failed in a passing result: %s", o.Message)
		}
	}
}

// wantFail fails the test unless res failed with source and failure type.
func wantFail(t *testing.T, res Result, source, failureType string) {
	t.Helper()
	if res.Passing || res.FailureSource != source || res.FailureType != failureType {
		t.Fatalf("want %s/%s, got passing=%v %s/%s: %s", source, failureType, res.Passing, res.FailureSource, res.FailureType, res.ResultSummary)
	}
	if res.ResultSummary == "" {
		t.Error("a failure without a summary")
	}
}

func wantSummary(t *testing.T, res Result, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(res.ResultSummary, p) {
			t.Errorf("summary %q does not contain %q", res.ResultSummary, p)
		}
	}
}

func assertion(typ, property, comparison, expected string) *vantagev1.Assertion {
	return &vantagev1.Assertion{Type: typ, Property: property, Comparison: comparison, Expected: expected}
}

func ptr[T any](v T) *T { return &v }

// closedPort returns a loopback address on which nothing listens.
func closedPort(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return "127.0.0.1", port
}

// selfSignedCert makes a certificate for 127.0.0.1 valid between notBefore and notAfter.
func selfSignedCert(t *testing.T, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "vantage test"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// testZone is what the in-test DNS server answers, by name and type.
var testZone = map[string]map[uint16][]string{
	"example.test.": {
		dns.TypeA:    {"example.test. 300 IN A 192.0.2.1", "example.test. 300 IN A 192.0.2.2"},
		dns.TypeAAAA: {"example.test. 300 IN AAAA 2001:db8::1"},
		dns.TypeMX:   {"example.test. 300 IN MX 10 mail.example.test."},
		dns.TypeNS:   {"example.test. 300 IN NS ns1.example.test."},
		dns.TypeSOA:  {"example.test. 300 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 7200 3600 1209600 300"},
		dns.TypeTXT:  {`example.test. 300 IN TXT "v=spf1 " "-all"`},
	},
	"www.example.test.": {
		dns.TypeCNAME: {"www.example.test. 60 IN CNAME example.test."},
	},
	"loop.test.":    {dns.TypeA: {"loop.test. 60 IN A 127.0.0.1"}},
	"v6only.test.":  {dns.TypeAAAA: {"v6only.test. 60 IN AAAA ::1"}},
	"dual.test.":    {dns.TypeA: {"dual.test. 60 IN A 127.0.0.1"}, dns.TypeAAAA: {"dual.test. 60 IN AAAA ::1"}},
	"private.test.": {dns.TypeA: {"private.test. 60 IN A 10.1.2.3"}},
}

// dnsServer is a real DNS server on 127.0.0.1 serving testZone over UDP and TCP on one port.
// Special names: servfail.test (SERVFAIL), proto.test TXT (answers "udp" or "tcp": the
// protocol that carried the query), big.test TXT (truncated over UDP, whole over TCP). Any
// other name is NXDOMAIN.
type dnsServer struct {
	addr string // 127.0.0.1:port, both protocols
	mu   sync.Mutex
	seen []string // "network qname qtype" of every query
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	s := &dnsServer{}
	h := dns.HandlerFunc(s.serve)
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil { // the TCP port is taken: try another pair
			pc.Close()
			lastErr = err
			continue
		}
		udp := &dns.Server{PacketConn: pc, Handler: h}
		tcp := &dns.Server{Listener: l, Handler: h}
		go func() { _ = udp.ActivateAndServe() }()
		go func() { _ = tcp.ActivateAndServe() }()
		t.Cleanup(func() { _ = udp.Shutdown(); _ = tcp.Shutdown() })
		s.addr = l.Addr().String()
		return s
	}
	t.Fatalf("no port free for both UDP and TCP: %v", lastErr)
	return nil
}

func (s *dnsServer) serve(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	q := r.Question[0]
	network := w.RemoteAddr().Network()
	s.mu.Lock()
	s.seen = append(s.seen, network+" "+q.Name+" "+dns.TypeToString[q.Qtype])
	s.mu.Unlock()
	switch q.Name {
	case "servfail.test.":
		m.Rcode = dns.RcodeServerFailure
	case "proto.test.":
		m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 1}, Txt: []string{network}})
	case "big.test.":
		if network == "udp" {
			m.Truncated = true
			break
		}
		for i := range 40 {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 1},
				Txt: []string{strings.Repeat(strconv.Itoa(i%10), 100)}})
		}
	default:
		types, ok := testZone[q.Name]
		if !ok {
			m.Rcode = dns.RcodeNameError
			break
		}
		for _, line := range types[q.Qtype] {
			rr, err := dns.NewRR(line)
			if err != nil {
				panic(err)
			}
			m.Answer = append(m.Answer, rr)
		}
	}
	_ = w.WriteMsg(m)
}

func (s *dnsServer) queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// resolver is a Go resolver that asks only this server, for HTTP and TCP probes of test names.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.addr)
		},
	}
}
