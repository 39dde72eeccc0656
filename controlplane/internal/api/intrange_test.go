package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestIntegerFieldsOutOfRange sends every integer field of the request bodies a value no
// stored integer can hold: each is a 400 naming the field, never a 500 nor a value cut short
// on its way to the database (9999999999 once became 1410065407).
func TestIntegerFieldsOutOfRange(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "intrange")
	cases := []struct {
		path   string
		base   string // a valid body without the field
		fields []string
	}{
		{"/v1/checks/uptime", `{"name":"u","url":"https://example.com"}`,
			[]string{"test_interval", "timeout", "reminder_alert_interval_minutes", "confirmation_period_seconds", "recovery_period_seconds"}},
		{"/v1/checks", `{"name":"u","url":"https://example.com"}`, []string{"test_interval", "timeout", "reminder_alert_interval_minutes"}},
		{"/v1/checks/tcp", `{"name":"t","tcp_hostname":"example.com","tcp_port":443}`, []string{"tcp_port", "timeout"}},
		{"/v1/checks/dns", `{"name":"d","dns_domain":"example.com","dns_record_type":"A"}`, []string{"test_interval"}},
		{"/v1/heartbeats", `{"name":"h","report_period":60,"grace_period":60}`,
			[]string{"report_period", "grace_period", "reminder_alert_interval_minutes"}},
		{"/v1/maintenance-windows", `{"name":"w","start_date":"2026-01-05T22:30:00.000Z","duration_minutes":90,"timezone":"UTC","days_of_week":["MONDAY"]}`,
			[]string{"duration_minutes"}},
		{"/v1/status_pages/" + page + "/scheduled_maintenance", `{"title":"m","description":"d","start_date":"2030-01-05T22:30:00.000Z","duration_minutes":60}`,
			[]string{"duration_minutes"}},
	}
	for _, tc := range cases {
		for _, f := range tc.fields {
			for _, v := range []string{"99999999999999999999999", "9999999999", "-9999999999", "2147483648"} {
				var body map[string]json.RawMessage
				if err := json.Unmarshal([]byte(tc.base), &body); err != nil {
					t.Fatal(err)
				}
				body[f] = json.RawMessage(v)
				r := h.do(http.MethodPost, tc.path, h.tokenA, body)
				if r.Status != http.StatusBadRequest || !strings.Contains(r.ErrorText(), f+": is out of range") {
					t.Errorf("POST %s %s=%s: %d %s", tc.path, f, v, r.Status, r.Raw)
				}
			}
		}
	}
}
