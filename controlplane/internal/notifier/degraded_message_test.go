package notifier

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestDegradedMessages: an integration gets one message per reason of degradation, opened by
// uptime.degraded and resolved by uptime.restored under the same dedup key, so that a check
// slow and regionally degraded at once keeps two separate incidents.
func TestDegradedMessages(t *testing.T) {
	t.Parallel()
	const id = "0190a0b0-0000-7000-8000-000000000001"
	for _, tc := range []struct {
		typ, reason                    string
		failing, slow                  []string
		wantName, wantKey, wantSummary string
		wantState                      provider.State
		wantRegions                    []string
	}{
		{"uptime.degraded", "regional", []string{"cloud:eu-west-2"}, nil, "API (regional degradation)",
			"vantage/check/" + id + "/degraded", "UP, but failing in cloud:eu-west-2", provider.Open, []string{"cloud:eu-west-2"}},
		{"uptime.restored", "regional", nil, nil, "API (regional degradation)",
			"vantage/check/" + id + "/degraded", "passing in every region again", provider.Resolved, nil},
		{"uptime.degraded", "slow", nil, []string{"cloud:us-east-1", "cloud:eu-west-2"}, "API (slow)",
			"vantage/check/" + id + "/slow", "UP, but slower than its threshold in cloud:us-east-1, cloud:eu-west-2", provider.Open,
			[]string{"cloud:us-east-1", "cloud:eu-west-2"}},
		{"uptime.restored", "slow", nil, nil, "API (slow)", "vantage/check/" + id + "/slow", "fast again", provider.Resolved, nil},
	} {
		t.Run(tc.typ+" "+tc.reason, func(t *testing.T) {
			t.Parallel()
			body, err := json.Marshal(map[string]any{"id": "e1", "type": tc.typ, "occurred_at": "2026-03-04T05:06:07Z",
				"alert_priority": "HIGH", "reminder": false, "data": map[string]any{
					"check":  map[string]any{"id": id, "name": "API", "url": "https://api.example.com/health"},
					"reason": tc.reason, "failing_regions": regionList(tc.failing), "slow_regions": regionList(tc.slow)}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := (&Notifier{}).message(context.Background(), store.DueDelivery{EventType: tc.typ, Body: body})
			if err != nil {
				t.Fatal(err)
			}
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
