package check

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldError is one rule a configuration breaks, named by its API field, e.g.
// "headers.X-Token" or "test_regions[2]".
type FieldError struct {
	Field   string
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// FieldErrors is every rule a configuration breaks.
type FieldErrors []FieldError

func (fe *FieldErrors) add(field, format string, args ...any) {
	*fe = append(*fe, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Validate checks every value rule of s (see limits.go) and returns all broken rules, in field
// order. Assertions are checked for count and size only: their types, properties and
// comparisons are pkg/assert's to judge (assert.Compile), which this package cannot import.
func (s Spec) Validate() FieldErrors {
	var fe FieldErrors
	if !s.Kind.Valid() {
		fe.add("check_type", "must be one of UPTIME, BROWSER, DNS, TCP, MULTISTEP, PING, GRPC, WEBSOCKET")
		return fe
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(s.Name)); n == 0 {
		fe.add("name", "must not be empty")
	} else if n > MaxNameLength {
		fe.add("name", "must be at most %d characters", MaxNameLength)
	}
	intRange(&fe, "test_interval", s.TestInterval, MinTestInterval, MaxTestInterval, " seconds")
	validateRegions(&fe, s.TestRegions)
	validateQuorum(&fe, s.RegionQuorum, s.TestRegions)
	validateDependsOn(&fe, s.DependsOn)
	if !slices.Contains(Priorities, s.AlertPriority) {
		fe.add("alert_priority", "must be LOW or HIGH")
	}
	intRange(&fe, "confirmation_period_seconds", s.ConfirmationPeriodSeconds, 0, MaxPeriodSeconds, " seconds")
	intRange(&fe, "recovery_period_seconds", s.RecoveryPeriodSeconds, 0, MaxPeriodSeconds, " seconds")
	if s.ReminderAlertIntervalMinutes != nil {
		intRange(&fe, "reminder_alert_interval_minutes", *s.ReminderAlertIntervalMinutes, MinReminderMinutes, MaxReminderMinutes, " minutes (-1 = never)")
	}
	maxTimeout := MaxTimeoutMs
	if s.Kind == Browser {
		maxTimeout = MaxBrowserTimeoutMs
	}
	if s.TimeoutMs != nil {
		intRange(&fe, "timeout", *s.TimeoutMs, MinTimeoutMs, maxTimeout, " milliseconds")
	} else if s.Kind != Browser {
		fe.add("timeout", "is required")
	}
	if s.DegradedResponseTimeMs != nil {
		validateDegradedResponseTime(&fe, *s.DegradedResponseTimeMs, s.TimeoutMs, maxTimeout)
	}
	for _, l := range s.Alerts.Lists() {
		validateIDs(&fe, l.Field, *l.IDs)
	}
	if len(s.Assertions) > MaxAssertions {
		fe.add("assertions", "must have at most %d items", MaxAssertions)
	}
	for i, a := range s.Assertions {
		if utf8.RuneCountInString(a.Property) > MaxAssertionText {
			fe.add(fmt.Sprintf("assertions[%d].property", i), "must be at most %d characters", MaxAssertionText)
		}
		if utf8.RuneCountInString(a.Expected) > MaxAssertionText {
			fe.add(fmt.Sprintf("assertions[%d].expected", i), "must be at most %d characters", MaxAssertionText)
		}
	}
	switch s.Kind {
	case Uptime, Browser:
		s.validateHTTP(&fe)
	case DNS:
		s.validateDNS(&fe)
	case TCP:
		s.validateTCP(&fe)
	case Multistep:
		s.validateMultistep(&fe)
	case Ping:
		s.validatePing(&fe)
	case GRPC:
		s.validateGRPC(&fe)
	case WebSocket:
		s.validateWebSocket(&fe)
	}
	return fe
}

// validateDegradedResponseTime: a threshold above the timeout could never be crossed by a
// passing attempt, so it is refused rather than silently never firing. A legacy browser check
// without timeout is bounded by the longest timeout its kind allows.
func validateDegradedResponseTime(fe *FieldErrors, ms int, timeout *int, maxTimeout int) {
	limit := maxTimeout
	if timeout != nil {
		limit = *timeout
	}
	intRange(fe, "degraded_response_time_ms", ms, 1, limit, " milliseconds (the timeout), or null")
}

func intRange(fe *FieldErrors, field string, v, lo, hi int, unit string) {
	if v < lo || v > hi {
		fe.add(field, "must be between %d and %d%s", lo, hi, unit)
	}
}

func maxLen(fe *FieldErrors, field string, v *string, n int) {
	if v != nil && utf8.RuneCountInString(*v) > n {
		fe.add(field, "must be at most %d characters", n)
	}
}

func validateRegions(fe *FieldErrors, regions []string) {
	if len(regions) == 0 {
		fe.add("test_regions", "must name at least one region")
		return
	}
	seen := map[string]bool{}
	for i, r := range regions {
		field := fmt.Sprintf("test_regions[%d]", i)
		switch {
		case !IsRegion(r):
			fe.add(field, "must be one of %s", strings.Join(Regions, ", "))
		case seen[r]:
			fe.add(field, "repeats %s", r)
		}
		seen[r] = true
	}
}

func validateIDs(fe *FieldErrors, field string, ids []string) {
	if len(ids) > MaxAlertIDs {
		fe.add(field, "must have at most %d items", MaxAlertIDs)
		return
	}
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			fe.add(fmt.Sprintf("%s[%d]", field, i), "must not be empty")
		}
	}
}

// urlProblem judges a check's target URL: absolute http or https with a host.
func urlProblem(s string) string {
	if utf8.RuneCountInString(s) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\r\n") {
		return "must be an absolute http or https URL without whitespace"
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute http or https URL, e.g. https://example.com/health"
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		return "must use the http or https scheme"
	}
	return ""
}

