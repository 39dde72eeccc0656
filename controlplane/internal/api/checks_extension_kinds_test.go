package api

import (
	"net/http"
	"strings"
	"testing"
)

// The extension kinds (ping, gRPC health, WebSocket) through the API: their shapes, their
// rules, and the generic check machinery (regions, SLA, dependencies, quorum) on them.

func ckPingBody() map[string]any {
	return map[string]any{"name": "Gateway ping", "ping_hostname": "gateway.example.com"}
}

func ckGRPCBody() map[string]any {
	return map[string]any{"name": "Cart health", "grpc_hostname": "cart.example.com", "grpc_port": 8443}
}

func ckWebSocketBody() map[string]any {
	return map[string]any{"name": "Feed socket", "url": "wss://stream.example.com/feed"}
}

func TestExtensionKindShapesGolden(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct {
		name, seg string
		body      map[string]any
	}{
		{"check_ping_defaults", "ping", ckPingBody()},
		{"check_ping", "ping", ckWith(ckPingBody(), "type", "PING_CHECK", "ping_count", 5, "ping_ip_family", "IPv4",
			"ping_max_loss_percent", 20, "ping_max_avg_rtt_ms", 150)},
		{"check_grpc_defaults", "grpc", ckGRPCBody()},
		{"check_grpc", "grpc", ckWith(ckGRPCBody(), "grpc_service", "shop.v1.Cart", "grpc_tls", true, "verify_ssl", false,
			"grpc_metadata", map[string]string{"x-probe": "vantage"})},
		{"check_websocket_defaults", "websocket", ckWebSocketBody()},
		{"check_websocket", "websocket", ckWith(ckWebSocketBody(), "headers", map[string]string{"Origin": "https://example.com"},
			"websocket_message", "ping", "websocket_expected", "^pong$", "websocket_comparison", "MATCHES", "verify_ssl", false)},
	}
	for _, tc := range cases {
		r := h.do(http.MethodPost, "/v1/checks/"+tc.seg, h.tokenA, tc.body)
		expectStatus(t, r, http.StatusCreated)
		golden(t, tc.name+"_create", r.Raw)
		id := r.Result()["id"].(string)
		r = h.do(http.MethodGet, "/v1/checks/"+tc.seg+"/"+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		golden(t, tc.name+"_get", r.Raw)
		// The typed routes of another kind do not find it.
		other := "tcp"
		if r := h.do(http.MethodGet, "/v1/checks/"+other+"/"+id, h.tokenA, nil); r.Status != http.StatusNotFound {
			t.Errorf("%s found on /v1/checks/%s: %d", tc.name, other, r.Status)
		}
	}
}

func TestExtensionKindValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pingID := ckID(t, h, "/v1/checks/ping", ckPingBody())
	grpcID := ckID(t, h, "/v1/checks/grpc", ckGRPCBody())
	wsID := ckID(t, h, "/v1/checks/websocket", ckWebSocketBody())
	ping, grpc, ws := ckPingBody(), ckGRPCBody(), ckWebSocketBody()
	cases := []struct {
		name, method, path string
		body               map[string]any
		msg                string
	}{
		{"ping hostname missing", http.MethodPost, "/v1/checks/ping", ckWithout(ping, "ping_hostname"), "ping_hostname: is required"},
		{"ping count 0", http.MethodPost, "/v1/checks/ping", ckWith(ping, "ping_count", 0), "ping_count: must be between 1 and 20"},
		{"ping count negative", http.MethodPost, "/v1/checks/ping", ckWith(ping, "ping_count", -1), "ping_count: must be between 1 and 20"},
		{"ping count huge", http.MethodPost, "/v1/checks/ping", ckWith(ping, "ping_count", 1e9), "ping_count: must be between 1 and 20"},
		{"ping loss over 100", http.MethodPost, "/v1/checks/ping", ckWith(ping, "ping_max_loss_percent", 101), "ping_max_loss_percent: must be between 0 and 100"},
		{"ping loss negative", http.MethodPatch, "/v1/checks/ping/" + pingID, map[string]any{"ping_max_loss_percent": -5}, "ping_max_loss_percent: must be between 0 and 100"},
		{"ping family", http.MethodPost, "/v1/checks/ping", ckWith(ping, "ping_ip_family", "v4"), "ping_ip_family: must be IPv4, IPv6 or Any"},
		{"ping assertions", http.MethodPost, "/v1/checks/ping", ckWith(ping, "assertions", []any{map[string]any{"type": "TCP_RESPONSE_TIME", "property": "responseTime", "comparison": "LESS_THAN", "expected": "5"}}), "assertions[0].type: PING checks take no assertions"},
		{"ping unknown field", http.MethodPost, "/v1/checks/ping", ckWith(ping, "tcp_port", 5), "tcp_port"},
		{"grpc port 0", http.MethodPost, "/v1/checks/grpc", ckWith(grpc, "grpc_port", 0), "grpc_port: must be between 1 and 65535"},
		{"grpc port too big", http.MethodPatch, "/v1/checks/grpc/" + grpcID, map[string]any{"grpc_port": 65536}, "grpc_port: must be between 1 and 65535"},
		{"grpc port missing", http.MethodPost, "/v1/checks/grpc", ckWithout(grpc, "grpc_port"), "grpc_port: is required"},
		{"grpc service", http.MethodPost, "/v1/checks/grpc", ckWith(grpc, "grpc_service", "shop/v1.Cart"), "grpc_service: must be empty"},
		{"grpc metadata reserved", http.MethodPost, "/v1/checks/grpc", ckWith(grpc, "grpc_metadata", map[string]string{"grpc-status": "0"}), "grpc_metadata.grpc-status: is reserved"},
		{"grpc metadata unknown variable", http.MethodPost, "/v1/checks/grpc", ckWith(grpc, "grpc_metadata", map[string]string{"authorization": "{{NOPE}}"}), "grpc_metadata.authorization: references {{NOPE}}"},
		{"ws fragment", http.MethodPost, "/v1/checks/websocket", ckWith(ws, "url", "wss://example.com/feed#x"), "url: must not have a fragment"},
		{"ws http scheme", http.MethodPost, "/v1/checks/websocket", ckWith(ws, "url", "http://example.com/feed"), "url: must use the ws or wss scheme"},
		{"ws url missing", http.MethodPost, "/v1/checks/websocket", ckWithout(ws, "url"), "url: is required"},
		{"ws bad regexp", http.MethodPost, "/v1/checks/websocket", ckWith(ws, "websocket_expected", "a(b", "websocket_comparison", "MATCHES"), "websocket_expected: is not a valid regular expression"},
		{"ws bad regexp on patch", http.MethodPatch, "/v1/checks/websocket/" + wsID, map[string]any{"websocket_expected": "[", "websocket_comparison": "MATCHES"}, "websocket_expected: is not a valid regular expression"},
		{"ws comparison", http.MethodPost, "/v1/checks/websocket", ckWith(ws, "websocket_comparison", "PREFIX"), "websocket_comparison: must be CONTAINS, EQUALS or MATCHES"},
		{"ws type", http.MethodPost, "/v1/checks/websocket", ckWith(ws, "type", "TCP_CHECK"), "type: must be WEBSOCKET_CHECK"},
	}
	for _, tc := range cases {
		r := h.do(tc.method, tc.path, h.tokenA, tc.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), tc.msg) {
			t.Errorf("%s: status %d, want 400 naming %q: %s", tc.name, r.Status, tc.msg, r.Raw)
		}
	}
	// A refused PATCH changed nothing.
	r := h.do(http.MethodGet, "/v1/checks/grpc/"+grpcID, h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["grpc_port"] != 8443.0 {
		t.Errorf("refused PATCH changed the check: %s", r.Raw)
	}
}

