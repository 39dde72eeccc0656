package check

import "slices"

// TCPSpec is what a TCP check connects to.
type TCPSpec struct {
	Hostname   string  `json:"tcp_hostname" api:"required"`
	Port       int     `json:"tcp_port" api:"required"`
	IPFamily   string  `json:"tcp_ip_family"`   // IPv4, IPv6 or Any (an extension)
	Data       *string `json:"tcp_data"`        // sent right after connecting; nil = nothing
	ShouldFail bool    `json:"tcp_should_fail"` // a failed connection counts as passing
}

// IPFamilyAny is the tcp_ip_family extension value real clients send by default: connect over
// whichever family answers first, IPv6 and IPv4 raced as happy eyeballs (RFC 8305) does.
const IPFamilyAny = "Any"

// defaultTCP: tcp_ip_family IPv4, tcp_should_fail false (api/openapi).
func defaultTCP() *TCPSpec { return &TCPSpec{IPFamily: "IPv4"} }

// exampleTCP is a TCP check's configuration for Example.
func exampleTCP() *TCPSpec {
	return &TCPSpec{Hostname: "db.example.com", Port: 5432, IPFamily: "IPv6", Data: ptr("PING\r\n"), ShouldFail: true}
}

func exampleTCPAssertions() []Assertion {
	return []Assertion{
		{Type: TCPResponseTime, Property: "responseTime", Comparison: LessThan, Expected: "200"},
		{Type: TCPResponseData, Property: "", Comparison: Contains, Expected: "PONG"},
	}
}

func (s Spec) validateTCP(fe *FieldErrors) {
	t := s.TCP
	if t == nil || s.HTTP != nil || s.DNS != nil {
		fe.add("check_type", "a TCP check must have TCP settings only")
		return
	}
	if msg := hostnameProblem(t.Hostname, true); msg != "" {
		fe.add("tcp_hostname", "%s", msg)
	}
	intRange(fe, "tcp_port", t.Port, 1, 65535, "")
	if !slices.Contains(IPFamilies, t.IPFamily) {
		fe.add("tcp_ip_family", "must be IPv4, IPv6 or Any")
	}
	maxLen(fe, "tcp_data", t.Data, MaxTCPDataLength)
}
