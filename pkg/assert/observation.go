package assert

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// Observation is what one probe saw, ready to be judged: an [HTTPObservation],
// [DNSObservation] or [TCPObservation]. The set is closed.
type Observation interface {
	observedKind() string
}

// HTTPObservation is the response of an uptime (or URL-based browser) probe. It feeds
// JSON_BODY, TEXT_BODY, RESPONSE_HEADERS and HTML_BODY assertions.
type HTTPObservation struct {
	StatusCode int
	// Header is the response header. Lookups ignore case even when keys are not in canonical
	// form.
	Header http.Header
	// Body is the response body as read, possibly only its first part (see BodyTruncated).
	Body []byte
	// BodyTruncated reports that the body was longer than the prober's read limit and Body holds
	// its beginning only; a JSON_BODY parse error then says so.
	BodyTruncated bool
	ResponseTime  time.Duration
}

// DNSObservation is the outcome of one DNS query. It feeds DNS_RESPONSE_CODE, DNS_TEXT_ANSWER
// and DNS_JSON_ANSWER assertions.
type DNSObservation struct {
	// Rcode is the response code name, e.g. NOERROR, NXDOMAIN, SERVFAIL (the result's
	// dns_status).
	Rcode string
	// Answers holds the answer section, one record per line in zone-file presentation
	// ("example.com.\t300\tIN\tA\t192.0.2.1").
	Answers []string
	// ParsedResponse is the answer section as a JSON array of {name, type, ttl, data}
	// objects, exactly the result's parsed_response.
	ParsedResponse string
	ResponseTime   time.Duration
}

// TCPObservation is the outcome of one TCP exchange. It feeds TCP_RESPONSE_TIME and
// TCP_RESPONSE_DATA assertions.
type TCPObservation struct {
	// Data is what the target sent back (possibly nothing).
	Data []byte
	// ResponseTime is name resolution, connection and data exchange together.
	ResponseTime time.Duration
}

func (HTTPObservation) observedKind() string { return "an HTTP response" }
func (DNSObservation) observedKind() string  { return "a DNS response" }
func (TCPObservation) observedKind() string  { return "a TCP response" }

// headerValue returns the values of header name, matched without regard to case, joined with
// ", ", and whether the header is present at all.
func headerValue(h http.Header, name string) (string, bool) {
	if vs, ok := h[http.CanonicalHeaderKey(name)]; ok {
		return strings.Join(vs, ", "), true
	}
	var keys []string
	for k := range h {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // several spellings of one name: a stable order
	var vals []string
	for _, k := range keys {
		vals = append(vals, h[k]...)
	}
	return strings.Join(vals, ", "), len(keys) > 0
}
