package check

import "slices"

// TCPSpec is what a TCP check connects to.
type TCPSpec struct {
	Hostname   string  `json:"tcp_hostname" api:"required"`
	Port       int     `json:"tcp_port" api:"required"`
	IPFamily   string  `json:"tcp_ip_family"`   // IPv4, IPv6 or Any (an extension)
	Data       *string `json:"tcp_data"`        // sent right after connecting; nil = nothing
	ShouldFail bool    `json:"tcp_should_fail"` // a failed connection counts as passing
	// TLS makes the agent do a TLS handshake after connecting (an extension), sending
	// Hostname as the server name; the data, if any, then travels inside TLS.
	TLS bool `json:"tcp_tls"`
	// VerifySSL fails the attempt when the served chain does not verify for Hostname; only
	// read with TLS (an extension, named as the other kinds name it).
	VerifySSL bool `json:"verify_ssl"`
	// CertificateExpiryAlertDays: as HTTPSpec's, for the certificate a TLS connection sees.
	CertificateExpiryAlertDays []int `json:"certificate_expiry_alert_days" job:"-"`
}

// IPFamilyAny is the tcp_ip_family extension value real clients send by default: connect over
// whichever family answers first, IPv6 and IPv4 raced as happy eyeballs (RFC 8305) does.
const IPFamilyAny = "Any"

// defaultTCP: tcp_ip_family IPv4, tcp_should_fail false (api/openapi); the extensions
// tcp_tls false, verify_ssl true (as HTTP's) and the expiry alerts' default days.
func defaultTCP() *TCPSpec {
	return &TCPSpec{IPFamily: "IPv4", VerifySSL: true, CertificateExpiryAlertDays: DefaultCertificateExpiryAlertDays()}
}

// exampleTCP is a TCP check's configuration for Example.
func exampleTCP() *TCPSpec {
	return &TCPSpec{Hostname: "db.example.com", Port: 5432, IPFamily: "IPv6", Data: ptr("PING\r\n"), ShouldFail: true,
		TLS: true, VerifySSL: false, CertificateExpiryAlertDays: []int{21}}
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
	validateCertificateExpiryAlertDays(fe, t.CertificateExpiryAlertDays)
}
