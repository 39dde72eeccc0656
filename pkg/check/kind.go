package check

// Kind is what a check probes. Its values are the API's check_type.
type Kind string

// The check kinds, as the public API contract (api/openapi) names them.
const (
	Uptime  Kind = "UPTIME"
	Browser Kind = "BROWSER"
	DNS     Kind = "DNS"
	TCP     Kind = "TCP"
	// Extensions: the public contract has no such kinds.
	// Multistep is a Playwright Test file of HTTP calls, run without a browser.
	Multistep Kind = "MULTISTEP"
	Ping      Kind = "PING"
	GRPC      Kind = "GRPC"
	WebSocket Kind = "WEBSOCKET"
)

// Kinds lists every kind.
var Kinds = []Kind{Uptime, Browser, DNS, TCP, Multistep, Ping, GRPC, WebSocket}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	switch k {
	case Uptime, Browser, DNS, TCP, Multistep, Ping, GRPC, WebSocket:
		return true
	}
	return false
}

// PathSegment is the kind's segment in typed routes:
// /v1/checks/{uptime,browser,dns,tcp,multistep,ping,grpc,websocket}.
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
	case Multistep:
		return "multistep"
	case Ping:
		return "ping"
	case GRPC:
		return "grpc"
	case WebSocket:
		return "websocket"
	}
	return ""
}

// TypeName is the kind as request bodies name it in their `type` field: UPTIME_CHECK,
// BROWSER_CHECK, DNS_CHECK or TCP_CHECK.
func (k Kind) TypeName() string { return string(k) + "_CHECK" }

// KindOfType is the inverse of TypeName.
func KindOfType(typeName string) (Kind, bool) {
	for _, k := range Kinds {
		if k.TypeName() == typeName {
			return k, true
		}
	}
	return "", false
}

// IsHTTP reports whether the kind is configured by an HTTPSpec (uptime and browser checks).
func (k Kind) IsHTTP() bool { return k == Uptime || k == Browser }

// Runtime versions (api/openapi/checks-uptime.yaml). Requests may only ask for
// VersionBrowser; VersionEdge appears in responses only; VersionBrowserRetired is the retired
// Node-20-generation browser runtime, rejected everywhere (api/openapi/checks.yaml).
const (
	VersionBrowser        = "NODE24_BROWSER"
	VersionEdge           = "EDGE_RUNTIME"
	VersionBrowserRetired = "NODE20_BROWSER"
	VersionDNS            = "NODE24_DNS"
	VersionTCP            = "NODE24_TCP"
)

// Ping, gRPC and WebSocket checks have no runtime version: like uptime checks, they run in the
// agent itself.

// DefaultVersion is the runtime a new check of kind k runs on; uptime checks have none ("").
func DefaultVersion(k Kind) string {
	switch k {
	case Browser:
		return VersionBrowser
	case DNS:
		return VersionDNS
	case TCP:
		return VersionTCP
	}
	return ""
}
