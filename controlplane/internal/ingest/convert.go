package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// bodyAvailabilities is the complete list of body_availability values (supplement §2.16).
var bodyAvailabilities = []string{"AVAILABLE", "NOT_RECORDED", "EXPIRED", "TRACE_ONLY"}

// toRow validates a result sent by an agent serving regions and maps every field onto a
// check_results row: the columns for what the API lists, details (jsonb) for the rest — the
// agent, the run's scheduled time, every timing, the TLS certificate expiry and the assertion
// outcomes. Text is stripped of NUL characters, which PostgreSQL text and jsonb reject, so that
// one odd response body cannot fail a whole batch.
func toRow(res *vantagev1.CheckResult, regions []string) (store.ResultRow, error) {
	var r store.ResultRow
	if res == nil {
		return r, errors.New("result is missing")
	}
	var err error
	if r.JobID, err = uuid.Parse(res.GetJobId()); err != nil {
		return r, fmt.Errorf("job_id %q is not a uuid", res.GetJobId())
	}
	if r.CheckID, err = uuid.Parse(res.GetCheckId()); err != nil {
		return r, fmt.Errorf("check_id %q is not a uuid", res.GetCheckId())
	}
	if r.OrgID, err = uuid.Parse(res.GetOrgId()); err != nil {
		return r, fmt.Errorf("org_id %q is not a uuid", res.GetOrgId())
	}
	r.Region = res.GetRegion()
	if !slices.Contains(regions, r.Region) {
		return r, fmt.Errorf("region %q is not one this agent registered for", r.Region)
	}
	if res.GetAttemptNumber() < 1 || res.GetAttemptNumber() > math.MaxInt32 {
		return r, fmt.Errorf("attempt_number %d is out of range", res.GetAttemptNumber())
	}
	if res.GetScheduledAtUnixMs() <= 0 || res.GetCheckedAtUnixMs() <= 0 {
		return r, errors.New("scheduled_at and checked_at are required")
	}
	if rt := res.GetResponseTimeMs(); rt < 0 || math.IsNaN(rt) || math.IsInf(rt, 0) {
		return r, fmt.Errorf("response_time_ms %v is not a duration", rt)
	}
	r.BodyAvailability = res.GetBodyAvailability()
	if r.BodyAvailability == "" {
		r.BodyAvailability = "NOT_RECORDED"
	} else if !slices.Contains(bodyAvailabilities, r.BodyAvailability) {
		return r, fmt.Errorf("body_availability %q is not one of %s", r.BodyAvailability, strings.Join(bodyAvailabilities, ", "))
	}

	r.ID = uuid.Must(uuid.NewV7())
	r.AttemptNumber = int32(res.GetAttemptNumber())
	r.IsFinalAttempt = res.GetIsFinalAttempt()
	r.ScheduledAt = time.UnixMilli(res.GetScheduledAtUnixMs()).UTC()
	r.CheckedAt = time.UnixMilli(res.GetCheckedAtUnixMs()).UTC()
	if ms := res.GetDispatchedAtUnixMs(); ms > 0 {
		t := time.UnixMilli(ms).UTC()
		r.DispatchedAt = &t
	}
	r.Passing = res.GetPassing()
	r.ResponseTimeMs = res.GetResponseTimeMs()
	r.ResponseCode = res.ResponseCode
	r.ResponseBody = clean(res.ResponseBody)
	r.ResultSummary = clean(res.ResultSummary)
	r.FailureSource = clean(res.FailureSource)
	r.FailureType = clean(res.FailureType)
	r.DNSStatus = clean(res.DnsStatus)
	r.Resolver = clean(res.Resolver)
	r.ParsedResponse = clean(res.ParsedResponse)
	r.TCPStatus = clean(res.TcpStatus)
	if tm := res.GetTimings(); tm != nil {
		r.DNSTimeMs, r.ConnectTimeMs, r.DataTimeMs = tm.DnsMs, tm.ConnectMs, tm.DataMs
	}
	if r.Details, err = details(res); err != nil {
		return r, err
	}
	return r, nil
}

// resultDetails is check_results.details.
type resultDetails struct {
	AgentID     string             `json:"agent_id,omitempty"`
	Kind        string             `json:"kind,omitempty"`
	ScheduledAt time.Time          `json:"scheduled_at"`
	Timings     *resultTimings     `json:"timings,omitempty"`
	TLSNotAfter *time.Time         `json:"tls_not_after,omitempty"`
	Assertions  []assertionOutcome `json:"assertions,omitempty"`
}

type resultTimings struct {
	DNSMs       *float64 `json:"dns_ms,omitempty"`
	ConnectMs   *float64 `json:"connect_ms,omitempty"`
	TLSMs       *float64 `json:"tls_ms,omitempty"`
	FirstByteMs *float64 `json:"first_byte_ms,omitempty"`
	DataMs      *float64 `json:"data_ms,omitempty"`
	TotalMs     float64  `json:"total_ms"`
}

type assertionOutcome struct {
	Type       string `json:"type"`
	Property   string `json:"property"`
	Comparison string `json:"comparison"`
	Expected   string `json:"expected"`
	Passed     bool   `json:"passed"`
	Actual     string `json:"actual,omitempty"`
	Message    string `json:"message,omitempty"`
}

func details(res *vantagev1.CheckResult) ([]byte, error) {
	d := resultDetails{
		AgentID:     cleanString(res.GetAgentId()),
		ScheduledAt: time.UnixMilli(res.GetScheduledAtUnixMs()).UTC(),
	}
	if k := res.GetKind(); k != vantagev1.CheckKind_CHECK_KIND_UNSPECIFIED {
		d.Kind = strings.TrimPrefix(k.String(), "CHECK_KIND_")
	}
	if tm := res.GetTimings(); tm != nil {
		d.Timings = &resultTimings{DNSMs: finite(tm.DnsMs), ConnectMs: finite(tm.ConnectMs), TLSMs: finite(tm.TlsMs),
			FirstByteMs: finite(tm.FirstByteMs), DataMs: finite(tm.DataMs), TotalMs: tm.GetTotalMs()}
		if f := finite(&d.Timings.TotalMs); f == nil {
			d.Timings.TotalMs = 0
		}
	}
	if res.TlsNotAfterUnixMs != nil {
		t := time.UnixMilli(*res.TlsNotAfterUnixMs).UTC()
		d.TLSNotAfter = &t
	}
	for _, a := range res.GetAssertions() {
		d.Assertions = append(d.Assertions, assertionOutcome{
			Type: cleanString(a.GetAssertion().GetType()), Property: cleanString(a.GetAssertion().GetProperty()),
			Comparison: cleanString(a.GetAssertion().GetComparison()), Expected: cleanString(a.GetAssertion().GetExpected()),
			Passed: a.GetPassed(), Actual: cleanString(a.GetActual()), Message: cleanString(a.GetMessage())})
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode result details: %w", err)
	}
	return b, nil
}

// finite drops NaN and infinities, which JSON cannot carry.
func finite(f *float64) *float64 {
	if f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) {
		return nil
	}
	return f
}

func clean(s *string) *string {
	if s == nil {
		return nil
	}
	c := cleanString(*s)
	return &c
}

func cleanString(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// validRegion reports whether an agent may register for region: "cloud:<name>", no commas.
func validRegion(region string) bool {
	name, ok := strings.CutPrefix(region, wire.RegionPrefix)
	return ok && name != "" && !strings.ContainsAny(name, ", \t\n")
}
