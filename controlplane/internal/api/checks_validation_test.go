package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestCheckValidation has one row per rule: every rule answers 400 with a message that names
// the field and the rule.
func TestCheckValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := map[string]string{
		"{uptime}":  ckID(t, h, "/v1/checks/uptime", ckUptimeBody()),
		"{browser}": ckID(t, h, "/v1/checks/browser", ckWith(ckBrowserBody(), "url", "https://example.com", "script", nil)),
		"{dns}":     ckID(t, h, "/v1/checks/dns", ckDNSBody()),
		"{tcp}":     ckID(t, h, "/v1/checks/tcp", ckTCPBody()),
	}
	long := func(n int) string { return strings.Repeat("a", n) }
	headers := func(n int) map[string]string {
		m := map[string]string{}
		for i := 0; i < n; i++ {
			m["X-H"+strings.Repeat("x", i)] = "v"
		}
		return m
	}
	assertion := func(typ, prop, cmp, exp string) []any {
		return []any{map[string]any{"type": typ, "property": prop, "comparison": cmp, "expected": exp}}
	}
	up, br, dns, tcp := ckUptimeBody(), ckBrowserBody(), ckDNSBody(), ckTCPBody()
	const (
		post  = http.MethodPost
		patch = http.MethodPatch
	)
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		want   int
		msg    string
	}{
		// request bodies
		{"not JSON", post, "/v1/checks", `{"name":`, 400, "not valid JSON"},
		{"array body", post, "/v1/checks/dns", `[]`, 400, "must be a JSON object"},
		{"empty body", post, "/v1/checks/tcp", ``, 400, "request body is required"},

		// common fields, on every kind's create
		{"name missing", post, "/v1/checks", ckWithout(up, "name"), 400, "name: is required"},
		{"name null", post, "/v1/checks/dns", ckWith(dns, "name", nil), 400, "name: is required"},
		{"name blank", post, "/v1/checks/tcp", ckWith(tcp, "name", "   "), 400, "name: must not be empty"},
		{"name too long", post, "/v1/checks/uptime", ckWith(up, "name", long(256)), 400, "name: must be at most 255 characters"},
		{"name not a string", post, "/v1/checks", ckWith(up, "name", 7), 400, "name: must be a string"},
		{"test_interval too small", post, "/v1/checks/dns", ckWith(dns, "test_interval", 29), 400, "test_interval: must be between 30 and 86400"},
		{"test_interval too large", post, "/v1/checks", ckWith(up, "test_interval", 86401), 400, "test_interval: must be between 30 and 86400"},
		{"test_interval fractional", post, "/v1/checks/tcp", ckWith(tcp, "test_interval", 60.5), 400, "test_interval: must be an integer"},
		{"test_regions empty", post, "/v1/checks", ckWith(up, "test_regions", []string{}), 400, "test_regions: must name at least one region"},
		{"test_regions unknown", post, "/v1/checks/dns", ckWith(dns, "test_regions", []string{"cloud:us-east-1", "cloud:mars-1"}), 400, "test_regions[1]: must be one of cloud:us-east-1"},
		{"test_regions without prefix", post, "/v1/checks/tcp", ckWith(tcp, "test_regions", []string{"us-east-1"}), 400, "test_regions[0]: must be one of"},
		{"test_regions duplicate", post, "/v1/checks", ckWith(up, "test_regions", []string{"cloud:eu-west-2", "cloud:eu-west-2"}), 400, "test_regions[1]: repeats cloud:eu-west-2"},
		{"region_quorum above test_regions", post, "/v1/checks/dns", ckWith(dns, "test_regions", []string{"cloud:us-east-1", "cloud:eu-west-2"}, "region_quorum", 3), 400, "region_quorum: must be at most the number of test_regions (2)"},
		{"region_quorum zero", post, "/v1/checks/tcp", ckWith(tcp, "region_quorum", 0), 400, "region_quorum: must be at least 1"},
		{"region_quorum unknown word", post, "/v1/checks", ckWith(up, "region_quorum", "most"), 400, `region_quorum: must be "majority", "any", "all" or an integer`},
		{"region_quorum null", post, "/v1/checks", ckWith(up, "region_quorum", nil), 400, `region_quorum: must be "majority"`},
		{"region_quorum fractional", post, "/v1/checks/uptime", ckWith(up, "region_quorum", 1.5), 400, `region_quorum: must be "majority"`},
		{"region_quorum numeric string", post, "/v1/checks/uptime", ckWith(up, "region_quorum", "2"), 400, `region_quorum: must be "majority"`},
		{"regions shrunk below region_quorum", patch, "/v1/checks/{dns}", map[string]any{"region_quorum": 2, "test_regions": []string{"cloud:us-east-1"}}, 400, "region_quorum: must be at most the number of test_regions (1)"},
		{"test_regions not strings", post, "/v1/checks", ckWith(up, "test_regions", []int{1}), 400, "test_regions: must be an array of strings"},
		{"timeout too small", post, "/v1/checks/dns", ckWith(dns, "timeout", 999), 400, "timeout: must be between 1000 and 60000"},
		{"timeout too large", post, "/v1/checks/uptime", ckWith(up, "timeout", 60001), 400, "timeout: must be between 1000 and 60000"},
		{"browser timeout too large", post, "/v1/checks/browser", ckWith(br, "timeout", 120001), 400, "timeout: must be between 1000 and 120000"},
		{"degraded_response_time_ms zero", post, "/v1/checks/uptime", ckWith(up, "degraded_response_time_ms", 0), 400, "degraded_response_time_ms: must be between 1 and 10000 milliseconds"},
		{"degraded_response_time_ms above timeout", post, "/v1/checks/dns", ckWith(dns, "timeout", 3000, "degraded_response_time_ms", 3001), 400, "degraded_response_time_ms: must be between 1 and 3000 milliseconds"},
		{"degraded_response_time_ms negative", post, "/v1/checks/tcp", ckWith(tcp, "degraded_response_time_ms", -5), 400, "degraded_response_time_ms: must be between 1 and"},
		{"degraded_response_time_ms a string", post, "/v1/checks", ckWith(up, "degraded_response_time_ms", "500"), 400, "degraded_response_time_ms: must be"},
		{"degraded_response_time_ms fractional", post, "/v1/checks/uptime", ckWith(up, "degraded_response_time_ms", 1.5), 400, "degraded_response_time_ms: must be"},
		{"timeout lowered below degraded_response_time_ms", patch, "/v1/checks/{dns}", map[string]any{"degraded_response_time_ms": 5000, "timeout": 2000}, 400, "degraded_response_time_ms: must be between 1 and 2000 milliseconds"},
		{"timeout null", post, "/v1/checks/tcp", ckWith(tcp, "timeout", nil), 400, "timeout: must be an integer, not null"},
		{"confirmation negative", post, "/v1/checks/dns", ckWith(dns, "confirmation_period_seconds", -1), 400, "confirmation_period_seconds: must be between 0 and 3600"},
		{"confirmation too large", post, "/v1/checks", ckWith(up, "confirmation_period_seconds", 3601), 400, "confirmation_period_seconds: must be between 0 and 3600"},
		{"recovery too large", post, "/v1/checks/tcp", ckWith(tcp, "recovery_period_seconds", 3601), 400, "recovery_period_seconds: must be between 0 and 3600"},
		{"recovery negative", post, "/v1/checks/tcp", ckWith(tcp, "recovery_period_seconds", -5), 400, "recovery_period_seconds: must be between 0 and 3600"},
		{"reminder below -1", post, "/v1/checks/dns", ckWith(dns, "reminder_alert_interval_minutes", -2), 400, "reminder_alert_interval_minutes: must be between -1 and 525600"},
		{"alert_priority unknown", post, "/v1/checks", ckWith(up, "alert_priority", "MEDIUM"), 400, "alert_priority: must be LOW or HIGH"},
		{"alerts not an array", post, "/v1/checks/tcp", ckWith(tcp, "user_alerts", "u1"), 400, "user_alerts: must be an array of strings"},
		{"alerts null", post, "/v1/checks/dns", ckWith(dns, "webhook_alerts", nil), 400, "webhook_alerts: must be an array of strings, not null"},
		{"alerts empty id", post, "/v1/checks", ckWith(up, "oncall_alerts", []string{""}), 400, "oncall_alerts[0]: must not be empty"},
		{"paused on create", post, "/v1/checks", ckWith(up, "paused", true), 400, "paused: cannot be set on create"},
		{"unknown property on uptime", post, "/v1/checks/uptime", ckWith(up, "verifySsl", false), 400, "verifySsl: unknown property"},
		{"unknown property on generic", post, "/v1/checks", ckWith(up, "interval", 60), 400, "interval: unknown property"},
		{"dns field on uptime", post, "/v1/checks", ckWith(up, "dns_domain", "example.com"), 400, "dns_domain: unknown property"},
		{"several errors at once", post, "/v1/checks/tcp", ckWith(tcp, "tcp_port", 0, "timeout", 1), 400, "timeout: must be between 1000 and 60000 milliseconds; tcp_port: must be between 1 and 65535"},

		// project_id
		{"project_id malformed", post, "/v1/checks", ckWith(up, "project_id", "abc"), 400, "project_id: must be a project id"},
		{"project_id not canonical", post, "/v1/checks/dns", ckWith(dns, "project_id", strings.ToUpper(uuid.NewString())), 400, "project_id: is not a canonical project id"},
		{"project_id unknown", post, "/v1/checks/tcp", ckWith(tcp, "project_id", uuid.NewString()), 404, "project not found"},
		{"project_id of generic create unknown", post, "/v1/checks", ckWith(up, "project_id", uuid.NewString()), 404, "project not found"},

		// uptime and browser fields
		{"url missing on generic uptime", post, "/v1/checks", ckWithout(up, "url"), 400, "url: is required for uptime checks"},
		{"url missing on typed uptime", post, "/v1/checks/uptime", ckWithout(up, "url"), 400, "url: is required"},
		{"url null on typed uptime", post, "/v1/checks/uptime", ckWith(up, "url", nil), 400, "url: is required"},
		{"url scheme", post, "/v1/checks", ckWith(up, "url", "ftp://example.com/x"), 400, "url: must use the http or https scheme"},
		{"url relative", post, "/v1/checks/uptime", ckWith(up, "url", "/health"), 400, "url: must be an absolute http or https URL"},
		{"url with spaces", post, "/v1/checks", ckWith(up, "url", "https://example.com/a b"), 400, "url: must be an absolute http or https URL without whitespace"},
		{"url too long", post, "/v1/checks", ckWith(up, "url", "https://example.com/"+long(2048)), 400, "url: must be at most 2048 characters"},
		{"method unknown", post, "/v1/checks/uptime", ckWith(up, "method", "OPTIONS"), 400, "method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE"},
		{"headers not strings", post, "/v1/checks", ckWith(up, "headers", map[string]any{"X-N": 1}), 400, "headers: must be an object whose values are strings"},
		{"header name invalid", post, "/v1/checks", ckWith(up, "headers", map[string]string{"Bad Header": "v"}), 400, "headers.Bad Header: is not a valid header name"},
		{"header names repeated", post, "/v1/checks/uptime", ckWith(up, "headers", map[string]string{"X-A": "1", "x-a": "2"}), 400, "repeats header X-A"},
		{"header value line break", post, "/v1/checks", ckWith(up, "headers", map[string]string{"X-A": "1\r\nX-B: 2"}), 400, "headers.X-A: must not contain line breaks"},
		{"header value too long", post, "/v1/checks", ckWith(up, "headers", map[string]string{"X-A": long(4097)}), 400, "headers.X-A: must be at most 4096 characters"},
		{"too many headers", post, "/v1/checks/uptime", ckWith(up, "headers", headers(51)), 400, "headers: must have at most 50 entries"},
		{"body too long", post, "/v1/checks", ckWith(up, "body", long(65537)), 400, "body: must be at most 65536 characters"},
		{"text_to_search_for too long", post, "/v1/checks/uptime", ckWith(up, "text_to_search_for", long(4001)), 400, "text_to_search_for: must be at most 4000 characters"},
		{"auth_password too long", post, "/v1/checks", ckWith(up, "auth_password", long(1025)), 400, "auth_password: must be at most 1024 characters"},
		{"follow_redirects not boolean", post, "/v1/checks", ckWith(up, "follow_redirects", "yes"), 400, "follow_redirects: must be a boolean"},
		{"verify_ssl null", post, "/v1/checks/uptime", ckWith(up, "verify_ssl", nil), 400, "verify_ssl: must be a boolean, not null"},
		{"generic type unknown", post, "/v1/checks", ckWith(up, "type", "DNS_CHECK"), 400, "type: must be UPTIME_CHECK or BROWSER_CHECK"},
		{"generic uptime with script", post, "/v1/checks", ckWith(up, "script", ckScript), 400, "script: is only accepted for browser checks"},
		{"generic uptime with version", post, "/v1/checks", ckWith(up, "version", "NODE24_BROWSER"), 400, "version: is only accepted for browser checks"},
		{"typed uptime type", post, "/v1/checks/uptime", ckWith(up, "type", "BROWSER_CHECK"), 400, "type: must be UPTIME_CHECK"},
		{"typed uptime script", post, "/v1/checks/uptime", ckWith(up, "script", ckScript), 400, "script: is not accepted for uptime checks"},
		{"typed uptime version", post, "/v1/checks/uptime", ckWith(up, "version", nil), 400, "version: is not accepted for uptime checks"},

		// browser
		{"browser without url or script", post, "/v1/checks/browser", ckWithout(br, "script"), 400, "script: is required when url is null or not given"},
		{"browser url null without script", post, "/v1/checks", map[string]any{"name": "b", "type": "BROWSER_CHECK", "url": nil}, 400, "script: is required when url is null"},
		{"browser script without import", post, "/v1/checks/browser", ckWith(br, "script", "test('x', async () => {})"), 400, "script: must import the browser test library module @playwright/test"},
		{"browser script importing another module", post, "/v1/checks/browser", ckWith(br, "script", "import { test } from 'vitest'\ntest('x', () => {})"), 400, "script: must import"},
		{"browser script without test", post, "/v1/checks", ckWith(br, "type", "BROWSER_CHECK", "script", "import { chromium } from '@playwright/test'\nconsole.log(1)"), 400, "script: must contain at least one test() block"},
		{"browser script with a method named test only", post, "/v1/checks/browser", ckWith(br, "script", "import '@playwright/test'\n/x/.test('x')"), 400, "script: must contain at least one test() block"},
		{"browser script with browser.newContext", post, "/v1/checks/browser", ckWith(br, "script", "import { test } from '@playwright/test'\n\ntest('x', async ({ browser }) => {\n  const c = await browser.newContext()\n})"), 400, "script: not supported: browser.newContext() at line 4"},
		{"browser script with chromium.launch", post, "/v1/checks", ckWith(br, "type", "BROWSER_CHECK", "script", "import { test, chromium } from '@playwright/test'\ntest('x', async () => {\n  await chromium.launch()\n})"), 400, "script: not supported: chromium.launch() at line 3"},
		{"browser script with require fs", post, "/v1/checks/browser", ckWith(br, "script", "import { test } from '@playwright/test'\nimport * as fs from 'fs'\ntest('x', async () => { fs.readFileSync('/etc/passwd') })"), 400, "script: not supported: require('fs') at line 2"},
		{"browser script with toHaveScreenshot", post, "/v1/checks/browser", ckWith(br, "script", "import { test, expect } from '@playwright/test'\ntest('x', async ({ page }) => {\n  await expect(page).toHaveScreenshot()\n})"), 400, "script: not supported: expect(…).toHaveScreenshot() at line 3"},
		{"browser retired version", post, "/v1/checks/browser", ckWith(br, "version", "NODE20_BROWSER"), 400, "version: NODE20_BROWSER is retired; the only accepted value is NODE24_BROWSER"},
		{"browser response-only version", post, "/v1/checks/browser", ckWith(br, "version", "EDGE_RUNTIME"), 400, "version: must be NODE24_BROWSER"},
		{"browser header variable", post, "/v1/checks/browser", ckWith(br, "headers", map[string]string{"Authorization": "Bearer {{API_TOKEN}}"}), 400, "headers.Authorization: browser check headers cannot use {{NAME}}"},
		{"browser typed type", post, "/v1/checks/browser", ckWith(br, "type", "UPTIME_CHECK"), 400, "type: must be BROWSER_CHECK"},
		{"browser url invalid", post, "/v1/checks/browser", ckWith(br, "url", "example.com"), 400, "url: must be an absolute http or https URL"},

		// assertions
		{"assertions not an array", post, "/v1/checks", ckWith(up, "assertions", map[string]any{}), 400, "assertions: must be an array of objects"},
		{"assertion not an object", post, "/v1/checks", ckWith(up, "assertions", []any{"x"}), 400, "assertions[0]: must be an object"},
		{"assertion field missing", post, "/v1/checks/uptime", ckWith(up, "assertions", []any{map[string]any{"type": "TEXT_BODY", "property": "", "comparison": "CONTAINS"}}), 400, "assertions[0].expected: is required"},
		{"assertion unknown field", post, "/v1/checks/dns", ckWith(dns, "assertions", []any{map[string]any{"type": "DNS_TEXT_ANSWER", "property": "", "comparison": "CONTAINS", "expected": "x", "target": 1}}), 400, "assertions[0].target: unknown property"},
		{"assertion expected not a string", post, "/v1/checks", ckWith(up, "assertions", []any{map[string]any{"type": "TEXT_BODY", "property": "", "comparison": "CONTAINS", "expected": 200}}), 400, "assertions[0].expected: must be a string"},
		{"assertion type of another kind", post, "/v1/checks", ckWith(up, "assertions", assertion("DNS_RESPONSE_CODE", "status", "EQUALS", "NOERROR")), 400, "assertions[0].type: must be one of JSON_BODY, TEXT_BODY, RESPONSE_HEADERS, HTML_BODY"},
		{"assertion comparison unknown", post, "/v1/checks/uptime", ckWith(up, "assertions", assertion("TEXT_BODY", "", "MATCHES", "x")), 400, "assertions[0].comparison: must be one of EQUALS"},
		{"assertion bad JSONPath", post, "/v1/checks", ckWith(up, "assertions", append(assertion("TEXT_BODY", "", "CONTAINS", "ok"), assertion("JSON_BODY", "$.[", "EQUALS", "1")...)), 400, "assertions[1].property: is not a valid JSONPath expression"},
		{"assertion bad CSS selector", post, "/v1/checks/browser", ckWith(br, "assertions", assertion("HTML_BODY", "div[", "NOT_EMPTY", "")), 400, "assertions[0].property: is not a valid CSS selector"},
		{"assertion header name", post, "/v1/checks", ckWith(up, "assertions", assertion("RESPONSE_HEADERS", "Content Type", "EQUALS", "x")), 400, "assertions[0].property: must be a header name"},
		{"dns assertion of another kind", post, "/v1/checks/dns", ckWith(dns, "assertions", assertion("TCP_RESPONSE_DATA", "", "CONTAINS", "x")), 400, "assertions[0].type: must be one of DNS_RESPONSE_CODE, DNS_TEXT_ANSWER, DNS_JSON_ANSWER"},
		{"dns response code property", post, "/v1/checks/dns", ckWith(dns, "assertions", assertion("DNS_RESPONSE_CODE", "code", "EQUALS", "NOERROR")), 400, `assertions[0].property: must be "status"`},
		{"dns text answer property", post, "/v1/checks/dns", ckWith(dns, "assertions", assertion("DNS_TEXT_ANSWER", "answer", "CONTAINS", "1.2.3.4")), 400, "assertions[0].property: must be an empty string"},
		{"tcp response time not a number", post, "/v1/checks/tcp", ckWith(tcp, "assertions", assertion("TCP_RESPONSE_TIME", "responseTime", "LESS_THAN", "fast")), 400, "assertions[0].expected: must be a number"},
		{"tcp response time property", post, "/v1/checks/tcp", ckWith(tcp, "assertions", assertion("TCP_RESPONSE_TIME", "", "LESS_THAN", "100")), 400, `assertions[0].property: must be "responseTime"`},

		// DNS
		{"dns_domain missing", post, "/v1/checks/dns", ckWithout(dns, "dns_domain"), 400, "dns_domain: is required"},
		{"dns_record_type missing", post, "/v1/checks/dns", ckWithout(dns, "dns_record_type"), 400, "dns_record_type: is required"},
		{"dns_domain empty", post, "/v1/checks/dns", ckWith(dns, "dns_domain", ""), 400, "dns_domain: must be 1 to 253 characters"},
		{"dns_domain too long", post, "/v1/checks/dns", ckWith(dns, "dns_domain", strings.Repeat("abcdefghi.", 25)+"abcd"), 400, "dns_domain: must be 1 to 253 characters"},
		{"dns_domain with spaces", post, "/v1/checks/dns", ckWith(dns, "dns_domain", "exa mple.com"), 400, "dns_domain: must be a domain name"},
		{"dns_domain label too long", post, "/v1/checks/dns", ckWith(dns, "dns_domain", long(64)+".com"), 400, "dns_domain: must be a domain name"},
		{"dns_record_type unknown", post, "/v1/checks/dns", ckWith(dns, "dns_record_type", "SRV"), 400, "dns_record_type: must be one of A, AAAA, CNAME, MX, NS, SOA, TXT"},
		{"dns_resolver hostname without port", post, "/v1/checks/dns", ckWith(dns, "dns_resolver", "dns.google"), 400, "dns_resolver: must be host:port"},
		{"dns_resolver IPv6 in brackets without port", post, "/v1/checks/dns", ckWith(dns, "dns_resolver", "[2606:4700::1111]"), 400, "dns_resolver: must be host:port"},
		{"dns_resolver IPv6 with a zone", post, "/v1/checks/dns", ckWith(dns, "dns_resolver", "fe80::1%eth0"), 400, "dns_resolver: must be host:port"},
		{"dns_resolver port out of range", post, "/v1/checks/dns", ckWith(dns, "dns_resolver", "1.1.1.1:65536"), 400, "dns_resolver: must end with a port between 1 and 65535"},
		{"dns_resolver bad host", post, "/v1/checks/dns", ckWith(dns, "dns_resolver", "bad host:53"), 400, "dns_resolver: host must be a hostname or an IP address"},
		{"dns_protocol unknown", post, "/v1/checks/dns", ckWith(dns, "dns_protocol", "QUIC"), 400, "dns_protocol: must be UDP or TCP"},
		{"dns type", post, "/v1/checks/dns", ckWith(dns, "type", "TCP_CHECK"), 400, "type: must be DNS_CHECK"},
		{"dns url", post, "/v1/checks/dns", ckWith(dns, "url", "https://example.com"), 400, "url: unknown property"},

		// TCP
		{"tcp_hostname missing", post, "/v1/checks/tcp", ckWithout(tcp, "tcp_hostname"), 400, "tcp_hostname: is required"},
		{"tcp_port missing", post, "/v1/checks/tcp", ckWithout(tcp, "tcp_port"), 400, "tcp_port: is required"},
		{"tcp_port zero", post, "/v1/checks/tcp", ckWith(tcp, "tcp_port", 0), 400, "tcp_port: must be between 1 and 65535"},
		{"tcp_port too large", post, "/v1/checks/tcp", ckWith(tcp, "tcp_port", 65536), 400, "tcp_port: must be between 1 and 65535"},
		{"tcp_port string", post, "/v1/checks/tcp", ckWith(tcp, "tcp_port", "443"), 400, "tcp_port: must be an integer"},
		{"tcp_hostname too long", post, "/v1/checks/tcp", ckWith(tcp, "tcp_hostname", strings.Repeat("abcdefghi.", 25)+"abcd"), 400, "tcp_hostname: must be 1 to 253 characters"},
		{"tcp_hostname is a URL", post, "/v1/checks/tcp", ckWith(tcp, "tcp_hostname", "http://db.example.com"), 400, "tcp_hostname: must be a hostname or an IP address"},
		{"tcp_ip_family unknown", post, "/v1/checks/tcp", ckWith(tcp, "tcp_ip_family", "IPv5"), 400, "tcp_ip_family: must be IPv4, IPv6 or Any"},
		{"tcp_data too long", post, "/v1/checks/tcp", ckWith(tcp, "tcp_data", long(16385)), 400, "tcp_data: must be at most 16384 characters"},
		{"tcp_should_fail not boolean", post, "/v1/checks/tcp", ckWith(tcp, "tcp_should_fail", "no"), 400, "tcp_should_fail: must be a boolean"},
		{"tcp_tls not boolean", post, "/v1/checks/tcp", ckWith(tcp, "tcp_tls", "yes"), 400, "tcp_tls: must be a boolean"},
		{"tcp verify_ssl null", post, "/v1/checks/tcp", ckWith(tcp, "verify_ssl", nil), 400, "verify_ssl: must be a boolean, not null"},

		// certificate_expiry_alert_days (an extension), on the kinds that speak TLS
		{"certificate days zero", post, "/v1/checks/uptime", ckWith(up, "certificate_expiry_alert_days", []int{14, 0}), 400,
			"certificate_expiry_alert_days[1]: must be between 1 and 365 days"},
		{"certificate days over a year", post, "/v1/checks/tcp", ckWith(tcp, "certificate_expiry_alert_days", []int{366}), 400,
			"certificate_expiry_alert_days[0]: must be between 1 and 365 days"},
		{"certificate days repeated", patch, "/v1/checks/{uptime}", map[string]any{"certificate_expiry_alert_days": []int{7, 14, 7}}, 400,
			"certificate_expiry_alert_days[2]: repeats 7"},
		{"certificate days too many", patch, "/v1/checks/tcp/{tcp}", map[string]any{"certificate_expiry_alert_days": []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, 400,
			"certificate_expiry_alert_days: must have at most 10 items"},
		{"certificate days null", post, "/v1/checks", ckWith(up, "certificate_expiry_alert_days", nil), 400,
			"certificate_expiry_alert_days: must be"},
		{"certificate days not integers", post, "/v1/checks/tcp", ckWith(tcp, "certificate_expiry_alert_days", []any{"7"}), 400,
			"certificate_expiry_alert_days"},
		{"certificate days on a DNS check", post, "/v1/checks/dns", ckWith(dns, "certificate_expiry_alert_days", []int{7}), 400,
			"certificate_expiry_alert_days"},
		{"tcp headers", post, "/v1/checks/tcp", ckWith(tcp, "headers", map[string]string{}), 400, "headers: unknown property"},
		{"tcp type", post, "/v1/checks/tcp", ckWith(tcp, "type", "TCP"), 400, "type: must be TCP_CHECK"},

		// PATCH bodies
		{"typed patch project_id", patch, "/v1/checks/dns/{dns}", map[string]any{"project_id": uuid.NewString()}, 400, "project_id: cannot be changed here; use POST /v1/checks/{check_id}/move"},
		{"typed uptime patch project_id null", patch, "/v1/checks/uptime/{uptime}", map[string]any{"project_id": nil}, 400, "project_id: cannot be changed here"},
		{"uptime patch url null", patch, "/v1/checks/uptime/{uptime}", map[string]any{"url": nil}, 400, "url: must be a string, not null"},
		{"uptime patch type", patch, "/v1/checks/uptime/{uptime}", map[string]any{"type": "BROWSER_CHECK"}, 400, "type: must be UPTIME_CHECK on this route"},
		{"uptime patch script", patch, "/v1/checks/uptime/{uptime}", map[string]any{"script": ckScript}, 400, "script: is not accepted for uptime checks"},
		{"uptime patch version", patch, "/v1/checks/uptime/{uptime}", map[string]any{"version": "NODE24_BROWSER"}, 400, "version: is not accepted for uptime checks"},
		{"patch name empty", patch, "/v1/checks/uptime/{uptime}", map[string]any{"name": ""}, 400, "name: must not be empty"},
		{"patch name null", patch, "/v1/checks/{uptime}", map[string]any{"name": nil}, 400, "name: must be a string, not null"},
		{"patch paused not boolean", patch, "/v1/checks/tcp/{tcp}", map[string]any{"paused": "yes"}, 400, "paused: must be a boolean"},
		{"patch muted null", patch, "/v1/checks/dns/{dns}", map[string]any{"muted": nil}, 400, "muted: must be a boolean, not null"},
		{"patch tcp_port", patch, "/v1/checks/tcp/{tcp}", map[string]any{"tcp_port": 70000}, 400, "tcp_port: must be between 1 and 65535"},
		{"patch tcp_hostname null", patch, "/v1/checks/tcp/{tcp}", map[string]any{"tcp_hostname": nil}, 400, "tcp_hostname: must be a string, not null"},
		{"patch dns unknown property", patch, "/v1/checks/dns/{dns}", map[string]any{"tcp_port": 1}, 400, "tcp_port: unknown property"},
		{"patch test_interval", patch, "/v1/checks/dns/{dns}", map[string]any{"test_interval": 10}, 400, "test_interval: must be between 30 and 86400"},
		{"browser patch url null without script", patch, "/v1/checks/browser/{browser}", map[string]any{"url": nil}, 400, "script: is required when url is null"},
		{"browser patch retired version", patch, "/v1/checks/browser/{browser}", map[string]any{"version": "NODE20_BROWSER"}, 400, "version: NODE20_BROWSER is retired"},
		{"browser patch script without test", patch, "/v1/checks/browser/{browser}", map[string]any{"script": "import { test } from '@playwright/test'"}, 400, "script: must contain at least one test() block"},
		{"browser patch script with page.pdf", patch, "/v1/checks/browser/{browser}", map[string]any{"script": "import { test } from '@playwright/test'\ntest('x', async ({ page }) => {\n  await page.pdf()\n})"}, 400, "script: not supported: page.pdf() at line 3"},
		{"browser patch type", patch, "/v1/checks/browser/{browser}", map[string]any{"type": "UPTIME_CHECK"}, 400, "type: must be BROWSER_CHECK"},
		{"browser patch header variable", patch, "/v1/checks/{browser}", map[string]any{"headers": map[string]string{"X": "{{A}}"}}, 400, "headers.X: browser check headers cannot use"},
		{"generic patch project_id malformed", patch, "/v1/checks/{uptime}", map[string]any{"project_id": "not-a-project"}, 400, "project_id: must be a project id"},
		{"generic patch project_id unknown", patch, "/v1/checks/{dns}", map[string]any{"project_id": uuid.NewString()}, 404, "project not found"},
		{"generic patch type of another kind", patch, "/v1/checks/{uptime}", map[string]any{"type": "TCP_CHECK"}, 400, "type: must be UPTIME_CHECK or BROWSER_CHECK"},
		{"generic patch dns type", patch, "/v1/checks/{dns}", map[string]any{"type": "UPTIME_CHECK"}, 400, "type: must be DNS_CHECK"},
		{"generic patch dns with uptime field", patch, "/v1/checks/{dns}", map[string]any{"url": "https://example.com"}, 400, "url: unknown property"},
		{"generic patch browser to uptime without url", patch, "/v1/checks/{browser}", map[string]any{"type": "UPTIME_CHECK", "url": nil}, 400, "url: is required for uptime checks"},
		{"generic patch uptime with script", patch, "/v1/checks/{uptime}", map[string]any{"script": ckScript}, 400, "script: is only accepted for browser checks"},
		{"generic patch unknown property", patch, "/v1/checks/{tcp}", map[string]any{"tcp_port": 80, "port": 80}, 400, "port: unknown property"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			for k, v := range ids {
				path = strings.ReplaceAll(path, k, v)
			}
			r := h.do(tc.method, path, h.tokenA, tc.body)
			expectStatus(t, r, tc.want)
			if !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q do not mention %q", r.ErrorText(), tc.msg)
			}
		})
	}
	// A refused PATCH changes nothing.
	r := h.do(http.MethodGet, "/v1/checks/"+ids["{tcp}"], h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if res := r.Result(); res["tcp_port"] != 5432.0 || res["name"] != "Postgres port" {
		t.Fatalf("refused PATCH changed the check: %s", r.Raw)
	}
}

