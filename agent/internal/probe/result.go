package probe

import (
	"time"

	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/tlscert"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Result is the CheckResult fields a probe result fills; empty strings and zero numbers are
// left unset (null).
func Result(r prober.Result) *vantagev1.CheckResult {
	out := &vantagev1.CheckResult{
		Passing:          r.Passing,
		ResponseTimeMs:   ms(r.ResponseTime),
		BodyAvailability: r.BodyAvailability,
		ResultSummary:    optString(r.ResultSummary),
		FailureSource:    optString(r.FailureSource),
		FailureType:      optString(r.FailureType),
		DnsStatus:        optString(r.DNSStatus),
		Resolver:         optString(r.Resolver),
		ParsedResponse:   optString(r.ParsedResponse),
		TcpStatus:        optString(r.TCPStatus),
		Timings: &vantagev1.Timings{
			DnsMs:       optMs(r.Timings.DNS),
			ConnectMs:   optMs(r.Timings.Connect),
			TlsMs:       optMs(r.Timings.TLS),
			FirstByteMs: optMs(r.Timings.FirstByte),
			DataMs:      optMs(r.Timings.Data),
			TotalMs:     ms(r.Timings.Total),

			DomContentLoadedMs: optMs(r.Timings.DOMContentLoaded),
			LoadMs:             optMs(r.Timings.Load),
		},
		Screenshot: r.Screenshot,
	}
	for _, a := range r.Artifacts {
		out.Artifacts = append(out.Artifacts, &vantagev1.Artifact{Name: a.Name, ContentType: a.ContentType, Body: a.Body})
	}
	out.ArtifactsDropped = r.ArtifactsDropped
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, &vantagev1.Step{Title: s.Title, Location: s.Location, Depth: uint32(s.Depth),
			StartMs: ms(s.Start), DurationMs: ms(s.Duration), Passed: s.Passed, Error: s.Error})
	}
	if r.ResponseCode != 0 {
		code := int32(r.ResponseCode)
		out.ResponseCode = &code
	}
	if r.BodyAvailability == prober.BodyAvailable { // an empty body that arrived is "", not null
		body := r.ResponseBody
		out.ResponseBody = &body
	}
	if s := r.Ping; s != nil {
		sent, received, loss := uint32(s.Sent), uint32(s.Received), s.LossPercent()
		out.PingSent, out.PingReceived, out.PingLossPercent = &sent, &received, &loss
		if s.Received > 0 {
			out.PingRttMinMs, out.PingRttAvgMs, out.PingRttMaxMs, out.PingRttStddevMs = optMs(s.Min), optMs(s.Avg), optMs(s.Max), optMs(s.StdDev)
			if s.StdDev == 0 { // one reply, or identical ones: a deviation of 0, not unknown
				zero := 0.0
				out.PingRttStddevMs = &zero
			}
		}
	}
	out.GrpcStatus = optString(r.GRPCStatus)
	out.WebsocketOpenMs, out.WebsocketReplyMs = optMs(r.WebSocketOpen), optMs(r.WebSocketReply)
	if !r.CertNotAfter.IsZero() {
		t := r.CertNotAfter.UnixMilli()
		out.TlsNotAfterUnixMs = &t
	}
	out.TlsChain = tlsChain(r.TLS)
	for _, o := range r.Assertions {
		out.Assertions = append(out.Assertions, &vantagev1.AssertionOutcome{
			Assertion: &vantagev1.Assertion{
				Type: o.Assertion.Type, Property: o.Assertion.Property, Comparison: o.Assertion.Comparison, Expected: o.Assertion.Expected,
			},
			Passed:  o.Passed,
			Actual:  o.Actual,
			Message: o.Message,
		})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func optMs(d time.Duration) *float64 {
	if d == 0 {
		return nil
	}
	v := ms(d)
	return &v
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tlsChain is the result's served certificate chain; nil when there was none.
func tlsChain(c *tlscert.Chain) *vantagev1.TLSChain {
	if c == nil {
		return nil
	}
	out := &vantagev1.TLSChain{Host: c.Host, Verified: c.Verified, Problem: c.Problem}
	for _, crt := range c.Certificates {
		out.Certificates = append(out.Certificates, &vantagev1.TLSCertificate{Subject: crt.Subject, Issuer: crt.Issuer,
			Sans: crt.SANs, NotBeforeUnixMs: crt.NotBefore.UnixMilli(), NotAfterUnixMs: crt.NotAfter.UnixMilli(), Sha256: crt.SHA256})
	}
	return out
}
