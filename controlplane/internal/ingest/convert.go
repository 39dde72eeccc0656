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
	shot, dropped := screenshot(res.GetScreenshot())
	r.Screenshot = shot
	if r.Details, err = details(res, dropped); err != nil {
		return r, err
	}
	return r, nil
}

// screenshot returns the result's screenshot when it is a PNG or JPEG of at most
// wire.MaxScreenshotBytes; otherwise nil and why it was dropped (the rest of the result is
// stored as usual).
func screenshot(b []byte) ([]byte, string) {
	switch {
	case len(b) == 0:
		return nil, ""
	case len(b) > wire.MaxScreenshotBytes:
		return nil, fmt.Sprintf("%d bytes, above the limit of %d", len(b), wire.MaxScreenshotBytes)
	case wire.ScreenshotType(b) == "":
		return nil, "neither PNG nor JPEG"
	}
	return b, ""
}

// resultDetails is check_results.details.
type resultDetails struct {
	AgentID     string             `json:"agent_id,omitempty"`
	Kind        string             `json:"kind,omitempty"`
	ScheduledAt time.Time          `json:"scheduled_at"`
	Timings     *resultTimings     `json:"timings,omitempty"`
	TLSNotAfter *time.Time         `json:"tls_not_after,omitempty"`
	Assertions  []assertionOutcome `json:"assertions,omitempty"`
	// Steps are a scripted browser run's tests and test.steps.
	Steps []resultStep `json:"steps,omitempty"`
	// ScreenshotDropped says why a screenshot the agent sent was not stored.
	ScreenshotDropped string `json:"screenshot_dropped,omitempty"`
}

type resultStep struct {
	Title      string  `json:"title"`
	Location   string  `json:"location,omitempty"`
	Depth      uint32  `json:"depth"`
	StartMs    float64 `json:"start_ms"`
	DurationMs float64 `json:"duration_ms"`
	Passed     bool    `json:"passed"`
	Error      string  `json:"error,omitempty"`
}

type resultTimings struct {
	DNSMs       *float64 `json:"dns_ms,omitempty"`
	ConnectMs   *float64 `json:"connect_ms,omitempty"`
	TLSMs       *float64 `json:"tls_ms,omitempty"`
	FirstByteMs *float64 `json:"first_byte_ms,omitempty"`
	DataMs      *float64 `json:"data_ms,omitempty"`
	TotalMs     float64  `json:"total_ms"`
	// Browser runs (Navigation Timing of the main document).
	DOMContentLoadedMs *float64 `json:"dom_content_loaded_ms,omitempty"`
	LoadMs             *float64 `json:"load_ms,omitempty"`
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

func details(res *vantagev1.CheckResult, screenshotDropped string) ([]byte, error) {
	d := resultDetails{
		AgentID:           cleanString(res.GetAgentId()),
		ScheduledAt:       time.UnixMilli(res.GetScheduledAtUnixMs()).UTC(),
		ScreenshotDropped: screenshotDropped,
	}
	if k := res.GetKind(); k != vantagev1.CheckKind_CHECK_KIND_UNSPECIFIED {
		d.Kind = strings.TrimPrefix(k.String(), "CHECK_KIND_")
	}
	if tm := res.GetTimings(); tm != nil {
		d.Timings = &resultTimings{DNSMs: finite(tm.DnsMs), ConnectMs: finite(tm.ConnectMs), TLSMs: finite(tm.TlsMs),
			FirstByteMs: finite(tm.FirstByteMs), DataMs: finite(tm.DataMs), TotalMs: tm.GetTotalMs(),
			DOMContentLoadedMs: finite(tm.DomContentLoadedMs), LoadMs: finite(tm.LoadMs)}
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
	for _, s := range res.GetSteps() {
		d.Steps = append(d.Steps, resultStep{Title: cleanString(s.GetTitle()), Location: cleanString(s.GetLocation()),
			Depth: s.GetDepth(), StartMs: finiteOr0(s.GetStartMs()), DurationMs: finiteOr0(s.GetDurationMs()),
			Passed: s.GetPassed(), Error: cleanString(s.GetError())})
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode result details: %w", err)
	}
	return b, nil
}

// finiteOr0 is f, or 0 for NaN and infinities.
func finiteOr0(f float64) float64 {
	if finite(&f) == nil {
		return 0
	}
	return f
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
