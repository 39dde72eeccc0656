package prober

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func dnsReq(resolver, domain, recordType, protocol string, as ...*vantagev1.Assertion) *vantagev1.CheckJob {
	spec := &vantagev1.DNSSpec{Domain: domain, RecordType: recordType, Protocol: protocol}
	if resolver != "" {
		spec.Resolver = &resolver
	}
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_DNS, Spec: &vantagev1.CheckJob_Dns{Dns: spec}, Assertions: as}
}

func TestDNSRecordTypes(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	p := NewDNS()
	cases := []struct {
		domain, rtype string
		want          []dnsRecord
	}{
		{"example.test", "A", []dnsRecord{
			{"example.test.", "A", 300, "192.0.2.1"}, {"example.test.", "A", 300, "192.0.2.2"}}},
		{"example.test", "AAAA", []dnsRecord{{"example.test.", "AAAA", 300, "2001:db8::1"}}},
		{"www.example.test", "CNAME", []dnsRecord{{"www.example.test.", "CNAME", 60, "example.test."}}},
		{"example.test", "MX", []dnsRecord{{"example.test.", "MX", 300, "10 mail.example.test."}}},
		{"example.test", "NS", []dnsRecord{{"example.test.", "NS", 300, "ns1.example.test."}}},
		{"example.test.", "SOA", []dnsRecord{{"example.test.", "SOA", 300,
			"ns1.example.test. hostmaster.example.test. 2024010101 7200 3600 1209600 300"}}},
		{"example.test", "TXT", []dnsRecord{{"example.test.", "TXT", 300, "v=spf1 -all"}}},
	}
	for _, proto := range []string{"UDP", "TCP"} {
		for _, tc := range cases {
			t.Run(proto+" "+tc.rtype, func(t *testing.T) {
				t.Parallel()
				res := run(t, p, dnsReq(srv.addr, tc.domain, tc.rtype, proto), 5*time.Second)
				wantPass(t, res)
				if res.DNSStatus != "NOERROR" || res.Resolver != srv.addr || res.Kind != check.DNS {
					t.Errorf("dns_status %q, resolver %q, kind %s", res.DNSStatus, res.Resolver, res.Kind)
				}
				var got []dnsRecord
				if err := json.Unmarshal([]byte(res.ParsedResponse), &got); err != nil {
					t.Fatalf("parsed_response %q: %v", res.ParsedResponse, err)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("parsed_response = %+v, want %+v", got, tc.want)
				}
				lines := strings.Split(res.ResponseBody, "\n")
				if len(lines) != len(tc.want) || !strings.Contains(lines[0], "\tIN\t"+tc.rtype+"\t") {
					t.Errorf("response body = %q, want %d zone-file lines", res.ResponseBody, len(tc.want))
				}
				if res.BodyAvailability != BodyAvailable || res.ResponseTime <= 0 || res.Timings.Total != res.ResponseTime {
					t.Errorf("body %s, response time %s, timings %+v", res.BodyAvailability, res.ResponseTime, res.Timings)
				}
				wantSummary(t, res, "NOERROR", srv.addr)
			})
		}
	}
	t.Run("empty answer passes", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "www.example.test", "A", ""), 5*time.Second)
		// The zone has only a CNAME for www; this server does not chase it.
		wantPass(t, res)
		if res.ParsedResponse != "[]" || res.ResponseBody != "" {
			t.Errorf("parsed_response %q, body %q", res.ParsedResponse, res.ResponseBody)
		}
	})
}

func TestDNSProtocol(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	p := NewDNS()
	for proto, want := range map[string]string{"": "udp", "UDP": "udp", "TCP": "tcp", "tcp": "tcp"} {
		t.Run("protocol "+proto, func(t *testing.T) {
			t.Parallel()
			res := run(t, p, dnsReq(srv.addr, "proto.test", "TXT", proto,
				assertion(check.DNSJSONAnswer, "$[0].data", check.Equals, want)), 5*time.Second)
			wantPass(t, res)
		})
	}
	t.Run("truncated over UDP asks again over TCP", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "big.test", "TXT", "UDP",
			assertion(check.DNSJSONAnswer, "$[39].data", check.Contains, "999")), 5*time.Second)
		wantPass(t, res)
		wantSummary(t, res, "40 answers", "asked again over TCP")
		q := srv.queries()
		if !slices.Contains(q, "udp big.test. TXT") || !slices.Contains(q, "tcp big.test. TXT") {
			t.Errorf("queries seen = %v, want big.test over UDP then TCP", q)
		}
	})
}

