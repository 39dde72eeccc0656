package ingest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// bodyAvailabilities is the complete list of body_availability values (api/openapi/checks.yaml).
var bodyAvailabilities = []string{"AVAILABLE", "NOT_RECORDED", "EXPIRED", "TRACE_ONLY"}

// How far a result may stray from its job's signed bounds (jobguard.Bounds).
const (
	// MaxClockSkew is how far an agent's clock may be off the control plane's: a result's
	// dispatched_at and checked_at lie between its job's scheduled time and the end of the
	// job's last possible attempt, each widened by this much.
	MaxClockSkew = 30 * time.Second
	// LateSlack is how long after the end of its job's last possible attempt a result may
	// still arrive and be judged: it covers the result's way to the control plane, an agent
	// reconnecting, and a batch retried. A result arriving later is recorded as a run skipped
	// LATE, never judged. It is longer than the evaluator's RunGrace (15 s), the wait for a
	// run's other regions after the last attempt's time.
	LateSlack = 30 * time.Second
)

// Reasons a result is refused (vantage_ingest_rejected_total{reason}).
const (
	rejectInvalid  = "invalid_result"  // malformed
	rejectUnsigned = "unsigned_result" // no signature of a job of its region
	rejectOutOfJob = "out_of_bounds"   // an attempt, or a time, its job cannot have had
)

// accept turns a result sent on agent's stream into the row to store, as of now: it validates
// the result (toRow), verifies its job's signature with guard, and places it within the bounds
// the signature vouches for (place). A refused result comes back with its reason and an error
// for the agent's ack.
func accept(res *vantagev1.CheckResult, agent Agent, guard JobGuard, now time.Time) (store.ResultRow, string, error) {
	row, err := toRow(res, agent.Regions)
	if err == nil && row.NotRunReason != "" && !knownNotRunReason(row.NotRunReason, agent.Caps) {
		err = fmt.Errorf("not_run_reason %q is not one the stream's capabilities %v know (%s, %s with %s; %s with %s)",
			row.NotRunReason, agent.Caps, wire.NotRunExpired, wire.NotRunShutdown, wire.CapabilityBatchedResults,
			wire.NotRunShed, wire.CapabilityShedReason)
	}
	if err != nil {
		return row, rejectInvalid, fmt.Errorf("invalid result: %w", err)
	}
	bounds, err := guard.VerifyResult(res)
	if err != nil {
		return row, rejectUnsigned, fmt.Errorf("result of job %s refused: %w", res.GetJobId(), err)
	}
	if err := place(&row, bounds, now); err != nil {
		return row, rejectOutOfJob, fmt.Errorf("invalid result: %w", err)
	}
	return row, "", nil
}

