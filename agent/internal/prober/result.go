package prober

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/agent/internal/tlscert"
	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/redact"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Result is everything an attempt can tell about its target: the fields of a result record
// (api/openapi/checks.yaml) that the agent knows. The control plane adds the ids, region, attempt and
// timestamps. Empty strings and zero numbers stand for null.
type Result struct {
	Kind    check.Kind
	Passing bool
	// ResponseTime is the attempt's duration as the check's response_time_ms: the whole
	// request for HTTP, the query for DNS, resolution + connection + data exchange for TCP.
	ResponseTime time.Duration
	// ResponseCode is the HTTP status of the final response; 0 when none arrived.
	ResponseCode int
	// ResponseBody is at most MaxBodyStored bytes of the response (HTTP body, DNS answer text,
	// TCP reply), secrets redacted, always valid UTF-8.
	ResponseBody     string
	BodyAvailability string // AVAILABLE or NOT_RECORDED
	// ResultSummary is one short line for people: what happened, or why it failed.
	ResultSummary string
	FailureSource string // TRANSPORT, ASSERTION, or "" when passing
	FailureType   string // see the Failure types; "" when passing

	DNSStatus      string // DNS: the rcode name, e.g. NOERROR or NXDOMAIN
	Resolver       string // DNS: the resolver address used, host:port
	ParsedResponse string // DNS: the answer section as a JSON array of {name, type, ttl, data}
	TCPStatus      string // TCP: how far the connection got, see the TCP statuses

	// Ping: the echo requests sent and answered, and the round trips of the replies.
	Ping *PingStats
	// GRPCStatus is a gRPC health check's answer (SERVING, NOT_SERVING, SERVICE_UNKNOWN,
	// UNKNOWN) or the RPC's error code in upper snake case (UNAVAILABLE, DEADLINE_EXCEEDED).
	GRPCStatus string
	// WebSocketOpen is the time from the request to the open connection, WebSocketReply from
	// the message sent (or the open) to the matching reply; zero when it did not happen.
	WebSocketOpen, WebSocketReply time.Duration

	Timings Timings
	// CertNotAfter is the expiry of the leaf certificate the server presented (HTTPS only,
	// recorded even when verification failed); zero when there was none.
	CertNotAfter time.Time
	// TLS is the certificate chain the server served and whether it verifies for the host
	// (whatever verify_ssl says); nil when no handshake got a certificate.
	TLS *tlscert.Chain
	// Assertions holds the verdict of each of the check's assertions, in order; empty when
	// the target could not be reached and so nothing was judged.
	Assertions []assert.Outcome
	// Screenshot is a browser check's page at its failure: a JPEG or PNG of at most
	// wire.MaxScreenshotBytes; nil when there is none.
	Screenshot []byte
	// Steps are a scripted browser check's tests and test.steps.
	Steps []Step
	// Artifacts are a scripted browser check's kept files (screenshots taken with a path,
	// testInfo.attach()), within the caps of pkg/wire; ArtifactsDropped says which the caps
	// dropped.
	Artifacts        []pwscript.Artifact
	ArtifactsDropped []string
}

// Step is one test, hook or test.step of a scripted browser check.
type Step struct {
	Title    string // "test › step", secrets redacted
	Location string // "check.spec.ts:12:5"
	Depth    int    // 0 for a test
	Start    time.Duration
	Duration time.Duration
	Passed   bool
	Error    string
}

// Timings splits an attempt by phase; a phase that did not happen is zero. Across HTTP
// redirects, DNS, Connect and TLS add up every hop.
type Timings struct {
	DNS     time.Duration // name resolution
	Connect time.Duration // TCP connection establishment
	TLS     time.Duration // TLS handshake
	// FirstByte is from the start of the attempt to the first byte of the final response.
	FirstByte time.Duration
	// Data is the HTTP body read (first byte to end), or the TCP exchange (sending the data to
	// the last byte of the reply).
	Data time.Duration
	// DOMContentLoaded and Load are a browser page's events, from the start of its navigation.
	DOMContentLoaded, Load time.Duration
	Total                  time.Duration
}

// Body availability (api/openapi/checks.yaml).
const (
	BodyAvailable   = "AVAILABLE"    // a response arrived; ResponseBody holds it (possibly "")
	BodyNotRecorded = "NOT_RECORDED" // no response arrived, or it was not read
)

// Failure sources (api/openapi/checks.yaml, a closed set).
const (
	SourceTransport = "TRANSPORT" // no usable response: connection, DNS, TLS, timeout, protocol
	SourceAssertion = "ASSERTION" // a response arrived and was judged a failure
)

