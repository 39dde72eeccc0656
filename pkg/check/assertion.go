package check

// Assertion is one rule a probe's observation must satisfy (api/openapi/checks.yaml). All four
// fields are required; Property's meaning depends on Type.
type Assertion struct {
	Type       string `json:"type"`
	Property   string `json:"property"`
	Comparison string `json:"comparison"`
	Expected   string `json:"expected"`
}

// Assertion types per kind.
const (
	JSONBody        = "JSON_BODY"        // property: JSONPath into the JSON body
	TextBody        = "TEXT_BODY"        // property: unused
	ResponseHeaders = "RESPONSE_HEADERS" // property: header name
	HTMLBody        = "HTML_BODY"        // property: CSS selector

	DNSResponseCode = "DNS_RESPONSE_CODE" // property: "status"
	DNSTextAnswer   = "DNS_TEXT_ANSWER"   // property: ""
	DNSJSONAnswer   = "DNS_JSON_ANSWER"   // property: JSONPath into the parsed answer

	TCPResponseTime = "TCP_RESPONSE_TIME" // property: "responseTime"
	TCPResponseData = "TCP_RESPONSE_DATA" // property: ""
)

// AssertionTypes lists the assertion types each kind accepts.
var AssertionTypes = map[Kind][]string{
	Uptime:  {JSONBody, TextBody, ResponseHeaders, HTMLBody},
	Browser: {JSONBody, TextBody, ResponseHeaders, HTMLBody},
	DNS:     {DNSResponseCode, DNSTextAnswer, DNSJSONAnswer},
	TCP:     {TCPResponseTime, TCPResponseData},
	// A multistep check asserts in its script (expect); it takes no assertions of the API's.
	Multistep: {},
	// Ping, gRPC and WebSocket checks take no assertions: their own fields say what passes
	// (ping_max_*, SERVING, websocket_expected).
	Ping:      {},
	GRPC:      {},
	WebSocket: {},
}

// Comparisons, the same for every assertion type.
const (
	Equals      = "EQUALS"
	NotEquals   = "NOT_EQUALS"
	GreaterThan = "GREATER_THAN"
	LessThan    = "LESS_THAN"
	Null        = "NULL"
	NotNull     = "NOT_NULL"
	Empty       = "EMPTY"
	NotEmpty    = "NOT_EMPTY"
	Contains    = "CONTAINS"
	NotContains = "NOT_CONTAINS"
	False       = "FALSE"
	True        = "TRUE"
)

// Comparisons lists every comparison.
var Comparisons = []string{Equals, NotEquals, GreaterThan, LessThan, Null, NotNull, Empty, NotEmpty, Contains, NotContains, False, True}
