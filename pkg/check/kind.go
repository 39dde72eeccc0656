package check

// Kind is what a check probes. Its values are the API's check_type.
type Kind string

const (
	Uptime  Kind = "UPTIME"
	Browser Kind = "BROWSER"
	DNS     Kind = "DNS"
	TCP     Kind = "TCP"
)

// Kinds lists every kind.
var Kinds = []Kind{Uptime, Browser, DNS, TCP}

// PathSegment is the kind's segment in typed routes: /v1/checks/{uptime,browser,dns,tcp}.
func (k Kind) PathSegment() string {
	switch k {
	case Uptime:
		return "uptime"
	case Browser:
		return "browser"
	case DNS:
		return "dns"
	case TCP:
		return "tcp"
	}
	return ""
}
