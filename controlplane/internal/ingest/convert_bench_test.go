package ingest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// benchResult is a passing HTTP attempt as an agent sends it: every timing, the certificate's
// expiry and two assertion outcomes.
func benchResult() *vantagev1.CheckResult {
	at := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	code, summary := int32(200), "200 OK in 187 ms"
	f := func(v float64) *float64 { return &v }
	notAfter := at.AddDate(0, 2, 0).UnixMilli()
	return &vantagev1.CheckResult{
		JobId: uuid.NewString(), CheckId: uuid.NewString(), OrgId: uuid.NewString(), Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME,
		Region: "cloud:us-east-1", AgentId: "agent-us-east-1-a", AttemptNumber: 1, IsFinalAttempt: true,
		ScheduledAtUnixMs: at.UnixMilli(), DispatchedAtUnixMs: at.Add(10 * time.Millisecond).UnixMilli(),
		CheckedAtUnixMs: at.Add(200 * time.Millisecond).UnixMilli(), Passing: true, ResponseTimeMs: 187.25,
		ResponseCode: &code, ResultSummary: &summary, BodyAvailability: "NOT_RECORDED",
		Timings: &vantagev1.Timings{DnsMs: f(2.5), ConnectMs: f(11.75), TlsMs: f(24.125), FirstByteMs: f(140.5),
			DataMs: f(8.375), TotalMs: 187.25},
		TlsNotAfterUnixMs: &notAfter,
		Assertions: []*vantagev1.AssertionOutcome{
			{Assertion: &vantagev1.Assertion{Type: "STATUS_CODE", Property: "", Comparison: "EQUALS", Expected: "200"}, Passed: true, Actual: "200"},
			{Assertion: &vantagev1.Assertion{Type: "RESPONSE_TIME", Comparison: "LESS_THAN", Expected: "2000"}, Passed: true, Actual: "187"},
		},
	}
}

// BenchmarkToRow measures the control plane's conversion of one result into its stored row
// (validation, cleaning, the details document), without the stream or the database:
//
//	go test -run '^$' -bench ToRow -benchmem ./controlplane/internal/ingest/
func BenchmarkToRow(b *testing.B) {
	res := benchResult()
	regions := []string{"cloud:us-east-1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toRow(res, regions); err != nil {
			b.Fatal(err)
		}
	}
}
