package prober

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// DNS probes DNS checks: one query, recursion desired, EDNS0 with a 1232-byte UDP size, to
// the check's resolver or, when it names none, to the system's resolvers from resolv.conf
// (tried in order until one answers). Over UDP a truncated answer is asked again over TCP,
// as a stub resolver does.
//
// The result carries dns_status (the rcode name), resolver (the address that answered, or was
// last tried), parsed_response (the answer section as a JSON array of {name, type, ttl, data};
// data is the record's zone-file rdata, except TXT whose strings are concatenated) and, as the
// response body, the answer section in zone-file form.
//
// Verdict: no answer (timeout, refused, malformed) is a TRANSPORT failure. An rcode other than
// NOERROR fails with ASSERTION / DNS_RCODE — unless the check has a DNS_RESPONSE_CODE
// assertion, which then judges the rcode alone (so a check can expect NXDOMAIN). A failed
// assertion fails with ASSERTION / ASSERTION_FAILED. An empty NOERROR answer passes unless
// an assertion says otherwise.
//
// A resolver named by the check is subject to WithPrivateTargets; the system's are not.
type DNS struct {
	opts options
}

var _ Prober = (*DNS)(nil)

// NewDNS returns the DNS prober.
func NewDNS(opts ...Option) *DNS { return &DNS{opts: newOptions(opts)} }

// dnsTypes are the record types a DNS check may ask for.
var dnsTypes = map[string]uint16{
	"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME, "MX": dns.TypeMX,
	"NS": dns.TypeNS, "SOA": dns.TypeSOA, "TXT": dns.TypeTXT,
}

// dnsRecord is one answer in parsed_response.
type dnsRecord struct {
	Name string `json:"name"`
	Type string `json:"type"`
	TTL  uint32 `json:"ttl"`
	Data string `json:"data"`
}

// Probe runs one DNS attempt; see DNS.
func (p *DNS) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.DNS}
	assertions := check.AssertionsOfJob(job.GetAssertions())
	compiled, err := assert.CompileAll(check.DNS, assertions)
	if err != nil {
		res.failTransport(InvalidRequest, "invalid assertion: "+err.Error())
		res.finish(job, nil)
		return res, nil
	}
	spec := job.GetDns()
	msg, network, err := dnsQuery(spec)
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}
	servers, custom, err := p.resolvers(spec.GetResolver())
	if err != nil {
		ft := InvalidRequest
		if !custom {
			ft = DNSError // the agent's own resolver configuration is unusable
		}
		res.failTransport(ft, err.Error())
		res.finish(job, nil)
		return res, nil
	}

	client := &dns.Client{Net: network, Dialer: p.opts.dialer(custom)}
	deadline, hasDeadline := ctx.Deadline()
	start := time.Now()
	var resp *dns.Msg
	retried := false
	for i, server := range servers {
		res.Resolver = server
		if hasDeadline {
			// Share what is left among the servers still to try; without it the library would
			// cut reads at its own 2s default.
			client.Timeout = time.Until(deadline) / time.Duration(len(servers)-i)
		}
		resp, _, err = client.ExchangeContext(ctx, msg, server)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if hasDeadline {
		client.Timeout = time.Until(deadline)
	}
	if err == nil && resp.Truncated && network == "udp" {
		tcp := *client
		tcp.Net = "tcp"
		resp, _, err = tcp.ExchangeContext(ctx, msg, res.Resolver)
		retried = true
	}
	res.ResponseTime = time.Since(start)
	res.Timings.Total = res.ResponseTime
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		ft := classifyDNS(ctx, err)
		summary := describe(ft, err)
		if ft == Timeout {
			summary = fmt.Sprintf("timed out after %s waiting for %s", millis(res.ResponseTime), res.Resolver)
		}
		res.failTransport(ft, summary)
		res.finish(job, nil)
		return res, nil
	}

	records, lines := answers(resp.Answer)
	parsed, err := json.Marshal(records)
	if err != nil { // plain strings and numbers: cannot happen
		return Result{}, fmt.Errorf("encode DNS answer: %w", err)
	}
	res.DNSStatus = rcodeName(resp.Rcode)
	res.ParsedResponse = string(parsed)
	outcomes := assert.EvaluateAll(compiled, assert.DNSObservation{
		Rcode:          res.DNSStatus,
		Answers:        lines,
		ParsedResponse: res.ParsedResponse,
		ResponseTime:   res.ResponseTime,
	})
	res.Assertions = outcomes
	judgesRcode := false
	for _, a := range assertions {
		judgesRcode = judgesRcode || a.Type == check.DNSResponseCode
	}
	switch {
	case resp.Rcode != dns.RcodeSuccess && !judgesRcode:
		res.failAssertion(DNSRcode, fmt.Sprintf("%s for %s %s from %s", res.DNSStatus, spec.GetDomain(), strings.ToUpper(spec.GetRecordType()), res.Resolver))
	case !assert.AllPassed(outcomes):
		res.failAssertion(AssertionFailed, assertionSummary(outcomes))
	default:
		s := fmt.Sprintf("%s, %d %s in %s from %s", res.DNSStatus, len(records), plural(len(records), "answer"), millis(res.ResponseTime), res.Resolver)
		if retried {
			s += " (truncated over UDP, asked again over TCP)"
		}
		res.pass(s)
	}
	res.finish(job, []byte(strings.Join(lines, "\n")))
	return res, nil
}

