package check

import (
	"strings"
	"testing"
)

// TestExtensionKindRules: each bad value of a ping, gRPC or WebSocket check is refused under
// the field that holds it, and nothing else is.
func TestExtensionKindRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		kind  Kind
		edit  func(*Spec)
		field string // "" = valid
	}{
		{"ping example", Ping, func(*Spec) {}, ""},
		{"ping count 0", Ping, func(s *Spec) { s.Ping.Count = 0 }, "ping_count"},
		{"ping count negative", Ping, func(s *Spec) { s.Ping.Count = -3 }, "ping_count"},
		{"ping count huge", Ping, func(s *Spec) { s.Ping.Count = 1000 }, "ping_count"},
		{"ping family", Ping, func(s *Spec) { s.Ping.IPFamily = "IPv5" }, "ping_ip_family"},
		{"ping loss 101", Ping, func(s *Spec) { s.Ping.MaxLossPercent = ptr(101) }, "ping_max_loss_percent"},
		{"ping loss -1", Ping, func(s *Spec) { s.Ping.MaxLossPercent = ptr(-1) }, "ping_max_loss_percent"},
		{"ping loss 0", Ping, func(s *Spec) { s.Ping.MaxLossPercent = ptr(0) }, ""},
		{"ping rtt 0", Ping, func(s *Spec) { s.Ping.MaxAvgRTTMs = ptr(0) }, "ping_max_avg_rtt_ms"},
		{"ping host", Ping, func(s *Spec) { s.Ping.Hostname = "bad host" }, "ping_hostname"},
		{"ping address", Ping, func(s *Spec) { s.Ping.Hostname = "2001:db8::1" }, ""},
		{"grpc example", GRPC, func(*Spec) {}, ""},
		{"grpc port 0", GRPC, func(s *Spec) { s.GRPC.Port = 0 }, "grpc_port"},
		{"grpc port 65536", GRPC, func(s *Spec) { s.GRPC.Port = 65536 }, "grpc_port"},
		{"grpc service empty", GRPC, func(s *Spec) { s.GRPC.Service = "" }, ""},
		{"grpc service plain", GRPC, func(s *Spec) { s.GRPC.Service = "health" }, ""},
		{"grpc service slash", GRPC, func(s *Spec) { s.GRPC.Service = "shop/Cart" }, "grpc_service"},
		{"grpc service empty label", GRPC, func(s *Spec) { s.GRPC.Service = "shop..Cart" }, "grpc_service"},
		{"grpc service digit", GRPC, func(s *Spec) { s.GRPC.Service = "shop.1v.Cart" }, "grpc_service"},
		{"grpc service space", GRPC, func(s *Spec) { s.GRPC.Service = "shop Cart" }, "grpc_service"},
		{"grpc metadata upper", GRPC, func(s *Spec) { s.GRPC.Metadata = map[string]string{"X-Token": "a"} }, "grpc_metadata.X-Token"},
		{"grpc metadata reserved", GRPC, func(s *Spec) { s.GRPC.Metadata = map[string]string{"grpc-timeout": "1S"} }, "grpc_metadata.grpc-timeout"},
		{"grpc metadata binary", GRPC, func(s *Spec) { s.GRPC.Metadata = map[string]string{"trace-bin": "AA"} }, "grpc_metadata.trace-bin"},
		{"grpc metadata newline", GRPC, func(s *Spec) { s.GRPC.Metadata = map[string]string{"x-a": "a\nb"} }, "grpc_metadata.x-a"},
		{"ws example", WebSocket, func(*Spec) {}, ""},
		{"ws plain", WebSocket, func(s *Spec) { s.WebSocket.URL = "ws://127.0.0.1:8080/echo" }, ""},
		{"ws fragment", WebSocket, func(s *Spec) { s.WebSocket.URL = "wss://example.com/socket#top" }, "url"},
		{"ws http scheme", WebSocket, func(s *Spec) { s.WebSocket.URL = "http://example.com/socket" }, "url"},
		{"ws https scheme", WebSocket, func(s *Spec) { s.WebSocket.URL = "https://example.com/socket" }, "url"},
		{"ws no host", WebSocket, func(s *Spec) { s.WebSocket.URL = "ws:///socket" }, "url"},
		{"ws comparison", WebSocket, func(s *Spec) { s.WebSocket.Comparison = "STARTS_WITH" }, "websocket_comparison"},
		{"ws bad regexp", WebSocket, func(s *Spec) { s.WebSocket.Expected = ptr("(unclosed") }, "websocket_expected"},
		{"ws regexp text when CONTAINS", WebSocket, func(s *Spec) {
			s.WebSocket.Expected, s.WebSocket.Comparison = ptr("(unclosed"), WebSocketContains
		}, ""},
		{"ws header name", WebSocket, func(s *Spec) { s.WebSocket.Headers = map[string]string{"Bad Header": "x"} }, "headers.Bad Header"},
		{"ws message long", WebSocket, func(s *Spec) { s.WebSocket.Message = ptr(strings.Repeat("x", MaxWebSocketMessageLength+1)) }, "websocket_message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := Example(c.kind)
			c.edit(&s)
			fe := s.Validate()
			if c.field == "" {
				if len(fe) != 0 {
					t.Fatalf("valid check refused: %v", fe)
				}
				return
			}
			if len(fe) != 1 || fe[0].Field != c.field {
				t.Fatalf("errors = %v, want exactly one for %s", fe, c.field)
			}
		})
	}
}

// TestExtensionKindsHaveOneSpec: a check of an extension kind carrying a second kind's
// settings is refused.
func TestExtensionKindsHaveOneSpec(t *testing.T) {
	t.Parallel()
	s := Example(GRPC)
	s.Ping = examplePing()
	if fe := s.Validate(); len(fe) != 1 || fe[0].Field != "check_type" {
		t.Fatalf("errors = %v, want check_type", fe)
	}
}
