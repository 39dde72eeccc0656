package api

import (
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// Response shapes of checks (api/openapi/checks.yaml, api/openapi/checks-uptime.yaml). Every field is always present;
// pointers and nil maps/slices are the contract's nulls, so null versus empty is decided here
// and nowhere else.

// checkCommonJSON holds the fields common to every kind.
type checkCommonJSON struct {
	ID                           string       `json:"id"`
	Name                         string       `json:"name"`
	LastQueued                   *string      `json:"last_queued"`
	Status                       string       `json:"status"`
	ReminderAlertIntervalMinutes *int         `json:"reminder_alert_interval_minutes"`
	ConfirmationPeriodSeconds    int          `json:"confirmation_period_seconds"`
	RecoveryPeriodSeconds        int          `json:"recovery_period_seconds"`
	TestInterval                 int          `json:"test_interval"`
	Timeout                      *int         `json:"timeout"`
	AlertPriority                string       `json:"alert_priority"`
	TestRegions                  []string     `json:"test_regions"`
	RegionQuorum                 check.Quorum `json:"region_quorum"` // extension (docs/detection.md)
	DependsOn                    []string     `json:"depends_on"`    // extension (docs/detection.md)
	// DegradedResponseTimeMs and Degraded are extensions (docs/detection.md): the slowness
	// threshold, and why the check is degraded now (null when it is not).
	DegradedResponseTimeMs *int               `json:"degraded_response_time_ms"`
	Degraded               *checkDegradedJSON `json:"degraded"`
	check.Alerts
	CheckType  string            `json:"check_type"`
	Version    *string           `json:"version"`
	ProjectID  *string           `json:"project_id"`
	Assertions []check.Assertion `json:"assertions"`
	// SkippedRuns24h is an extension (docs/api-extensions.md): runs of the last 24 hours, one
	// per region, that did not run (overload, a dead agent, a scheduler that fell behind).
	SkippedRuns24h int64 `json:"skipped_runs_24h"`
}

// checkDegradedJSON says why an UP check is degraded: "regional" (some regions fail), "slow"
// (slower than degraded_response_time_ms in the quorum's regions), or both.
type checkDegradedJSON struct {
	Reasons []string `json:"reasons"`
}

// degradedJSON is the degraded field of a check: null without reasons, and while it is paused
// (its runs are not judged, so a degradation from before the pause is stale).
func degradedJSON(c store.Check) *checkDegradedJSON {
	if len(c.DegradedReasons) == 0 || c.Paused {
		return nil
	}
	return &checkDegradedJSON{Reasons: c.DegradedReasons}
}

// The kinds' own fields are the model's (pkg/check), rendered under their json names: a field
// added to a kind's specification shows up here without an edit.

// httpCheckJSON is an uptime or browser check.
type httpCheckJSON struct {
	checkCommonJSON
	*check.HTTPSpec
}

// dnsCheckJSON is a DNS check.
type dnsCheckJSON struct {
	checkCommonJSON
	URL *string `json:"url"` // always null: only uptime and browser checks have a url
	*check.DNSSpec
}

// tcpCheckJSON is a TCP check.
type tcpCheckJSON struct {
	checkCommonJSON
	URL *string `json:"url"` // always null
	*check.TCPSpec
}

// pingCheckJSON is a ping check (extension).
type pingCheckJSON struct {
	checkCommonJSON
	URL *string `json:"url"` // always null
	*check.PingSpec
}

// grpcCheckJSON is a gRPC health check (extension).
type grpcCheckJSON struct {
	checkCommonJSON
	URL *string `json:"url"` // always null
	*check.GRPCSpec
}

// websocketCheckJSON is a WebSocket check (extension); its url is the ws: or wss: URL.
type websocketCheckJSON struct {
	checkCommonJSON
	*check.WebSocketSpec
}

// multistepCheckJSON is a multistep check (an extension). Its script is always shown: it is
// the check's whole configuration.
type multistepCheckJSON struct {
	checkCommonJSON
	URL *string `json:"url"` // always null
	*check.MultistepSpec
}

// checkStatus is the status a check shows: PAUSED wins over MAINTENANCE (an active window),
// which wins over MUTED, which wins over the status machine's state.
func checkStatus(state string, paused, muted, maintenance bool) string {
	switch {
	case paused:
		return "PAUSED"
	case maintenance:
		return "MAINTENANCE"
	case muted:
		return "MUTED"
	}
	return state
}

func uuidString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// renderCheck is the response of every route that returns a check. The script is only shown
// when withScript (GET retrieve); mutation responses do not load it and show null.
func renderCheck(c store.Check, withScript bool) any {
	s := c.Spec
	alerts := s.Alerts
	alerts.Normalize()
	regions := s.TestRegions
	if regions == nil {
		regions = []string{}
	}
	deps := s.DependsOn
	if deps == nil {
		deps = []string{}
	}
	version := s.Version
	if version == nil && s.Kind != check.Uptime {
		if v := check.DefaultVersion(s.Kind); v != "" {
			version = &v
		}
	}
	common := checkCommonJSON{
		ID:                           c.ID.String(),
		Name:                         s.Name,
		LastQueued:                   formatTimePtr(c.LastQueued),
		Status:                       checkStatus(c.State, c.Paused, c.Muted, c.InMaintenance),
		ReminderAlertIntervalMinutes: s.ReminderAlertIntervalMinutes,
		ConfirmationPeriodSeconds:    s.ConfirmationPeriodSeconds,
		RecoveryPeriodSeconds:        s.RecoveryPeriodSeconds,
		TestInterval:                 s.TestInterval,
		Timeout:                      s.TimeoutMs,
		AlertPriority:                s.AlertPriority,
		TestRegions:                  regions,
		RegionQuorum:                 s.RegionQuorum,
		DependsOn:                    deps,
		DegradedResponseTimeMs:       s.DegradedResponseTimeMs,
		Degraded:                     degradedJSON(c),
		Alerts:                       alerts,
		CheckType:                    string(s.Kind),
		Version:                      version,
		ProjectID:                    uuidString(c.ProjectID),
		Assertions:                   s.Assertions,
		SkippedRuns24h:               c.SkippedRuns24h,
	}
	switch {
	case s.DNS != nil:
		d := *s.DNS
		return dnsCheckJSON{checkCommonJSON: common, DNSSpec: &d}
	case s.TCP != nil:
		t := *s.TCP
		return tcpCheckJSON{checkCommonJSON: common, TCPSpec: &t}
	case s.Ping != nil:
		p := *s.Ping
		return pingCheckJSON{checkCommonJSON: common, PingSpec: &p}
	case s.GRPC != nil:
		g := *s.GRPC
		return grpcCheckJSON{checkCommonJSON: common, GRPCSpec: &g}
	case s.WebSocket != nil:
		w := *s.WebSocket
		return websocketCheckJSON{checkCommonJSON: common, WebSocketSpec: &w}
	case s.Multistep != nil:
		m := *s.Multistep
		return multistepCheckJSON{checkCommonJSON: common, MultistepSpec: &m}
	}
	var h check.HTTPSpec // a copy: callers may blank fields of the rendering (RenderCheckForWebhook)
	if s.HTTP != nil {
		h = *s.HTTP
	}
	if !withScript {
		h.Script = nil
	}
	return httpCheckJSON{checkCommonJSON: common, HTTPSpec: &h}
}

// checkListItemJSON is one item of GET /v1/checks; the dns_* and tcp_* fields are null for
// other kinds.
type checkListItemJSON struct {
	ProjectID     *string `json:"project_id"`
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	URL           *string `json:"url"`
	CheckType     string  `json:"check_type"`
	LastQueued    *string `json:"last_queued"`
	Status        string  `json:"status"`
	DNSDomain     *string `json:"dns_domain"`
	DNSRecordType *string `json:"dns_record_type"`
	DNSResolver   *string `json:"dns_resolver"`
	DNSProtocol   *string `json:"dns_protocol"`
	TCPHostname   *string `json:"tcp_hostname"`
	TCPPort       *int    `json:"tcp_port"`
	TCPIPFamily   *string `json:"tcp_ip_family"`
	// SkippedRuns24h is an extension, as on checkCommonJSON.
	SkippedRuns24h int64 `json:"skipped_runs_24h"`
}

func renderCheckListItem(c store.CheckSummary) checkListItemJSON {
	out := checkListItemJSON{
		ProjectID: uuidString(c.ProjectID), ID: c.ID.String(), Name: c.Name, URL: c.URL, CheckType: string(c.Kind),
		LastQueued: formatTimePtr(c.LastQueued), Status: checkStatus(c.State, c.Paused, c.Muted, c.InMaintenance),
		SkippedRuns24h: c.SkippedRuns24h,
	}
	if d := c.DNS; d != nil {
		out.DNSDomain, out.DNSRecordType, out.DNSResolver, out.DNSProtocol = &d.Domain, &d.RecordType, d.Resolver, &d.Protocol
	}
	if t := c.TCP; t != nil {
		out.TCPHostname, out.TCPPort, out.TCPIPFamily = &t.Hostname, &t.Port, &t.IPFamily
	}
	return out
}

// checkIncidentJSON is one check incident; ended_at is null while it is open.
type checkIncidentJSON struct {
	ID        string  `json:"id"`
	CheckID   string  `json:"check_id"`
	StartedAt string  `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	CausedBy  *string `json:"caused_by"` // extension (docs/detection.md)
}

// resultPageJSON is a check's result page (api/openapi/checks.yaml): its result_info sits inside the
// result, not in the envelope.
type resultPageJSON struct {
	CheckID    string     `json:"check_id"`
	CheckType  string     `json:"check_type"`
	Window     windowJSON `json:"window"`
	Results    []any      `json:"results"`
	ResultInfo resultInfo `json:"result_info"`
}

type windowJSON struct {
	From string `json:"from"` // inclusive
	To   string `json:"to"`   // exclusive
}

// resultCommonJSON holds the fields of every result.
type resultCommonJSON struct {
	ID               string  `json:"id"`
	CheckedAt        string  `json:"checked_at"`
	CheckedFrom      string  `json:"checked_from"`
	Passing          bool    `json:"passing"`
	ResponseTimeMs   float64 `json:"response_time_ms"`
	AttemptNumber    int     `json:"attempt_number"`
	IsFinalAttempt   bool    `json:"is_final_attempt"`
	DispatchedAtMs   *int64  `json:"dispatched_at_ms"`
	ResponseBody     *string `json:"response_body"`
	BodyAvailability string  `json:"body_availability"`
}

type httpResultJSON struct {
	resultCommonJSON
	ResponseCode      *int    `json:"response_code"`
	ResultSummary     *string `json:"result_summary"`
	HasStoredResponse bool    `json:"has_stored_response"`
	// TLSCertificate (an extension) is the chain an https: attempt was served; null otherwise.
	TLSCertificate *tlsCertificateJSON `json:"tls_certificate"`
}

// tlsCertificateJSON is the certificate chain an attempt was served (an extension): whether
// it verifies for the host, why not, and each certificate with its days left at the attempt.
type tlsCertificateJSON struct {
	Host     string            `json:"host"`
	Verified bool              `json:"verified"`
	Problem  *string           `json:"problem"`
	Chain    []certificateJSON `json:"chain"`
}

type certificateJSON struct {
	Subject   string   `json:"subject"`
	Issuer    string   `json:"issuer"`
	SANs      []string `json:"sans"`
	NotBefore string   `json:"not_before"`
	NotAfter  string   `json:"not_after"`
	DaysLeft  int      `json:"days_left"`
	SHA256    string   `json:"sha256_fingerprint"`
}

// renderTLSChain renders a stored chain; days_left counts whole days from the attempt to
// each certificate's expiry (negative once expired).
func renderTLSChain(c *store.TLSChain, checkedAt time.Time) *tlsCertificateJSON {
	if c == nil {
		return nil
	}
	out := &tlsCertificateJSON{Host: c.Host, Verified: c.Verified, Chain: make([]certificateJSON, len(c.Certificates))}
	if c.Problem != "" {
		out.Problem = &c.Problem
	}
	for i, crt := range c.Certificates {
		sans := crt.SANs
		if sans == nil {
			sans = []string{}
		}
		out.Chain[i] = certificateJSON{Subject: crt.Subject, Issuer: crt.Issuer, SANs: sans, NotBefore: formatTime(crt.NotBefore),
			NotAfter: formatTime(crt.NotAfter), DaysLeft: int(math.Floor(crt.NotAfter.Sub(checkedAt).Hours() / 24)), SHA256: crt.SHA256}
	}
	return out
}

type dnsResultJSON struct {
	resultCommonJSON
	DNSStatus      *string `json:"dns_status"`
	FailureSource  *string `json:"failure_source"`
	FailureType    *string `json:"failure_type"`
	Resolver       *string `json:"resolver"`
	ParsedResponse *string `json:"parsed_response"`
}

type tcpResultJSON struct {
	resultCommonJSON
	TCPStatus     *string  `json:"tcp_status"`
	FailureSource *string  `json:"failure_source"`
	FailureType   *string  `json:"failure_type"`
	DNSTimeMs     *float64 `json:"dns_time_ms"`
	ConnectTimeMs *float64 `json:"connect_time_ms"`
	DataTimeMs    *float64 `json:"data_time_ms"`
}

// The extension kinds' results: the failure fields of DNS and TCP results and the kind's
// observations (store.KindObservations).
type pingResultJSON struct {
	resultCommonJSON
	FailureSource *string `json:"failure_source"`
	FailureType   *string `json:"failure_type"`
	store.PingObservation
}

type grpcResultJSON struct {
	resultCommonJSON
	FailureSource *string  `json:"failure_source"`
	FailureType   *string  `json:"failure_type"`
	GRPCStatus    *string  `json:"grpc_status"`
	ConnectTimeMs *float64 `json:"connect_time_ms"`
}

type websocketResultJSON struct {
	resultCommonJSON
	FailureSource *string `json:"failure_source"`
	FailureType   *string `json:"failure_type"`
	ResponseCode  *int    `json:"response_code"` // the opening handshake's HTTP status
	store.WebSocketObservation
}

// renderResult shapes one result for the check's kind. has_stored_response says whether a
// response body is kept with the result.
func renderResult(kind check.Kind, r store.CheckResult) any {
	common := resultCommonJSON{
		ID: r.ID.String(), CheckedAt: formatTime(r.CheckedAt), CheckedFrom: r.Region, Passing: r.Passing,
		ResponseTimeMs: r.ResponseTimeMs, AttemptNumber: r.AttemptNumber, IsFinalAttempt: r.IsFinalAttempt,
		ResponseBody: r.ResponseBody, BodyAvailability: r.BodyAvailability,
	}
	if r.DispatchedAt != nil {
		ms := r.DispatchedAt.UnixMilli()
		common.DispatchedAtMs = &ms
	}
	switch kind {
	case check.DNS:
		return dnsResultJSON{resultCommonJSON: common, DNSStatus: r.DNSStatus, FailureSource: r.FailureSource,
			FailureType: r.FailureType, Resolver: r.Resolver, ParsedResponse: r.ParsedResponse}
	case check.TCP:
		return tcpResultJSON{resultCommonJSON: common, TCPStatus: r.TCPStatus, FailureSource: r.FailureSource,
			FailureType: r.FailureType, DNSTimeMs: r.DNSTimeMs, ConnectTimeMs: r.ConnectTimeMs, DataTimeMs: r.DataTimeMs}
	case check.Ping:
		return pingResultJSON{resultCommonJSON: common, FailureSource: r.FailureSource, FailureType: r.FailureType,
			PingObservation: r.Observations.PingObservation}
	case check.GRPC:
		return grpcResultJSON{resultCommonJSON: common, FailureSource: r.FailureSource, FailureType: r.FailureType,
			GRPCStatus: r.Observations.GRPCStatus, ConnectTimeMs: r.ConnectTimeMs}
	case check.WebSocket:
		return websocketResultJSON{resultCommonJSON: common, FailureSource: r.FailureSource, FailureType: r.FailureType,
			ResponseCode: r.ResponseCode, WebSocketObservation: r.Observations.WebSocketObservation}
	}
	return httpResultJSON{resultCommonJSON: common, ResponseCode: r.ResponseCode, ResultSummary: r.ResultSummary,
		HasStoredResponse: r.ResponseBody != nil, TLSCertificate: renderTLSChain(r.TLSChain, r.CheckedAt)}
}
