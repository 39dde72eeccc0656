package notifier

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
)

// TestDegradedMessages: an integration gets one message per reason of degradation, opened by
// uptime.degraded and resolved by uptime.restored under the same dedup key, so that a check
// slow and regionally degraded at once keeps two separate incidents.
func TestDegradedMessages(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("0190a0b0-0000-7000-8000-000000000001")
	url := "https://api.example.com/health"
	snap := event.Check{ID: id, Name: "API", Kind: "uptime", URL: &url, State: "UP", AlertPriority: "HIGH"}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tc := range []struct {
		typ, reason                    string
		failing, slow                  []string
		wantName, wantKey, wantSummary string
		wantState                      provider.State
		wantRegions                    []string
	}{
		{event.TypeUptimeDegraded, event.DegradedRegional, []string{"cloud:eu-west-2"}, nil, "API (regional degradation)",
			"vantage/check/" + id.String() + "/degraded", "UP, but failing in cloud:eu-west-2", provider.Open, []string{"cloud:eu-west-2"}},
		{event.TypeUptimeRestored, event.DegradedRegional, nil, nil, "API (regional degradation)",
			"vantage/check/" + id.String() + "/degraded", "passing in every region again", provider.Resolved, nil},
		{event.TypeUptimeDegraded, event.DegradedSlow, nil, []string{"cloud:us-east-1", "cloud:eu-west-2"}, "API (slow)",
			"vantage/check/" + id.String() + "/slow", "UP, but slower than its threshold in cloud:us-east-1, cloud:eu-west-2", provider.Open,
			[]string{"cloud:us-east-1", "cloud:eu-west-2"}},
		{event.TypeUptimeRestored, event.DegradedSlow, nil, nil, "API (slow)", "vantage/check/" + id.String() + "/slow", "fast again", provider.Resolved, nil},
	} {
		t.Run(tc.typ+" "+tc.reason, func(t *testing.T) {
			t.Parallel()
			r := event.RegionalAlert{UptimeAlert: event.UptimeAlert{OccurredAt: at, Check: snap},
				FailingRegions: tc.failing, Reason: tc.reason, SlowRegions: tc.slow}
			var ev event.Event = event.UptimeDegraded{RegionalAlert: r}
			if tc.typ == event.TypeUptimeRestored {
				ev = event.UptimeRestored{RegionalAlert: r}
			}
			a, err := newAlert(id, ev, time.Time{}, "HIGH")
			if err != nil {
				t.Fatal(err)
			}
			m := a.message("https://vantage.example")
			if m.Name != tc.wantName || m.DedupKey != tc.wantKey || m.Summary != tc.wantSummary || m.State != tc.wantState {
				t.Errorf("message %q %q %q %s, want %q %q %q %s", m.Name, m.DedupKey, m.Summary, m.State,
					tc.wantName, tc.wantKey, tc.wantSummary, tc.wantState)
			}
			if len(tc.wantRegions) > 0 && !slices.Equal(m.Regions, tc.wantRegions) {
				t.Errorf("regions %v, want %v", m.Regions, tc.wantRegions)
			}
		})
	}
}