func TestDNSResponseCodes(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	p := NewDNS()
	t.Run("NXDOMAIN fails without an rcode assertion", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "missing.test", "A", "UDP"), 5*time.Second)
		wantFail(t, res, SourceAssertion, DNSRcode)
		wantSummary(t, res, "NXDOMAIN for missing.test A")
		if res.DNSStatus != "NXDOMAIN" || res.ParsedResponse != "[]" || res.BodyAvailability != BodyAvailable {
			t.Errorf("dns_status %q, parsed_response %q, body %s", res.DNSStatus, res.ParsedResponse, res.BodyAvailability)
		}
	})
	t.Run("NXDOMAIN fails also with other assertions", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "missing.test", "A", "UDP", assertion(check.DNSTextAnswer, "", check.Empty, "")), 5*time.Second)
		wantFail(t, res, SourceAssertion, DNSRcode)
	})
	t.Run("NXDOMAIN expected passes", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "missing.test", "A", "TCP",
			assertion(check.DNSResponseCode, "status", check.Equals, "NXDOMAIN")), 5*time.Second)
		wantPass(t, res)
	})
	t.Run("SERVFAIL judged by an rcode assertion", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, dnsReq(srv.addr, "servfail.test", "A", "UDP",
			assertion(check.DNSResponseCode, "status", check.Equals, "NOERROR")), 5*time.Second)
		wantFail(t, res, SourceAssertion, AssertionFailed)
		wantSummary(t, res, `response code: expected EQUALS "NOERROR", got "SERVFAIL"`)
		if res.DNSStatus != "SERVFAIL" {
			t.Errorf("dns_status = %q", res.DNSStatus)
		}
	})
}

func TestDNSAssertions(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	p := NewDNS()
	res := run(t, p, dnsReq(srv.addr, "example.test", "A", "UDP",
		assertion(check.DNSResponseCode, "status", check.Equals, "NOERROR"),
		assertion(check.DNSTextAnswer, "", check.Contains, "192.0.2.2"),
		assertion(check.DNSJSONAnswer, "$[*].data", check.Equals, "192.0.2.1"),
		assertion(check.DNSJSONAnswer, "$[0].ttl", check.GreaterThan, "60"),
		assertion(check.DNSJSONAnswer, "$[2]", check.Null, ""),
	), 5*time.Second)
	wantPass(t, res)
	if len(res.Assertions) != 5 {
		t.Errorf("%d outcomes", len(res.Assertions))
	}

	res = run(t, p, dnsReq(srv.addr, "example.test", "MX", "UDP",
		assertion(check.DNSJSONAnswer, "$[0].data", check.Equals, "20 mail.example.test."),
		assertion(check.DNSTextAnswer, "", check.NotContains, "mail"),
	), 5*time.Second)
	wantFail(t, res, SourceAssertion, AssertionFailed)
	wantSummary(t, res, `answer $[0].data: expected EQUALS "20 mail.example.test.", got "10 mail.example.test." (and 1 more)`)
}

func TestDNSBadResolver(t *testing.T) {
	t.Parallel()
	p := NewDNS()
	t.Run("refused over TCP", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		res := run(t, p, dnsReq(addr, "example.test", "A", "TCP"), 5*time.Second)
		wantFail(t, res, SourceTransport, ConnectionRefused)
		if res.Resolver != addr || res.DNSStatus != "" || res.BodyAvailability != BodyNotRecorded {
			t.Errorf("resolver %q, dns_status %q, body %s", res.Resolver, res.DNSStatus, res.BodyAvailability)
		}
	})
	t.Run("closed UDP port", func(t *testing.T) {
		t.Parallel()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		res := run(t, p, dnsReq(addr, "example.test", "A", "UDP"), time.Second)
		// ICMP port unreachable reaches the socket as "connection refused" where the stack
		// reports it; otherwise the query times out. Both are transport failures.
		if res.FailureType != ConnectionRefused && res.FailureType != Timeout {
			t.Errorf("failure %s/%s: %s", res.FailureSource, res.FailureType, res.ResultSummary)
		}
		wantFail(t, res, SourceTransport, res.FailureType)
	})
	t.Run("silent resolver times out", func(t *testing.T) {
		t.Parallel()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		start := time.Now()
		res := run(t, p, dnsReq(pc.LocalAddr().String(), "example.test", "A", "UDP"), 400*time.Millisecond)
		wantFail(t, res, SourceTransport, Timeout)
		wantSummary(t, res, "timed out after", pc.LocalAddr().String())
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %s for a 400ms deadline", took)
		}
	})
	t.Run("resolver name that does not resolve", func(t *testing.T) {
		t.Parallel()
		srv := startDNS(t)
		res := run(t, NewDNS(WithResolver(srv.resolver())), dnsReq("nowhere.test:53", "example.test", "A", "UDP"), 5*time.Second)
		wantFail(t, res, SourceTransport, DNSError)
	})
	t.Run("resolver name that resolves", func(t *testing.T) {
		t.Parallel()
		srv := startDNS(t)
		_, port, _ := net.SplitHostPort(srv.addr)
		res := run(t, NewDNS(WithResolver(srv.resolver())), dnsReq("loop.test:"+port, "example.test", "A", "UDP"), 5*time.Second)
		wantPass(t, res)
		if res.Resolver != "loop.test:"+port {
			t.Errorf("resolver = %q", res.Resolver)
		}
	})
	for name, resolver := range map[string]string{"garbage": "not a resolver", "port": "127.0.0.1:99999", "brackets": "[::1:53"} {
		t.Run("invalid "+name, func(t *testing.T) {
			t.Parallel()
			wantFail(t, run(t, p, dnsReq(resolver, "example.test", "A", "UDP"), time.Second), SourceTransport, InvalidRequest)
		})
	}
}

