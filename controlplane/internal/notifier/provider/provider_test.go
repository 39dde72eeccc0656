package provider

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header string
		body   string
		want   time.Duration
	}{
		{"seconds", "7", "", 7 * time.Second},
		{"HTTP date", now.Add(30 * time.Second).Format(http.TimeFormat), "", 30 * time.Second},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), "", 0},
		{"Discord body", "", `{"message":"You are being rate limited.","retry_after":0.5,"global":false}`, 500 * time.Millisecond},
		{"Telegram body", "", `{"ok":false,"error_code":429,"parameters":{"retry_after":3}}`, 3 * time.Second},
		{"nothing", "", `oops`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tc.header != "" {
				h.Set("Retry-After", tc.header)
			}
			if got := RetryAfter(h, []byte(tc.body), now); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Every message says what failed, since when, from where, the last result and the link.
func TestMessageFacts(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	m := Message{State: Down, Kind: "check", Name: "api", Target: "https://api.example.com", Since: since,
		At: since.Add(5 * time.Minute), Regions: []string{"cloud:eu-west-2"}, Summary: "HTTP 503", Priority: "HIGH",
		Link: "https://vantage.example/v1/checks/1"}
	text := m.Text()
	for _, want := range []string{"DOWN: check api", "Target: https://api.example.com", "Since: 2026-01-02T15:00:00Z (5m0s)",
		"Regions: cloud:eu-west-2", "Last result: HTTP 503", "Priority: HIGH"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	m.Test = true
	if !strings.HasPrefix(m.Headline(), "[TEST] ") {
		t.Errorf("test headline %q", m.Headline())
	}
}
