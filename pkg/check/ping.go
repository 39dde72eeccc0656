package check

import "slices"

// PingSpec is what a ping check sends its ICMP echo requests to, and how it judges the replies
// (an extension: the public contract has no ping checks).
type PingSpec struct {
	Hostname string `json:"ping_hostname" api:"required"`
	Count    int    `json:"ping_count"`     // echo requests per attempt
	IPFamily string `json:"ping_ip_family"` // IPv4, IPv6 or Any
	// MaxLossPercent fails an attempt that loses more than this share of its requests; nil:
	// only an attempt with no reply at all fails.
	MaxLossPercent *int `json:"ping_max_loss_percent"`
	// MaxAvgRTTMs fails an attempt whose average round trip is longer; nil: no bound.
	MaxAvgRTTMs *int `json:"ping_max_avg_rtt_ms"`
}

// defaultPing: 3 echo requests over either family, no thresholds beyond "some reply".
func defaultPing() *PingSpec { return &PingSpec{Count: DefaultPingCount, IPFamily: IPFamilyAny} }

// examplePing is a ping check's configuration for Example.
func examplePing() *PingSpec {
	return &PingSpec{Hostname: "gateway.example.com", Count: 5, IPFamily: "IPv6", MaxLossPercent: ptr(20), MaxAvgRTTMs: ptr(150)}
}

func (s Spec) validatePing(fe *FieldErrors) {
	p := s.Ping
	if p == nil || s.onlyKindSpec() != 1 {
		fe.add("check_type", "a PING check must have ping settings only")
		return
	}
	if msg := hostnameProblem(p.Hostname, true); msg != "" {
		fe.add("ping_hostname", "%s", msg)
	}
	intRange(fe, "ping_count", p.Count, 1, MaxPingCount, "")
	if !slices.Contains(IPFamilies, p.IPFamily) {
		fe.add("ping_ip_family", "must be IPv4, IPv6 or Any")
	}
	if p.MaxLossPercent != nil {
		intRange(fe, "ping_max_loss_percent", *p.MaxLossPercent, 0, 100, " percent")
	}
	if p.MaxAvgRTTMs != nil {
		intRange(fe, "ping_max_avg_rtt_ms", *p.MaxAvgRTTMs, 1, MaxTimeoutMs, " milliseconds")
	}
}
