package check

import (
	"slices"
	"strings"
)

// DNSSpec is what a DNS check queries.
type DNSSpec struct {
	Domain     string  `json:"dns_domain" api:"required"`
	RecordType string  `json:"dns_record_type" api:"required"` // A, AAAA, CNAME, MX, NS, SOA or TXT
	Resolver   *string `json:"dns_resolver"`                   // "host:port" (IPv6 hosts in brackets) or a bare IP address (port 53); nil = the agent's default resolver
	Protocol   string  `json:"dns_protocol"`                   // UDP or TCP
}

// defaultDNS: dns_protocol UDP (api/openapi).
func defaultDNS() *DNSSpec { return &DNSSpec{Protocol: "UDP"} }

// exampleDNS is a DNS check's configuration for Example.
func exampleDNS() *DNSSpec {
	return &DNSSpec{Domain: "example.com", RecordType: "MX", Resolver: ptr("[2606:4700:4700::1111]:53"), Protocol: "TCP"}
}

func exampleDNSAssertions() []Assertion {
	return []Assertion{
		{Type: DNSResponseCode, Property: "status", Comparison: Equals, Expected: "NOERROR"},
		{Type: DNSTextAnswer, Property: "", Comparison: Contains, Expected: "mail.example.com"},
	}
}

func (s Spec) validateDNS(fe *FieldErrors) {
	d := s.DNS
	if d == nil || s.HTTP != nil || s.TCP != nil {
		fe.add("check_type", "a DNS check must have DNS settings only")
		return
	}
	if msg := hostnameProblem(d.Domain, false); msg != "" {
		fe.add("dns_domain", "%s", msg)
	}
	if !slices.Contains(DNSRecordTypes, d.RecordType) {
		fe.add("dns_record_type", "must be one of %s", strings.Join(DNSRecordTypes, ", "))
	}
	if d.Resolver != nil {
		if msg := resolverProblem(*d.Resolver); msg != "" {
			fe.add("dns_resolver", "%s", msg)
		}
	}
	if !slices.Contains(DNSProtocols, d.Protocol) {
		fe.add("dns_protocol", "must be UDP or TCP")
	}
}
