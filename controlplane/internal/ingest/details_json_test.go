package ingest

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestDetailsJSONMatchesEncodingJSON holds the hand-written details document to what
// encoding/json makes of resultDetails, byte for byte, for results of every kind and strings
// and numbers that need escaping or an exponent.
func TestDetailsJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	u := func(v uint32) *uint32 { return &v }
	s := func(v string) *string { return &v }
	odd := "<a href=\"x\">&\\ \b\f\n\r\t\x01\x1f é \u2028\u2029 \xff\xfe end"
	cases := map[string]func(r *vantagev1.CheckResult){
		"http": func(*vantagev1.CheckResult) {},
		"minimal": func(r *vantagev1.CheckResult) {
			r.AgentId, r.Kind, r.Timings, r.TlsNotAfterUnixMs, r.Assertions = "", 0, nil, nil, nil
		},
		"odd strings": func(r *vantagev1.CheckResult) {
			r.AgentId = odd
			r.Assertions = append(r.Assertions, &vantagev1.AssertionOutcome{
				Assertion: &vantagev1.Assertion{Type: odd, Property: odd, Comparison: odd, Expected: odd}, Actual: odd, Message: odd})
		},
		"odd numbers": func(r *vantagev1.CheckResult) {
			r.Timings = &vantagev1.Timings{DnsMs: f(1e-7), ConnectMs: f(0), TlsMs: f(1e21), FirstByteMs: f(-0.5),
				DataMs: f(math.NaN()), TotalMs: math.Inf(1), DomContentLoadedMs: f(123456789.125), LoadMs: f(5e-324)}
		},
		"tls chain": func(r *vantagev1.CheckResult) {
			r.TlsChain = &vantagev1.TLSChain{Host: "example.com", Verified: false, Problem: odd,
				Certificates: []*vantagev1.TLSCertificate{
					{Subject: "CN=example.com", Issuer: "CN=CA", Sans: []string{"example.com", "10.0.0.1"},
						NotBeforeUnixMs: 1767225600123, NotAfterUnixMs: 1798761600000, Sha256: "ab"},
					{Subject: "CN=CA", Issuer: "CN=CA"}}}
		},
		"empty tls chain": func(r *vantagev1.CheckResult) { r.TlsChain = &vantagev1.TLSChain{} },
		"browser": func(r *vantagev1.CheckResult) {
			r.Kind = vantagev1.CheckKind_CHECK_KIND_BROWSER
			r.Steps = []*vantagev1.Step{{Title: "loads", Location: "a.spec.ts:3:1", StartMs: 1.5, DurationMs: 20, Passed: true},
				{Title: odd, Depth: 1, Error: odd, StartMs: math.NaN()}}
		},
		"ping": func(r *vantagev1.CheckResult) {
			r.Kind = vantagev1.CheckKind_CHECK_KIND_PING
			r.PingSent, r.PingReceived, r.PingLossPercent, r.PingRttAvgMs = u(4), u(3), f(25), f(1.25)
		},
		"grpc": func(r *vantagev1.CheckResult) {
			r.Kind, r.GrpcStatus = vantagev1.CheckKind_CHECK_KIND_GRPC, s("SERVING")
		},
		"websocket": func(r *vantagev1.CheckResult) {
			r.Kind, r.WebsocketOpenMs = vantagev1.CheckKind_CHECK_KIND_WEBSOCKET, f(12.5)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := benchResult()
			change(r)
			for _, dropped := range []string{"", "neither PNG nor JPEG"} {
				d := newDetails(r, dropped, []string{"response_body"}, []string{"trace.zip: " + odd})
				want, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				got, err := d.encode()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("details\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}