// place checks r against its job's signed bounds b at arrival time now: its attempt is one
// of the job's, and it was dispatched and checked between the job's scheduled time and the
// end of the job's last possible attempt (the deadline, by which the agent must start it, plus
// every attempt's timeout) — and not after now —, give or take MaxClockSkew. A result
// arriving after that end plus LateSlack becomes a run skipped LATE. A run the agent did not
// run has no probe times and is never late: it is already a skipped run.
func place(r *store.ResultRow, b jobguard.Bounds, now time.Time) error {
	attempts := max(b.MaxAttempts, 1) // as the agent reads max_attempts
	if uint32(r.AttemptNumber) > attempts {
		return fmt.Errorf("attempt_number %d is beyond its job's %d attempts", r.AttemptNumber, attempts)
	}
	if r.NotRunReason != "" {
		return nil
	}
	end := b.Deadline.Add(time.Duration(attempts) * b.Timeout)
	last := end // nothing is checked after the job's end, nor in the future
	if now.Before(last) {
		last = now
	}
	from, to := r.ScheduledAt.Add(-MaxClockSkew), last.Add(MaxClockSkew)
	times := []struct {
		name string
		t    *time.Time
	}{{"dispatched_at", r.DispatchedAt}, {"checked_at", &r.CheckedAt}}
	for _, f := range times {
		if f.t != nil && (f.t.Before(from) || f.t.After(to)) {
			return fmt.Errorf("%s %s is outside its job's window, %s to %s", f.name,
				f.t.Format(time.RFC3339Nano), from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
		}
	}
	if now.After(end.Add(LateSlack)) {
		r.NotRunReason = store.SkipLate
	}
	return nil
}

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
	r.NotRunReason = res.GetNotRunReason()
	r.Passing = res.GetPassing()
	r.ResponseTimeMs = res.GetResponseTimeMs()
	r.ResponseCode = res.ResponseCode
	var truncated []string
	r.ResponseBody = capped(clean(res.ResponseBody), wire.MaxResponseBodyBytes, "response_body", &truncated)
	r.ResultSummary = capped(clean(res.ResultSummary), wire.MaxResultSummaryBytes, "result_summary", &truncated)
	r.FailureSource = clean(res.FailureSource)
	r.FailureType = clean(res.FailureType)
	r.DNSStatus = clean(res.DnsStatus)
	r.Resolver = clean(res.Resolver)
	r.ParsedResponse = clean(res.ParsedResponse)
	r.TCPStatus = clean(res.TcpStatus)
	if tm := res.GetTimings(); tm != nil {
		r.DNSTimeMs, r.ConnectTimeMs, r.DataTimeMs = tm.DnsMs, tm.ConnectMs, tm.DataMs
		r.TLSTimeMs, r.FirstByteTimeMs = finite(tm.TlsMs), finite(tm.FirstByteMs)
	}
	shot, dropped := screenshot(res.GetScreenshot())
	r.Screenshot = shot
	var artifactsDropped []string
	r.Artifacts, artifactsDropped = artifacts(res)
	if r.Details, err = details(res, dropped, truncated, artifactsDropped); err != nil {
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
	TLSChain    *store.TLSChain    `json:"tls_chain,omitempty"`
	Assertions  []assertionOutcome `json:"assertions,omitempty"`
	// Steps are a scripted browser run's tests and test.steps.
	Steps []resultStep `json:"steps,omitempty"`
	// ScreenshotDropped says why a screenshot the agent sent was not stored.
	ScreenshotDropped string `json:"screenshot_dropped,omitempty"`
	// ArtifactsDropped says, a line each, which artifacts of a scripted run were not stored
	// (the run's caps on the agent, or this side's checks).
	ArtifactsDropped []string `json:"artifacts_dropped,omitempty"`
	// Truncated names the fields cut to their bound (capped) when stored.
	Truncated []string `json:"truncated,omitempty"`
	// The extension kinds' observations, each only on results of its kind.
	*store.PingObservation
	GRPCStatus *string `json:"grpc_status,omitempty"`
	*store.WebSocketObservation
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

func details(res *vantagev1.CheckResult, screenshotDropped string, truncated, artifactsDropped []string) ([]byte, error) {
	d := newDetails(res, screenshotDropped, truncated, artifactsDropped)
	b, err := d.encode()
	if err != nil {
		return nil, fmt.Errorf("encode result details: %w", err)
	}
	return b, nil
}

func newDetails(res *vantagev1.CheckResult, screenshotDropped string, truncated, artifactsDropped []string) resultDetails {
	d := resultDetails{
		AgentID:           cleanString(res.GetAgentId()),
		ScheduledAt:       time.UnixMilli(res.GetScheduledAtUnixMs()).UTC(),
		ScreenshotDropped: screenshotDropped,
		ArtifactsDropped:  artifactsDropped,
		Truncated:         truncated,
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
	d.TLSChain = tlsChain(res.GetTlsChain())
	if as := res.GetAssertions(); len(as) > 0 {
		d.Assertions = make([]assertionOutcome, 0, len(as))
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
	kindObservations(res, &d)
	return d
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

// capped cuts s to at most limit bytes without splitting a character (the agent's own bound,
// applied again whatever the agent sent), and adds field to truncated when it did.
func capped(s *string, limit int, field string, truncated *[]string) *string {
	if s == nil || len(*s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart((*s)[cut]) {
		cut--
	}
	c := (*s)[:cut]
	*truncated = append(*truncated, field)
	return &c
}

// clean returns s itself when it has no NUL: the row may share the received message's
// strings, which nothing changes afterwards.
func clean(s *string) *string {
	if s == nil || strings.IndexByte(*s, 0) < 0 {
		return s
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

// kindObservations copies the extension kinds' observations of res into d.
func kindObservations(res *vantagev1.CheckResult, d *resultDetails) {
	switch res.GetKind() {
	case vantagev1.CheckKind_CHECK_KIND_PING:
		d.PingObservation = &store.PingObservation{
			PingSent: uintToInt(res.PingSent), PingReceived: uintToInt(res.PingReceived),
			PingLossPercent: finite(res.PingLossPercent), PingRTTMinMs: finite(res.PingRttMinMs),
			PingRTTAvgMs: finite(res.PingRttAvgMs), PingRTTMaxMs: finite(res.PingRttMaxMs), PingRTTStddevMs: finite(res.PingRttStddevMs),
		}
	case vantagev1.CheckKind_CHECK_KIND_GRPC:
		d.GRPCStatus = clean(res.GrpcStatus)
	case vantagev1.CheckKind_CHECK_KIND_WEBSOCKET:
		d.WebSocketObservation = &store.WebSocketObservation{
			WebSocketOpenMs: finite(res.WebsocketOpenMs), WebSocketReplyMs: finite(res.WebsocketReplyMs),
		}
	}
}

func uintToInt(p *uint32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// tlsChain is the stored form of an attempt's served certificate chain (nil when none), its
// strings cleaned as every string an agent sends; at most MaxTLSChain certificates and
// MaxTLSSANs names each are kept.
func tlsChain(c *vantagev1.TLSChain) *store.TLSChain {
	if c == nil {
		return nil
	}
	out := &store.TLSChain{Host: cleanString(c.GetHost()), Verified: c.GetVerified(), Problem: cleanString(c.GetProblem()),
		Certificates: []store.TLSCertificate{}}
	for i, crt := range c.GetCertificates() {
		if i == MaxTLSChain {
			break
		}
		sans := make([]string, 0, min(len(crt.GetSans()), MaxTLSSANs))
		for j, n := range crt.GetSans() {
			if j == MaxTLSSANs {
				break
			}
			sans = append(sans, cleanString(n))
		}
		out.Certificates = append(out.Certificates, store.TLSCertificate{Subject: cleanString(crt.GetSubject()),
			Issuer: cleanString(crt.GetIssuer()), SANs: sans, NotBefore: time.UnixMilli(crt.GetNotBeforeUnixMs()).UTC(),
			NotAfter: time.UnixMilli(crt.GetNotAfterUnixMs()).UTC(), SHA256: cleanString(crt.GetSha256())})
	}
	return out
}

// Bounds of a stored certificate chain: an agent is trusted to send what a check saw, not to
// swell the results table.
const (
	MaxTLSChain = 5
	MaxTLSSANs  = 100
)
