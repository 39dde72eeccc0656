package probe_test

import (
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/agent/internal/probe"
	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/tlscert"
	"github.com/vantagehq/vantage/pkg/check"
)

func TestResult(t *testing.T) {
	t.Parallel()
	notAfter := time.UnixMilli(1_900_000_000_000)
	got := probe.Result(prober.Result{
		Kind: check.Uptime, Passing: false, ResponseTime: 1500 * time.Microsecond, ResponseCode: 503,
		ResponseBody: "", BodyAvailability: prober.BodyAvailable, ResultSummary: "HTTP 503",
		FailureSource: prober.SourceAssertion, FailureType: prober.HTTPStatus,
		Timings:      prober.Timings{Connect: time.Millisecond, Total: 2 * time.Millisecond},
		CertNotAfter: notAfter,
	})
	if got.GetPassing() || got.GetResponseTimeMs() != 1.5 || got.GetResponseCode() != 503 || got.ResponseBody == nil ||
		got.GetResponseBody() != "" || got.GetBodyAvailability() != "AVAILABLE" || got.GetResultSummary() != "HTTP 503" ||
		got.GetFailureSource() != "ASSERTION" || got.GetFailureType() != "HTTP_STATUS" || got.DnsStatus != nil ||
		got.TcpStatus != nil || got.GetTimings().DnsMs != nil || got.GetTimings().GetConnectMs() != 1 ||
		got.GetTimings().GetTotalMs() != 2 || got.GetTlsNotAfterUnixMs() != notAfter.UnixMilli() {
		t.Errorf("Result = %v", got)
	}
	none := probe.Result(prober.Result{Passing: true, BodyAvailability: prober.BodyNotRecorded})
	if none.ResponseBody != nil || none.ResponseCode != nil || none.FailureSource != nil || none.TlsNotAfterUnixMs != nil {
		t.Errorf("unset fields set: %v", none)
	}
}

func TestResultTLSChain(t *testing.T) {
	t.Parallel()
	nb, na := time.UnixMilli(1_800_000_000_000).UTC(), time.UnixMilli(1_900_000_000_000).UTC()
	chain := &tlscert.Chain{Host: "shop.example", Verified: false, Problem: "unknown authority", Certificates: []tlscert.Certificate{
		{Subject: "CN=shop.example", Issuer: "CN=Test CA", SANs: []string{"shop.example", "192.0.2.7"}, NotBefore: nb, NotAfter: na, SHA256: "ab"},
		{Subject: "CN=Test CA", Issuer: "CN=Test CA", NotBefore: nb, NotAfter: na, SHA256: "cd"},
	}}
	got := probe.Result(prober.Result{Passing: true, TLS: chain}).GetTlsChain()
	leaf := got.GetCertificates()[0]
	if got.GetHost() != "shop.example" || got.GetVerified() || got.GetProblem() != "unknown authority" || len(got.GetCertificates()) != 2 ||
		leaf.GetSubject() != "CN=shop.example" || leaf.GetIssuer() != "CN=Test CA" || len(leaf.GetSans()) != 2 ||
		leaf.GetNotBeforeUnixMs() != nb.UnixMilli() || leaf.GetNotAfterUnixMs() != na.UnixMilli() || leaf.GetSha256() != "ab" ||
		got.GetCertificates()[1].GetSha256() != "cd" {
		t.Errorf("TlsChain = %v", got)
	}
	if none := probe.Result(prober.Result{Passing: true}); none.TlsChain != nil {
		t.Errorf("TlsChain = %v without a chain", none.TlsChain)
	}
}

// A scripted run's artifacts and dropped lines reach the CheckResult as the run kept them.
func TestResultArtifacts(t *testing.T) {
	t.Parallel()
	got := probe.Result(prober.Result{Kind: check.Browser, Passing: true, BodyAvailability: prober.BodyNotRecorded,
		Artifacts: []pwscript.Artifact{
			{Name: "shots-home.png", ContentType: "image/png", Body: []byte("\x89PNG")},
			{Name: "note", ContentType: "text/plain", Body: []byte("hi")},
		},
		ArtifactsDropped: []string{`artifact "big.png" dropped: a run keeps at most 20 artifacts`}})
	a := got.GetArtifacts()
	if len(a) != 2 || a[0].GetName() != "shots-home.png" || a[0].GetContentType() != "image/png" || string(a[0].GetBody()) != "\x89PNG" ||
		a[1].GetName() != "note" || string(a[1].GetBody()) != "hi" || len(got.GetArtifactsDropped()) != 1 {
		t.Errorf("artifacts %v, dropped %q", a, got.GetArtifactsDropped())
	}
}
