package check

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// WebSocketSpec is the connection a WebSocket check opens and the exchange it makes (an
// extension). The attempt passes when the connection opens and, if Expected is set, a text
// reply matching it arrives within the timeout.
type WebSocketSpec struct {
	URL      string            `json:"url" api:"required"` // ws: or wss:, no fragment
	Headers  map[string]string `json:"headers"`            // on the opening handshake; values take {{NAME}} references
	Message  *string           `json:"websocket_message"`  // sent as text once open; nil: nothing
	Expected *string           `json:"websocket_expected"` // nil: opening is enough
	// Comparison is how a reply is matched against Expected: CONTAINS, EQUALS or MATCHES (a
	// regular expression, RE2 syntax).
	Comparison string `json:"websocket_comparison"`
	VerifySSL  bool   `json:"verify_ssl"`
}

// WebSocket comparisons.
const (
	WebSocketContains = "CONTAINS"
	WebSocketEquals   = "EQUALS"
	WebSocketMatches  = "MATCHES"
)

// WebSocketComparisons lists the values of websocket_comparison.
var WebSocketComparisons = []string{WebSocketContains, WebSocketEquals, WebSocketMatches}

// defaultWebSocket: replies matched by CONTAINS, certificates verified.
func defaultWebSocket() *WebSocketSpec {
	return &WebSocketSpec{Comparison: WebSocketContains, VerifySSL: true}
}

// exampleWebSocket is a WebSocket check's configuration for Example.
func exampleWebSocket() *WebSocketSpec {
	return &WebSocketSpec{URL: "wss://stream.example.com/v1/feed?probe=1", Headers: map[string]string{"Authorization": "Bearer feed-probe"},
		Message: ptr(`{"op":"ping"}`), Expected: ptr(`"op":\s*"pong"`), Comparison: WebSocketMatches, VerifySSL: false}
}

func (s Spec) validateWebSocket(fe *FieldErrors) {
	w := s.WebSocket
	if w == nil || s.onlyKindSpec() != 1 {
		fe.add("check_type", "a WEBSOCKET check must have WebSocket settings only")
		return
	}
	if msg := webSocketURLProblem(w.URL); msg != "" {
		fe.add("url", "%s", msg)
	}
	validateHeaders(fe, w.Headers, false)
	maxLen(fe, "websocket_message", w.Message, MaxWebSocketMessageLength)
	maxLen(fe, "websocket_expected", w.Expected, MaxWebSocketMessageLength)
	if !slices.Contains(WebSocketComparisons, w.Comparison) {
		fe.add("websocket_comparison", "must be CONTAINS, EQUALS or MATCHES")
	} else if w.Comparison == WebSocketMatches && w.Expected != nil {
		if _, err := regexp.Compile(*w.Expected); err != nil {
			fe.add("websocket_expected", "is not a valid regular expression: %v", err)
		}
	}
}

// webSocketURLProblem judges a WebSocket URL: absolute ws or wss with a host and no fragment
// (RFC 6455 §3: a fragment has no meaning in a WebSocket URI).
func webSocketURLProblem(s string) string {
	if utf8.RuneCountInString(s) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\r\n") {
		return "must be an absolute ws or wss URL without whitespace"
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute ws or wss URL, e.g. wss://example.com/socket"
	}
	if sch := strings.ToLower(u.Scheme); sch != "ws" && sch != "wss" {
		return "must use the ws or wss scheme"
	}
	if strings.Contains(s, "#") {
		return "must not have a fragment (#...)"
	}
	return ""
}
