package check

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// HTTPSpec is what an uptime (HTTP request) or browser check does.
//
// The fields are in the order the API reads them, which is the order of its messages.
type HTTPSpec struct {
	URL             *string           `json:"url"` // absolute http(s) URL; nil for script-only browser checks
	TextToSearchFor *string           `json:"text_to_search_for"`
	Headers         map[string]string `json:"headers"` // nil when unset
	Method          string            `json:"method"`  // GET, HEAD, POST, PUT, PATCH or DELETE
	Body            *string           `json:"body"`
	FollowRedirects bool              `json:"follow_redirects"`
	VerifySSL       bool              `json:"verify_ssl"`
	AuthUsername    *string           `json:"auth_username"` // HTTP Basic user-id; "" is kept (an empty user-id)
	AuthPassword    *string           `json:"auth_password"` // HTTP Basic password, stored sealed by the control plane
	Script          *string           `json:"script"`        // browser checks only
	// CertificateExpiryAlertDays are the days before the served certificate's expiry at which
	// certificate.expiring is sent (an extension); empty turns it off. Only the control plane
	// reads it.
	CertificateExpiryAlertDays []int `json:"certificate_expiry_alert_days" job:"-"`
}

// defaultHTTP: method GET, follow_redirects and verify_ssl true (api/openapi).
func defaultHTTP() *HTTPSpec {
	return &HTTPSpec{Method: "GET", VerifySSL: true, FollowRedirects: true,
		CertificateExpiryAlertDays: DefaultCertificateExpiryAlertDays()}
}

// exampleHTTP is an uptime check's configuration for Example: every field but the script set.
func exampleHTTP() *HTTPSpec {
	return &HTTPSpec{
		URL:             ptr("https://shop.example.com/api/health"),
		TextToSearchFor: ptr(`"ok"`),
		Headers:         map[string]string{"Accept": "application/json", "X-Probe": "vantage"},
		Method:          "POST",
		Body:            ptr(`{"dry_run":true}`),
		FollowRedirects: false,
		VerifySSL:       false,
		AuthUsername:    ptr("monitor"),
		AuthPassword:    ptr("hunter2"),

		CertificateExpiryAlertDays: []int{30, 10},
	}
}

// exampleBrowser is a browser check's configuration for Example: the uptime fields and a script.
func exampleBrowser() *HTTPSpec {
	h := exampleHTTP()
	h.Script = ptr("import { test, expect } from '@playwright/test'\n" +
		"test('home', async ({ page }) => { await page.goto('https://shop.example.com') })\n")
	return h
}

func exampleHTTPAssertions() []Assertion {
	return []Assertion{
		{Type: JSONBody, Property: "$.status", Comparison: Equals, Expected: "ok"},
		{Type: ResponseHeaders, Property: "Content-Type", Comparison: Contains, Expected: "json"},
	}
}

func (s Spec) validateHTTP(fe *FieldErrors) {
	h := s.HTTP
	if h == nil || s.DNS != nil || s.TCP != nil {
		fe.add("check_type", "an %s check must have HTTP settings only", s.Kind)
		return
	}
	if h.URL != nil {
		if msg := urlProblem(*h.URL); msg != "" {
			fe.add("url", "%s", msg)
		}
	}
	if !slices.Contains(Methods, h.Method) {
		fe.add("method", "must be one of %s", strings.Join(Methods, ", "))
	}
	validateHeaders(fe, h.Headers, s.Kind == Browser)
	maxLen(fe, "body", h.Body, MaxBodyLength)
	maxLen(fe, "text_to_search_for", h.TextToSearchFor, MaxTextToSearchFor)
	maxLen(fe, "auth_username", h.AuthUsername, MaxAuthLength)
	maxLen(fe, "auth_password", h.AuthPassword, MaxAuthLength)
	validateCertificateExpiryAlertDays(fe, h.CertificateExpiryAlertDays)
	switch s.Kind {
	case Uptime:
		if h.URL == nil {
			fe.add("url", "is required for uptime checks")
		}
		if h.Script != nil {
			fe.add("script", "is only accepted for browser checks")
		}
		if s.Version != nil {
			fe.add("version", "is only accepted for browser checks")
		}
	case Browser:
		if h.Script != nil {
			if utf8.RuneCountInString(*h.Script) > MaxScriptLength {
				fe.add("script", "must be at most %d characters", MaxScriptLength)
			} else if msg := ScriptProblem(*h.Script); msg != "" {
				fe.add("script", "%s", msg)
			}
		} else if h.URL == nil {
			fe.add("script", "is required when url is null or not given: a browser check needs a url or a script")
		}
		if s.Version == nil || (*s.Version != VersionBrowser && *s.Version != VersionEdge) {
			fe.add("version", "must be %s", VersionBrowser)
		}
	}
}