// validateHeaders: at most MaxHeaders entries, RFC 9110 token names (distinct regardless of
// case), values of at most MaxHeaderValueLength characters without line breaks. Browser
// checks take no {{NAME}} references in headers (api/openapi/environment-variables.yaml).
func validateHeaders(fe *FieldErrors, headers map[string]string, browser bool) {
	if len(headers) > MaxHeaders {
		fe.add("headers", "must have at most %d entries", MaxHeaders)
		return
	}
	seen := map[string]string{}
	for _, name := range sortedKeys(headers) {
		field := "headers." + name
		value := headers[name]
		if !isToken(name) {
			fe.add(field, "is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only)")
			continue
		}
		if other, ok := seen[strings.ToLower(name)]; ok {
			fe.add(field, "repeats header %s (header names are case-insensitive)", other)
		}
		seen[strings.ToLower(name)] = name
		switch {
		case utf8.RuneCountInString(value) > MaxHeaderValueLength:
			fe.add(field, "must be at most %d characters", MaxHeaderValueLength)
		case strings.ContainsAny(value, "\r\n\x00"):
			fe.add(field, "must not contain line breaks or NUL")
		case browser && HasVarRef(value):
			fe.add(field, "browser check headers cannot use {{NAME}} environment variable references")
		}
	}
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// hostnameProblem judges a DNS name of at most 253 characters (an optional trailing dot, labels
// of 1..63 letters, digits, hyphens and underscores, not starting or ending with a hyphen), or,
// with allowIP, an IPv4 or IPv6 address.
func hostnameProblem(s string, allowIP bool) string {
	n := utf8.RuneCountInString(s)
	if n == 0 || n > MaxHostnameLength {
		return fmt.Sprintf("must be 1 to %d characters", MaxHostnameLength)
	}
	if allowIP && net.ParseIP(s) != nil {
		return ""
	}
	what := "a domain name"
	if allowIP {
		what = "a hostname or an IP address"
	}
	name := strings.TrimSuffix(s, ".")
	if name == "" {
		return "must be " + what
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "must be " + what + " (dot-separated labels of 1 to 63 characters, not starting or ending with a hyphen)"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "must be " + what + " of ASCII letters, digits, hyphens and underscores (use the punycode form of international names)"
			}
		}
	}
	return ""
}

// resolverProblem judges a custom resolver "host:port"; an IPv6 host is written in brackets.
func resolverProblem(s string) string {
	// A bare IP address (v4, or v6 without brackets) means port 53: the reference Terraform
	// provider sends one, and the prober adds the port. It is stored and answered as given.
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return "must be host:port or an IP address, e.g. 1.1.1.1:53, 1.1.1.1 or [2606:4700:4700::1111]:53"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return "must end with a port between 1 and 65535"
	}
	if strings.Contains(host, ":") {
		if ip := net.ParseIP(host); ip == nil || strings.Contains(host, "%") {
			return "must be host:port with an IPv6 address in brackets, e.g. [2606:4700:4700::1111]:53"
		}
		return ""
	}
	if msg := hostnameProblem(host, true); msg != "" {
		return "host " + msg
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