// Failure types. The API leaves them open; this is Vantage's vocabulary. Each is given with its
// source.
const (
	// TRANSPORT
	Timeout           = "TIMEOUT"            // the deadline passed before the attempt finished
	ConnectionRefused = "CONNECTION_REFUSED" // the target refused the connection (RST, ICMP port unreachable)
	ConnectionReset   = "CONNECTION_RESET"   // the connection was reset or broken mid-exchange
	ConnectionClosed  = "CONNECTION_CLOSED"  // the target closed the connection before a complete response
	HostUnreachable   = "HOST_UNREACHABLE"   // no route to the host or network
	ConnectionError   = "CONNECTION_ERROR"   // any other network failure
	DNSError          = "DNS_ERROR"          // the target's (or resolver's) host name did not resolve
	TLSError          = "TLS_ERROR"          // the TLS handshake or certificate verification failed
	TooManyRedirects  = "TOO_MANY_REDIRECTS" // more than MaxRedirects redirects (a loop, usually)
	InvalidResponse   = "INVALID_RESPONSE"   // the response broke its protocol (malformed HTTP, bad DNS message)
	ForbiddenTarget   = "FORBIDDEN_TARGET"   // the address is private and private targets are not allowed
	InvalidRequest    = "INVALID_REQUEST"    // the check cannot be run as configured (bad URL, record type, ...)
	NotSupported      = "NOT_SUPPORTED"      // this agent cannot run this kind of check

	// ASSERTION
	HTTPStatus           = "HTTP_STATUS"           // the final HTTP status is 4xx or 5xx
	TextNotFound         = "TEXT_NOT_FOUND"        // text_to_search_for is not in the body
	AssertionFailed      = "ASSERTION_FAILED"      // one or more assertions failed
	DNSRcode             = "DNS_RCODE"             // the rcode is not NOERROR and no assertion judges it
	UnexpectedConnection = "UNEXPECTED_CONNECTION" // tcp_should_fail, yet the connection succeeded
	PacketLoss           = "PACKET_LOSS"           // ping: more echo requests lost than ping_max_loss_percent allows
	SlowResponse         = "SLOW_RESPONSE"         // ping: the average round trip is above ping_max_avg_rtt_ms
	NotServing           = "NOT_SERVING"           // gRPC: the health service answered other than SERVING
	UnexpectedReply      = "UNEXPECTED_REPLY"      // WebSocket: replies came, none matched websocket_expected
)

// TCP statuses: how far a TCP attempt's connection got.
const (
	TCPConnected   = "CONNECTED"   // the connection was established
	TCPRefused     = "REFUSED"     // the target refused it
	TCPTimeout     = "TIMEOUT"     // connecting did not finish before the deadline
	TCPReset       = "RESET"       // it was established, then reset before the exchange finished
	TCPUnreachable = "UNREACHABLE" // no route to the host
	TCPDNSError    = "DNS_ERROR"   // the host name did not resolve, so nothing was attempted
	TCPForbidden   = "FORBIDDEN"   // the address is not allowed, so nothing was attempted
	TCPError       = "ERROR"       // connecting failed otherwise
)

func (r *Result) failTransport(failureType, summary string) {
	r.Passing = false
	r.FailureSource = SourceTransport
	r.FailureType = failureType
	r.ResultSummary = summary
}

func (r *Result) failAssertion(failureType, summary string) {
	r.Passing = false
	r.FailureSource = SourceAssertion
	r.FailureType = failureType
	r.ResultSummary = summary
}

func (r *Result) pass(summary string) {
	r.Passing = true
	r.FailureSource = ""
	r.FailureType = ""
	r.ResultSummary = summary
}

// assertionSummary describes the failed assertions: the first one's message, and how many
// more failed.
func assertionSummary(outcomes []assert.Outcome) string {
	first, failed := "", 0
	for _, o := range outcomes {
		if !o.Passed {
			if failed == 0 {
				first = o.Message
			}
			failed++
		}
	}
	switch failed {
	case 0:
		return ""
	case 1:
		return "assertion failed: " + first
	}
	return fmt.Sprintf("assertion failed: %s (and %d more)", first, failed-1)
}

// finish stores body as the response body (nil: none was recorded), redacts the secrets of job
// (in every encoding: pkg/redact) from every text field, and makes every text field
// valid UTF-8 of bounded size. Text is redacted whole, before it is cut.
func (r *Result) finish(job *vantagev1.CheckJob, body []byte) {
	hide := redact.ForJob(job).String
	if body == nil {
		r.BodyAvailability = BodyNotRecorded
		r.ResponseBody = ""
	} else {
		r.BodyAvailability = BodyAvailable
		// Redact the whole body before cutting it, so that the cut cannot leave part of a secret.
		r.ResponseBody = cutUTF8(hide(strings.ToValidUTF8(string(body), "\uFFFD")), MaxBodyStored)
	}
	r.ResultSummary = cutUTF8(hide(strings.ToValidUTF8(r.ResultSummary, "\uFFFD")), wire.MaxResultSummaryBytes)
	r.ParsedResponse = hide(strings.ToValidUTF8(r.ParsedResponse, "\uFFFD"))
	for i := range r.Assertions {
		o := &r.Assertions[i]
		o.Actual = hide(strings.ToValidUTF8(o.Actual, "\uFFFD"))
		o.Message = hide(strings.ToValidUTF8(o.Message, "\uFFFD"))
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Title = cutUTF8(hide(strings.ToValidUTF8(s.Title, "\uFFFD")), 512)
		s.Error = cutUTF8(hide(strings.ToValidUTF8(s.Error, "\uFFFD")), 2048)
	}
}

// cutUTF8 cuts s to at most limit bytes without splitting a character.
func cutUTF8(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// millis renders d as whole milliseconds for summaries.
func millis(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