// TestExtensionKindsGenericMachinery: the generic routes serve the new kinds like the others.
func TestExtensionKindsGenericMachinery(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tcp := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	regions := []string{"cloud:eu-west-2", "cloud:us-west-1", "cloud:ap-northeast-1"}
	for _, seg := range []string{"ping", "grpc", "websocket"} {
		body := map[string]func() map[string]any{"ping": ckPingBody, "grpc": ckGRPCBody, "websocket": ckWebSocketBody}[seg]()
		id := ckID(t, h, "/v1/checks/"+seg, ckWith(body, "depends_on", []string{tcp}, "test_regions", regions, "region_quorum", 2))
		for _, path := range []string{"/v1/checks/" + id, "/v1/checks/" + id + "/regions",
			"/v1/checks/" + id + "/sla?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z",
			"/v1/checks/" + seg + "/" + id + "/incidents", "/v1/checks/" + seg + "/" + id + "/results?from=2026-02-01T10:00:00Z&to=2026-02-01T11:00:00Z"} {
			r := h.do(http.MethodGet, path, h.tokenA, nil)
			expectStatus(t, r, http.StatusOK)
		}
		r := h.do(http.MethodGet, "/v1/checks/"+id, h.tokenA, nil)
		if res := r.Result(); res["region_quorum"] != 2.0 || len(res["depends_on"].([]any)) != 1 || res["check_type"] != strings.ToUpper(seg) {
			t.Errorf("%s: generic GET lost quorum, dependency or type: %s", seg, r.Raw)
		}
		r = h.do(http.MethodGet, "/v1/checks/"+id+"/regions", h.tokenA, nil)
		if n := len(r.Items()); n != len(regions) {
			if list, _ := r.Body["result"].([]any); len(list) != len(regions) {
				t.Errorf("%s: regions %s", seg, r.Raw)
			}
		}
		// The generic PATCH changes the kind's fields; the other kinds' are refused.
		r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"timeout": 3000})
		expectStatus(t, r, http.StatusOK)
		r = h.do(http.MethodPatch, "/v1/checks/"+id, h.tokenA, map[string]any{"dns_domain": "example.com"})
		expectStatus(t, r, http.StatusBadRequest)
		r = h.do(http.MethodDelete, "/v1/checks/"+seg+"/"+id, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
	}
}