// dnsQuery builds the query message of spec and picks the network.
func dnsQuery(spec *vantagev1.DNSSpec) (*dns.Msg, string, error) {
	qtype, ok := dnsTypes[strings.ToUpper(spec.GetRecordType())]
	if !ok {
		return nil, "", fmt.Errorf("record type %q is not one of A, AAAA, CNAME, MX, NS, SOA, TXT", spec.GetRecordType())
	}
	domain := strings.TrimSpace(spec.GetDomain())
	if _, ok := dns.IsDomainName(domain); !ok || domain == "" {
		return nil, "", fmt.Errorf("%q is not a domain name", spec.GetDomain())
	}
	var network string
	switch strings.ToUpper(spec.GetProtocol()) {
	case "", "UDP":
		network = "udp"
	case "TCP":
		network = "tcp"
	default:
		return nil, "", fmt.Errorf("protocol %q is not UDP or TCP", spec.GetProtocol())
	}
	msg := new(dns.Msg)
	msg.SetQuestion(dns.Fqdn(domain), qtype)
	msg.RecursionDesired = true
	msg.SetEdns0(1232, false)
	return msg, network, nil
}

// resolvers returns the addresses to ask: the check's resolver (custom true) or the system's.
func (p *DNS) resolvers(resolver string) (servers []string, custom bool, err error) {
	if strings.TrimSpace(resolver) != "" {
		addr, err := parseResolver(resolver)
		if err != nil {
			return nil, true, err
		}
		return []string{addr}, true, nil
	}
	servers, err = systemResolvers(p.opts.resolvConf)
	return servers, false, err
}

// parseResolver normalizes a check's resolver to host:port: "host:port", "[v6]:port", and,
// leniently, a host or address without a port (port 53).
func parseResolver(s string) (string, error) {
	s = strings.TrimSpace(s)
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if strings.HasPrefix(s, "[") != strings.HasSuffix(s, "]") {
			return "", fmt.Errorf("resolver %q is not host:port", s)
		}
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "53"
		if strings.Contains(host, ":") {
			if _, perr := netip.ParseAddr(host); perr != nil {
				return "", fmt.Errorf("resolver %q is not host:port", s)
			}
		}
	}
	if host == "" || strings.ContainsAny(host, "[]/ \t") {
		return "", fmt.Errorf("resolver %q is not host:port", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("resolver %q has an invalid port", s)
	}
	return net.JoinHostPort(host, port), nil
}

// systemResolvers reads the name servers of a resolv.conf file.
func systemResolvers(path string) ([]string, error) {
	conf, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("no system resolver: %w", err)
	}
	if len(conf.Servers) == 0 {
		return nil, fmt.Errorf("no system resolver: %s names no nameserver", path)
	}
	out := make([]string, len(conf.Servers))
	for i, s := range conf.Servers {
		out[i] = net.JoinHostPort(s, conf.Port)
	}
	return out, nil
}

// answers renders the answer section as parsed_response records and zone-file lines.
func answers(rrs []dns.RR) ([]dnsRecord, []string) {
	records := make([]dnsRecord, 0, len(rrs))
	lines := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		h := rr.Header()
		records = append(records, dnsRecord{
			Name: h.Name,
			Type: typeName(h.Rrtype),
			TTL:  h.Ttl,
			Data: rdata(rr),
		})
		lines = append(lines, rr.String())
	}
	return records, lines
}

// rdata is a record's data in zone-file form; TXT strings are joined into one value, as SPF
// and DKIM readers do.
func rdata(rr dns.RR) string {
	if t, ok := rr.(*dns.TXT); ok {
		return strings.Join(t.Txt, "")
	}
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

func typeName(t uint16) string {
	if s, ok := dns.TypeToString[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

func rcodeName(rcode int) string {
	if s, ok := dns.RcodeToString[rcode]; ok {
		return s
	}
	return "RCODE" + strconv.Itoa(rcode)
}

// classifyDNS is classify plus the DNS library's own errors about malformed messages.
func classifyDNS(ctx context.Context, err error) string {
	var de *dns.Error
	if errors.Is(err, dns.ErrId) || errors.Is(err, dns.ErrShortRead) || errors.Is(err, dns.ErrBuf) || errors.As(err, &de) {
		return InvalidResponse
	}
	return classify(ctx, err)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