// TestCheckValidValues accepts the edges of every range and the forms the rules allow.
func TestCheckValidValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	up, br, dns, tcp := ckUptimeBody(), ckBrowserBody(), ckDNSBody(), ckTCPBody()
	cases := []struct {
		name string
		path string
		body map[string]any
	}{
		{"interval and timeout minimums", "/v1/checks", ckWith(up, "test_interval", 30, "timeout", 1000, "confirmation_period_seconds", 0, "recovery_period_seconds", 0, "reminder_alert_interval_minutes", -1)},
		{"interval and timeout maximums", "/v1/checks/uptime", ckWith(up, "test_interval", 86400, "timeout", 60000, "confirmation_period_seconds", 3600, "recovery_period_seconds", 3600)},
		{"browser timeout maximum", "/v1/checks/browser", ckWith(br, "timeout", 120000)},
		{"all regions", "/v1/checks/dns", ckWith(dns, "test_regions", []string{"cloud:us-east-1", "cloud:us-east-2", "cloud:us-west-1", "cloud:eu-central-1", "cloud:eu-west-2", "cloud:ap-south-1", "cloud:ap-southeast-2", "cloud:ap-northeast-1"})},
		{"browser with url only", "/v1/checks/browser", ckWith(br, "script", nil, "url", "https://example.com")},
		{"browser script with an aliased test", "/v1/checks/browser", ckWith(br, "script", "import { test as it, expect } from '@playwright/test'\nit('x', async ({ page }) => { await expect(page).toHaveTitle(/x/) })")},
		{"browser script with a required alias", "/v1/checks/browser", ckWith(br, "script", "const { test: base } = require('@playwright/test')\nbase('x', async () => {})")},
		{"browser script with test.extend", "/v1/checks/browser", ckWith(br, "script", "import { test as base } from '@playwright/test'\nconst test = base.extend<{ user: string }>({ user: async ({}, use) => { await use('u') } })\ntest('x', async ({ user }) => {})")},
		{"browser script with require", "/v1/checks/browser", ckWith(br, "script", "const { test } = require('@playwright/test');\ntest.only('x', async () => {})")},
		{"uptime header variable", "/v1/checks", ckWith(up, "headers", map[string]string{"X-Plain": "{not a ref}"})},
		{"dns resolver IPv6", "/v1/checks/dns", ckWith(dns, "dns_resolver", "[2606:4700:4700::1111]:53", "dns_protocol", "TCP", "dns_domain", "_dmarc.example.com.")},
		{"dns resolver hostname", "/v1/checks/dns", ckWith(dns, "dns_resolver", "dns.google:53", "type", "DNS_CHECK")},
		{"tcp IPv6 literal and port edges", "/v1/checks/tcp", ckWith(tcp, "tcp_hostname", "2001:db8::1", "tcp_port", 65535, "tcp_data", strings.Repeat("x", 16384))},
		{"tcp IPv4 literal", "/v1/checks/tcp", ckWith(tcp, "tcp_hostname", "192.0.2.10", "tcp_port", 1)},
		{"tcp with TLS and expiry alerts off", "/v1/checks/tcp", ckWith(tcp, "tcp_tls", true, "verify_ssl", false, "certificate_expiry_alert_days", []int{})},
		{"certificate days at their edges", "/v1/checks/uptime", ckWith(up, "certificate_expiry_alert_days", []int{365, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
		{"name with surrounding spaces", "/v1/checks/tcp", ckWith(tcp, "name", "  "+strings.Repeat("n", 255)+"  ")},
	}
	for _, tc := range cases {
		r := h.do(http.MethodPost, tc.path, h.tokenA, tc.body)
		if r.Status != http.StatusCreated {
			t.Errorf("%s: status %d: %s", tc.name, r.Status, r.ErrorText())
		}
	}
}