// TestExtensionKindResults: the kinds' observations, stored in the result's details, come
// back as the fields of their results.
func TestExtensionKindResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ping := ckID(t, h, "/v1/checks/ping", ckPingBody())
	grpc := ckID(t, h, "/v1/checks/grpc", ckGRPCBody())
	ws := ckID(t, h, "/v1/checks/websocket", ckWebSocketBody())
	ckInsertResult(t, h, ping, 1, "2026-02-01T10:00:00Z", "failure_source, failure_type, details", "TRANSPORT", "PACKET_LOSS",
		`{"ping_sent":4,"ping_received":2,"ping_loss_percent":50,"ping_rtt_min_ms":1.5,"ping_rtt_avg_ms":2,"ping_rtt_max_ms":2.5,"ping_rtt_stddev_ms":0.5}`)
	ckInsertResult(t, h, grpc, 2, "2026-02-01T10:00:00Z", "failure_source, failure_type, connect_time_ms, details", "TRANSPORT", "NOT_SERVING", 3.25,
		`{"grpc_status":"NOT_SERVING"}`)
	ckInsertResult(t, h, ws, 3, "2026-02-01T10:00:00Z", "response_code, details", 101, `{"websocket_open_ms":12.5,"websocket_reply_ms":1.75}`)
	window := "?from=2026-02-01T10:00:00.000Z&to=2026-02-01T11:00:00Z"
	for _, tc := range []struct{ seg, id string }{{"ping", ping}, {"grpc", grpc}, {"websocket", ws}} {
		r := h.do(http.MethodGet, "/v1/checks/"+tc.seg+"/"+tc.id+"/results"+window, h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		golden(t, "check_results_"+tc.seg, r.Raw)
	}
}