func TestDNSIPv6Resolver(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	// Put an IPv6 UDP front on the same handler: a real server on [::1].
	pc, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Fatalf("no IPv6 loopback: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	go relayUDP(pc, srv.addr)
	res := run(t, NewDNS(), dnsReq(pc.LocalAddr().String(), "example.test", "AAAA", "UDP"), 5*time.Second)
	wantPass(t, res)
	if !strings.HasPrefix(res.Resolver, "[::1]:") {
		t.Errorf("resolver = %q", res.Resolver)
	}
}

// relayUDP forwards each datagram on pc to upstream and the reply back, until pc is closed.
func relayUDP(pc net.PacketConn, upstream string) {
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		c, err := net.Dial("udp", upstream)
		if err != nil {
			return
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(buf[:n]); err == nil {
			reply := make([]byte, 65535)
			if m, err := c.Read(reply); err == nil {
				_, _ = pc.WriteTo(reply[:m], from)
			}
		}
		c.Close()
	}
}

func TestDNSPrivateResolver(t *testing.T) {
	t.Parallel()
	srv := startDNS(t)
	res := run(t, NewDNS(WithPrivateTargets(false)), dnsReq(srv.addr, "example.test", "A", "UDP"), 5*time.Second)
	wantFail(t, res, SourceTransport, ForbiddenTarget)

	// The system's resolvers are the operator's own: never refused.
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte("nameserver 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = run(t, NewDNS(WithPrivateTargets(false), WithResolvConf(conf)), dnsReq("", "example.test", "A", "UDP"), 500*time.Millisecond)
	if res.FailureType == ForbiddenTarget || res.Resolver != "127.0.0.1:53" {
		t.Errorf("system resolver: resolver %q, failure %s: %s", res.Resolver, res.FailureType, res.ResultSummary)
	}
}

func TestDNSInvalidRequest(t *testing.T) {
	t.Parallel()
	p := NewDNS()
	for name, req := range map[string]*vantagev1.CheckJob{
		"record type":  dnsReq("127.0.0.1:53", "example.test", "PTR", "UDP"),
		"empty domain": dnsReq("127.0.0.1:53", "", "A", "UDP"),
		"bad domain":   dnsReq("127.0.0.1:53", "a..b", "A", "UDP"),
		"protocol":     dnsReq("127.0.0.1:53", "example.test", "A", "QUIC"),
		"assertion":    dnsReq("127.0.0.1:53", "example.test", "A", "UDP", assertion(check.TextBody, "", check.Empty, "")),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wantFail(t, run(t, p, req, time.Second), SourceTransport, InvalidRequest)
		})
	}
}

func TestParseResolver(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"192.0.2.53:5353":     "192.0.2.53:5353",
		" 192.0.2.53:53 ":     "192.0.2.53:53",
		"192.0.2.53":          "192.0.2.53:53",
		"[2001:db8::53]:5353": "[2001:db8::53]:5353",
		"[2001:db8::53]":      "[2001:db8::53]:53",
		"2001:db8::53":        "[2001:db8::53]:53",
		"dns.example:853":     "dns.example:853",
		"dns.example":         "dns.example:53",
		"":                    "",
		"host:0":              "",
		"host:http":           "",
		"a b:53":              "",
		"[zz::1]":             "",
		"2001:db8::53:x:y":    "",
	} {
		got, err := parseResolver(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("parseResolver(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSystemResolvers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(conf, []byte("# comment\nsearch example\nnameserver 192.0.2.53\nnameserver 2001:db8::53\noptions ndots:2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := systemResolvers(conf)
	if err != nil || !slices.Equal(got, []string{"192.0.2.53:53", "[2001:db8::53]:53"}) {
		t.Errorf("systemResolvers = %v, %v", got, err)
	}
	if _, err := systemResolvers(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file gives no error")
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("search example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := systemResolvers(empty); err == nil {
		t.Error("a file without nameservers gives no error")
	}
	res := run(t, NewDNS(WithResolvConf(empty)), dnsReq("", "example.test", "A", "UDP"), time.Second)
	wantFail(t, res, SourceTransport, DNSError)
	wantSummary(t, res, "no system resolver")
}
