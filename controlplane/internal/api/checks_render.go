package api

import (
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// Response shapes of checks (api.md "Check", supplement §2.15). Every field is always present;
// pointers and nil maps/slices are the contract's nulls, so null versus empty is decided here
// and nowhere else.

// checkCommonJSON holds the fields common to every kind.
type checkCommonJSON struct {
	ID                           string   `json:"id"`
	Name                         string   `json:"name"`
	LastQueued                   *string  `json:"last_queued"`
	Status                       string   `json:"status"`
	ReminderAlertIntervalMinutes *int     `json:"reminder_alert_interval_minutes"`
	ConfirmationPeriodSeconds    int      `json:"confirmation_period_seconds"`
	RecoveryPeriodSeconds        int      `json:"recovery_period_seconds"`
	TestInterval                 int      `json:"test_interval"`
	Timeout                      *int     `json:"timeout"`
	AlertPriority                string   `json:"alert_priority"`
	TestRegions                  []string `json:"test_regions"`
	check.Alerts
	CheckType string  `json:"check_type"`
	URL       *string `json:"url"`
	Version   *string `json:"version"`
	ProjectID *string `json:"project_id"`
}

// httpCheckJSON is an uptime or browser check.
type httpCheckJSON struct {
	checkCommonJSON
	Headers         map[string]string `json:"headers"`
	TextToSearchFor *string           `json:"text_to_search_for"`
	Script          *string           `json:"script"`
	VerifySSL       bool              `json:"verify_ssl"`
	Method          string            `json:"method"`
	Body            *string           `json:"body"`
	FollowRedirects bool              `json:"follow_redirects"`
	Assertions      []check.Assertion `json:"assertions"`
	AuthUsername    *string           `json:"auth_username"`
	AuthPassword    *string           `json:"auth_password"`
}

// dnsCheckJSON is a DNS check.
type dnsCheckJSON struct {
	checkCommonJSON
	DNSDomain     string            `json:"dns_domain"`
	DNSRecordType string            `json:"dns_record_type"`
	DNSResolver   *string           `json:"dns_resolver"`
	DNSProtocol   string            `json:"dns_protocol"`
	Assertions    []check.Assertion `json:"assertions"`
}

// tcpCheckJSON is a TCP check.
type tcpCheckJSON struct {
	checkCommonJSON
	TCPHostname   string            `json:"tcp_hostname"`
	TCPPort       int               `json:"tcp_port"`
	TCPIPFamily   string            `json:"tcp_ip_family"`
	TCPData       *string           `json:"tcp_data"`
	TCPShouldFail bool              `json:"tcp_should_fail"`
	Assertions    []check.Assertion `json:"assertions"`
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
		Alerts:                       alerts,
		CheckType:                    string(s.Kind),
		Version:                      version,
		ProjectID:                    uuidString(c.ProjectID),
	}
	switch {
	case s.DNS != nil:
		d := s.DNS
		return dnsCheckJSON{checkCommonJSON: common, DNSDomain: d.Domain, DNSRecordType: d.RecordType,
			DNSResolver: d.Resolver, DNSProtocol: d.Protocol, Assertions: s.Assertions}
	case s.TCP != nil:
		t := s.TCP
		return tcpCheckJSON{checkCommonJSON: common, TCPHostname: t.Hostname, TCPPort: t.Port,
			TCPIPFamily: t.IPFamily, TCPData: t.Data, TCPShouldFail: t.ShouldFail, Assertions: s.Assertions}
	}
	h := s.HTTP
	if h == nil {
		h = &check.HTTPSpec{}
	}
	common.URL = h.URL
	out := httpCheckJSON{checkCommonJSON: common, Headers: h.Headers, TextToSearchFor: h.TextToSearchFor,
		VerifySSL: h.VerifySSL, Method: h.Method, Body: h.Body, FollowRedirects: h.FollowRedirects,
		Assertions: s.Assertions, AuthUsername: h.AuthUsername, AuthPassword: h.AuthPassword}
	if withScript {
		out.Script = h.Script
	}
	return out
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
}

func renderCheckListItem(c store.CheckSummary) checkListItemJSON {
	return checkListItemJSON{
		ProjectID: uuidString(c.ProjectID), ID: c.ID.String(), Name: c.Name, URL: c.URL, CheckType: string(c.Kind),
		LastQueued: formatTimePtr(c.LastQueued), Status: checkStatus(c.State, c.Paused, c.Muted, c.InMaintenance),
		DNSDomain: c.DNSDomain, DNSRecordType: c.DNSRecordType, DNSResolver: c.DNSResolver, DNSProtocol: c.DNSProtocol,
		TCPHostname: c.TCPHostname, TCPPort: c.TCPPort, TCPIPFamily: c.TCPIPFamily,
	}
}

// checkIncidentJSON is one check incident; ended_at is null while it is open.
type checkIncidentJSON struct {
	ID        string  `json:"id"`
	CheckID   string  `json:"check_id"`
	StartedAt string  `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
}

// resultPageJSON is a check's result page (supplement §2.16): its result_info sits inside the
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
	}
	return httpResultJSON{resultCommonJSON: common, ResponseCode: r.ResponseCode, ResultSummary: r.ResultSummary,
		HasStoredResponse: r.ResponseBody != nil}
}
