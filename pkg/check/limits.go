package check

// Limits of check configuration. the public API contract (api/openapi) states test_interval ≥ 30, timeout ≥ 1000,
// confirmation and recovery ≥ 0, reminder ≥ -1, dns_domain and tcp_hostname 1..253, tcp_port
// 1..65535 and tcp_data ≤ 16384; api/openapi/checks.yaml adds text_to_search_for ≤ 4000. Every other
// bound is our choice, made so that a stored check is always something a probe can run and a
// job can carry, and applies to all kinds unless it says otherwise.
const (
	MinTestInterval     = 30
	MaxTestInterval     = 86400 // one run a day
	DefaultTestInterval = 60

	MinTimeoutMs        = 1000
	MaxTimeoutMs        = 60000  // uptime, DNS and TCP
	MaxBrowserTimeoutMs = 120000 // a browser script may need longer
	DefaultTimeoutMs    = 10000

	MaxPeriodSeconds     = 3600   // confirmation_period_seconds and recovery_period_seconds, min 0
	MinReminderMinutes   = -1     // -1 = never
	MaxReminderMinutes   = 525600 // one year
	MaxNameLength        = 255    // characters, after trimming surrounding whitespace
	MaxURLLength         = 2048
	MaxTextToSearchFor   = 4000
	MaxHeaders           = 50
	MaxHeaderValueLength = 4096
	MaxBodyLength        = 65536 // characters
	MaxAuthLength        = 1024  // auth_username and auth_password, characters
	MaxScriptLength      = 100000
	MaxHostnameLength    = 253 // dns_domain, tcp_hostname (and the host of dns_resolver)
	MaxTCPDataLength     = 16384
	MaxAssertions        = 50
	MaxAssertionText     = 4096 // property and expected, characters
	MaxAlertIDs          = 100  // per *_alerts list

	DefaultPingCount          = 3
	MaxPingCount              = 20    // echo requests per attempt, one a second at most in a timeout of 60 s
	MaxGRPCServiceLength      = 512   // grpc_service
	MaxWebSocketMessageLength = 16384 // websocket_message and websocket_expected, as tcp_data
)

// Alert priorities.
const (
	PriorityLow  = "LOW"
	PriorityHigh = "HIGH"
)

// Enumerations of request values.
var (
	Methods        = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}
	DNSRecordTypes = []string{"A", "AAAA", "CNAME", "MX", "NS", "SOA", "TXT"}
	DNSProtocols   = []string{"UDP", "TCP"}
	IPFamilies     = []string{"IPv4", "IPv6", IPFamilyAny}
	Priorities     = []string{PriorityLow, PriorityHigh}
)
