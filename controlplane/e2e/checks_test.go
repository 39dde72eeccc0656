package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// fastInterval is the test_interval (seconds) set in SQL so that checks run every few seconds.
const fastInterval = 2

// slack is added to every bound derived from intervals and periods: process scheduling,
// batching and polling on a busy two-core machine.
const slack = 14 * time.Second

// TestHTTPCheckEndToEnd: an uptime check runs from three regions on one agent; a failing
// target makes it DOWN after the confirmation period with an open incident and an uptime.down
// outbox row; a healthy target again makes it RECOVERING and then UP after the recovery
// period, closing the incident with an uptime.up row; the results API shows both kinds of
// result.
func TestHTTPCheckEndToEnd(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")

	const confirm, recovery = 4, 4
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"}
	begin := time.Now()
	id := s.createCheck(t, "/v1/checks", map[string]any{
		"name":                            "e2e homepage",
		"url":                             target.URL,
		"test_regions":                    regions,
		"confirmation_period_seconds":     confirm,
		"recovery_period_seconds":         recovery,
		"reminder_alert_interval_minutes": -1,
		"timeout":                         5000,
		"assertions": []map[string]string{
			{"type": "TEXT_BODY", "property": "", "comparison": "CONTAINS", "expected": "ok"},
		},
	})
	s.setInterval(t, id, fastInterval)

	seen := s.waitStatus(t, id, "UP", 30*time.Second)
	mustOnlySee(t, seen, "PENDING", "UP")

	// Failing: VERIFYING for the confirmation period, then DOWN.
	flipped := time.Now()
	target.healthy.Store(false)
	seen = s.waitStatus(t, id, "DOWN", fastInterval*time.Second+confirm*time.Second+slack)
	t.Logf("DOWN %s after the target failed; statuses seen %v", time.Since(flipped).Round(time.Millisecond), seen)
	mustOnlySee(t, seen, "UP", "VERIFYING", "DOWN")
	if !slices.Contains(seen, "VERIFYING") {
		t.Errorf("statuses %v: the check went DOWN without VERIFYING for the %ds confirmation period", seen, confirm)
	}
	inc := s.incidents(t, "uptime", id)
	if len(inc) != 1 || inc[0].EndedAt != nil {
		t.Fatalf("incidents while DOWN: %+v, want one open incident", inc)
	}
	if got := s.outbox(t, id, "uptime.down"); got != 1 {
		t.Errorf("uptime.down outbox rows: %d, want 1", got)
	}
	// The alert went out only once the check had failed for the confirmation period, and the
	// incident starts at the first failing run (at most one interval before the flip).
	if n := s.count(t, `SELECT count(*) FROM outbox o JOIN check_incidents i ON i.id = o.incident_id
		WHERE o.check_id = $1 AND o.event_type = 'uptime.down'
		  AND o.created_at >= i.started_at + make_interval(secs => $2)
		  AND i.started_at >= $3`, id, float64(confirm), flipped.Add(-fastInterval*time.Second)); n != 1 {
		t.Errorf("uptime.down not tied to an incident that started at the first failure and alerted %ds later (%d rows match)", confirm, n)
	}

	// Healthy again: RECOVERING for the recovery period, then UP.
	healed := time.Now()
	target.healthy.Store(true)
	seen = s.waitStatus(t, id, "UP", fastInterval*time.Second+recovery*time.Second+slack)
	t.Logf("UP %s after the target healed; statuses seen %v", time.Since(healed).Round(time.Millisecond), seen)
	mustOnlySee(t, seen, "DOWN", "RECOVERING", "UP")
	if !slices.Contains(seen, "RECOVERING") {
		t.Errorf("statuses %v: the check went UP without RECOVERING for the %ds recovery period", seen, recovery)
	}
	inc = s.incidents(t, "uptime", id)
	if len(inc) != 1 || inc[0].EndedAt == nil {
		t.Fatalf("incidents after recovery: %+v, want the one incident, closed", inc)
	}
	if *inc[0].EndedAt < inc[0].StartedAt {
		t.Errorf("incident ends at %s, before it starts at %s", *inc[0].EndedAt, inc[0].StartedAt)
	}
	if got := s.outbox(t, id, "uptime.up"); got != 1 {
		t.Errorf("uptime.up outbox rows: %d, want 1", got)
	}
	if got := s.outbox(t, id, "uptime.down"); got != 1 {
		t.Errorf("uptime.down outbox rows after recovery: %d, want still 1", got)
	}
	if n := s.count(t, `SELECT count(*) FROM outbox o JOIN check_incidents i ON i.id = o.incident_id
		WHERE o.check_id = $1 AND o.event_type = 'uptime.up' AND i.ended_at IS NOT NULL
		  AND o.created_at >= i.ended_at + make_interval(secs => $2)`, id, float64(recovery)); n != 1 {
		t.Errorf("uptime.up not tied to the closed incident and sent %ds after its end (%d rows match)", recovery, n)
	}

	// The results API lists the passing and the failing runs, from every region.
	res := s.results(t, "uptime", id, begin)
	var pass, fail int
	from := map[string]bool{}
	for _, r := range res {
		from[r.CheckedFrom] = true
		switch {
		case r.Passing:
			pass++
			if r.ResponseCode == nil || *r.ResponseCode != 200 {
				t.Errorf("passing result %s: response_code %v, want 200", r.ID, deref(r.ResponseCode))
			}
		default:
			fail++
			if r.ResponseCode == nil || *r.ResponseCode != 500 {
				t.Errorf("failing result %s: response_code %v, want 500", r.ID, deref(r.ResponseCode))
			}
		}
	}
	if pass == 0 || fail == 0 {
		t.Errorf("results: %d passing and %d failing, want both", pass, fail)
	}
	for _, r := range regions {
		if !from[r] {
			t.Errorf("no result checked from %s (got %v)", r, from)
		}
	}
	// Uptime results do not show failure_source/failure_type in the API (api/openapi/checks.yaml);
	// they are stored.
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND NOT passing
		AND failure_source = 'ASSERTION' AND failure_type = 'HTTP_STATUS' AND response_code = 500`, id); n != fail {
		t.Errorf("%d of %d failing results are stored as ASSERTION / HTTP_STATUS / 500", n, fail)
	}
	if dups := s.duplicateResults(t, id); len(dups) > 0 {
		t.Errorf("results stored more than once: %v", dups)
	}
}

// TestDNSCheckEndToEnd: a DNS check per record type against a local authoritative server
// becomes UP with NOERROR results whose parsed_response holds the record; a name the server
// does not know is NXDOMAIN and goes DOWN, unless the check expects NXDOMAIN.
func TestDNSCheckEndToEnd(t *testing.T) {
	parallel(t)
	dnsSrv := newDNSServer(t)
	s := newStack(t)
	const region = "cloud:eu-central-1"
	s.startAgent(t, "agent-dns", region)
	begin := time.Now()

	create := func(name, domain, recordType string, assertions []map[string]string) uuid.UUID {
		id := s.createCheck(t, "/v1/checks/dns", map[string]any{
			"name":                            name,
			"dns_domain":                      domain,
			"dns_record_type":                 recordType,
			"dns_resolver":                    dnsSrv.Addr,
			"dns_protocol":                    "UDP",
			"test_regions":                    []string{region},
			"timeout":                         5000,
			"confirmation_period_seconds":     0,
			"recovery_period_seconds":         0,
			"reminder_alert_interval_minutes": -1,
			"assertions":                      assertions,
		})
		s.setInterval(t, id, fastInterval)
		return id
	}

	records := []struct {
		recordType, domain string
		data               string // parsed_response data
		text               string // in the zone-file answer (DNS_TEXT_ANSWER)
	}{
		{"A", "e2e-zone.test", "192.0.2.10", "192.0.2.10"},
		{"AAAA", "e2e-zone.test", "2001:db8::10", "2001:db8::10"},
		{"CNAME", "www.e2e-zone.test", "edge.e2e-zone.test.", "CNAME\tedge.e2e-zone.test."},
		{"MX", "e2e-zone.test", "10 mail.e2e-zone.test.", "10 mail.e2e-zone.test."},
		{"NS", "e2e-zone.test", "ns1.e2e-zone.test.", "ns1.e2e-zone.test."},
		{"SOA", "e2e-zone.test", "ns1.e2e-zone.test. hostmaster.e2e-zone.test. 2024010101 3600 600 86400 300", "hostmaster.e2e-zone.test. 2024010101"},
		{"TXT", "e2e-zone.test", "v=vantage-e2etoken=42", `"v=vantage-e2e" "token=42"`},
	}
	type want struct {
		name, status string
	}
	checks := map[uuid.UUID]want{}
	ids := make([]uuid.UUID, len(records))
	for i, r := range records {
		ids[i] = create("e2e "+r.recordType, r.domain, r.recordType, []map[string]string{
			{"type": "DNS_TEXT_ANSWER", "property": "", "comparison": "CONTAINS", "expected": r.text},
			{"type": "DNS_JSON_ANSWER", "property": "$[0].data", "comparison": "EQUALS", "expected": r.data},
		})
		checks[ids[i]] = want{r.recordType, "UP"}
	}
	nx := create("e2e missing name", "missing.e2e-zone.test", "A", nil)
	checks[nx] = want{"NXDOMAIN", "DOWN"}
	nxExpected := create("e2e expected NXDOMAIN", "missing.e2e-zone.test", "A", []map[string]string{
		{"type": "DNS_RESPONSE_CODE", "property": "status", "comparison": "EQUALS", "expected": "NXDOMAIN"},
	})
	checks[nxExpected] = want{"NXDOMAIN expected", "UP"}

	testwait.Eventually(t, 40*time.Second, func() error {
		var pending []string
		for id, w := range checks {
			st, err := s.status(id)
			if err != nil {
				return err
			}
			if st != w.status {
				pending = append(pending, fmt.Sprintf("%s is %s, want %s", w.name, st, w.status))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%s", strings.Join(pending, "; "))
		}
		return nil
	})

	if n := dnsSrv.Queries(); n < len(checks) {
		t.Errorf("the DNS server answered %d queries for %d checks", n, len(checks))
	}
	for i, r := range records {
		res := s.results(t, "dns", ids[i], begin)
		if len(res) == 0 {
			t.Errorf("%s: no results", r.recordType)
			continue
		}
		for _, got := range res {
			if !got.Passing || str(got.DNSStatus) != "NOERROR" || got.FailureSource != nil {
				t.Errorf("%s result %s: passing %v, dns_status %v, failure_source %v; want passing NOERROR",
					r.recordType, got.ID, got.Passing, str(got.DNSStatus), str(got.FailureSource))
			}
			if str(got.Resolver) != dnsSrv.Addr {
				t.Errorf("%s result %s: resolver %v, want %s", r.recordType, got.ID, str(got.Resolver), dnsSrv.Addr)
			}
			var parsed []struct{ Name, Type, Data string }
			if err := json.Unmarshal([]byte(str(got.ParsedResponse)), &parsed); err != nil {
				t.Errorf("%s result %s: parsed_response %v: %v", r.recordType, got.ID, str(got.ParsedResponse), err)
				continue
			}
			if len(parsed) != 1 || parsed[0].Type != r.recordType || parsed[0].Data != r.data ||
				!strings.EqualFold(parsed[0].Name, r.domain+".") {
				t.Errorf("%s result %s: parsed_response %s, want one %s record %q for %s.",
					r.recordType, got.ID, str(got.ParsedResponse), r.recordType, r.data, r.domain)
			}
		}
		if inc := s.incidents(t, "dns", ids[i]); len(inc) != 0 {
			t.Errorf("%s: incidents %+v, want none", r.recordType, inc)
		}
	}

	res := s.results(t, "dns", nx, begin)
	if len(res) == 0 {
		t.Error("NXDOMAIN: no results")
	}
	for _, got := range res {
		if got.Passing || str(got.DNSStatus) != "NXDOMAIN" || str(got.FailureSource) != "ASSERTION" || str(got.FailureType) != "DNS_RCODE" {
			t.Errorf("NXDOMAIN result %s: passing %v, dns_status %v, failure %v/%v; want failing NXDOMAIN ASSERTION/DNS_RCODE",
				got.ID, got.Passing, str(got.DNSStatus), str(got.FailureSource), str(got.FailureType))
		}
	}
	if inc := s.incidents(t, "dns", nx); len(inc) != 1 || inc[0].EndedAt != nil {
		t.Errorf("NXDOMAIN incidents: %+v, want one open", inc)
	}
	if got := s.outbox(t, nx, "uptime.down"); got != 1 {
		t.Errorf("NXDOMAIN uptime.down outbox rows: %d, want 1", got)
	}
	for _, got := range s.results(t, "dns", nxExpected, begin) {
		if !got.Passing || str(got.DNSStatus) != "NXDOMAIN" {
			t.Errorf("expected-NXDOMAIN result %s: passing %v, dns_status %v; want passing NXDOMAIN", got.ID, got.Passing, str(got.DNSStatus))
		}
	}
	for id := range checks {
		if dups := s.duplicateResults(t, id); len(dups) > 0 {
			t.Errorf("results stored more than once: %v", dups)
		}
	}
}

// TestTCPCheckEndToEnd: a TCP check sends data to an echo server and asserts on the reply (UP);
// with the server gone the connection is refused (DOWN, incident, alert); a tcp_should_fail
// check against a closed port is UP.
func TestTCPCheckEndToEnd(t *testing.T) {
	parallel(t)
	echo := newEchoServer(t)
	closed := closedPort(t)
	s := newStack(t)
	const region = "cloud:us-west-1"
	s.startAgent(t, "agent-tcp", region)
	begin := time.Now()

	create := func(body map[string]any) uuid.UUID {
		for k, v := range map[string]any{
			"tcp_hostname":                    "127.0.0.1",
			"test_regions":                    []string{region},
			"timeout":                         3000,
			"confirmation_period_seconds":     0,
			"recovery_period_seconds":         0,
			"reminder_alert_interval_minutes": -1,
		} {
			body[k] = v
		}
		id := s.createCheck(t, "/v1/checks/tcp", body)
		s.setInterval(t, id, fastInterval)
		return id
	}
	echoCheck := create(map[string]any{
		"name":     "e2e echo",
		"tcp_port": echo.Port,
		"tcp_data": "PING\n",
		"assertions": []map[string]string{
			{"type": "TCP_RESPONSE_DATA", "property": "", "comparison": "CONTAINS", "expected": "ECHO PING"},
			{"type": "TCP_RESPONSE_TIME", "property": "responseTime", "comparison": "LESS_THAN", "expected": "2000"},
		},
	})
	shouldFail := create(map[string]any{
		"name":            "e2e closed port",
		"tcp_port":        closed,
		"tcp_should_fail": true,
	})

	s.waitStatus(t, echoCheck, "UP", 30*time.Second)
	s.waitStatus(t, shouldFail, "UP", 30*time.Second)
	for _, r := range s.results(t, "tcp", echoCheck, begin) {
		if !r.Passing || str(r.TCPStatus) != "CONNECTED" || r.FailureSource != nil {
			t.Errorf("echo result %s: passing %v, tcp_status %v, failure_source %v; want passing CONNECTED",
				r.ID, r.Passing, str(r.TCPStatus), str(r.FailureSource))
		}
	}
	if n := s.count(t, `SELECT count(*) FROM check_results WHERE check_id = $1 AND passing AND response_body LIKE 'ECHO PING%'`, echoCheck); n == 0 {
		t.Error("no stored echo result carries the reply as its response body")
	}

	echo.close()
	closedAt := time.Now()
	seen := s.waitStatus(t, echoCheck, "DOWN", fastInterval*time.Second+slack)
	t.Logf("DOWN %s after the listener closed; statuses seen %v", time.Since(closedAt).Round(time.Millisecond), seen)
	mustOnlySee(t, seen, "UP", "VERIFYING", "DOWN")
	if inc := s.incidents(t, "tcp", echoCheck); len(inc) != 1 || inc[0].EndedAt != nil {
		t.Errorf("echo incidents: %+v, want one open", inc)
	}
	if got := s.outbox(t, echoCheck, "uptime.down"); got != 1 {
		t.Errorf("echo uptime.down outbox rows: %d, want 1", got)
	}
	var refused int
	for _, r := range s.results(t, "tcp", echoCheck, begin) {
		if r.Passing {
			continue
		}
		refused++
		if str(r.FailureSource) != "TRANSPORT" || str(r.FailureType) != "CONNECTION_REFUSED" || str(r.TCPStatus) != "REFUSED" {
			t.Errorf("echo result %s after close: failure %v/%v, tcp_status %v; want TRANSPORT/CONNECTION_REFUSED, REFUSED",
				r.ID, str(r.FailureSource), str(r.FailureType), str(r.TCPStatus))
		}
	}
	if refused == 0 {
		t.Error("no failing echo result after the listener closed")
	}

	if st, err := s.status(shouldFail); err != nil || st != "UP" {
		t.Errorf("tcp_should_fail check: %s %v, want UP", st, err)
	}
	for _, r := range s.results(t, "tcp", shouldFail, begin) {
		if !r.Passing || str(r.TCPStatus) != "REFUSED" {
			t.Errorf("tcp_should_fail result %s: passing %v, tcp_status %v; want passing REFUSED", r.ID, r.Passing, str(r.TCPStatus))
		}
	}
	if inc := s.incidents(t, "tcp", shouldFail); len(inc) != 0 {
		t.Errorf("tcp_should_fail incidents: %+v, want none", inc)
	}
	for _, id := range []uuid.UUID{echoCheck, shouldFail} {
		if dups := s.duplicateResults(t, id); len(dups) > 0 {
			t.Errorf("results stored more than once: %v", dups)
		}
	}
}

// mustOnlySee fails the test when seen holds a status outside allowed.
func mustOnlySee(t *testing.T, seen []string, allowed ...string) {
	t.Helper()
	for _, st := range seen {
		if !slices.Contains(allowed, st) {
			t.Errorf("statuses seen %v: %s is not one of %v", seen, st, allowed)
		}
	}
}

// deref is *p, or nil, for messages.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// str is *p, or "" when p is nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
