package provider

import (
	"context"
	"net/http"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// pagerDuty sends a PagerDuty Events API v2 event (POST events_url): "trigger" with a
// dedup_key per incident while it is down (reminders re-trigger the same alert, which
// PagerDuty de-duplicates), and "resolve" with the same key on recovery, so that the on-call
// incident closes itself. Severity follows alert_priority (HIGH critical, LOW warning; info for
// a test). PagerDuty answers 202 {"status":"success","dedup_key":…}, 400 for a bad event, 429
// when throttled.
type pagerDuty struct{}

func (pagerDuty) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	ev := map[string]any{"routing_key": s["routing_key"], "dedup_key": m.DedupKey, "client": "Vantage"}
	if m.Link != "" {
		ev["client_url"] = m.Link
	}
	if m.Resolves() {
		ev["event_action"] = "resolve"
	} else {
		severity := "warning"
		switch {
		case m.Test:
			severity = "info"
		case m.Priority == "HIGH":
			severity = "critical"
		}
		details := map[string]any{"event_id": m.EventID, "event_type": m.EventType}
		for _, f := range m.Facts() {
			details[f.Title] = f.Value
		}
		at := m.At
		if at.IsZero() {
			at = time.Now()
		}
		ev["event_action"] = "trigger"
		ev["payload"] = map[string]any{"summary": truncate(m.Headline(), 1024), "source": orDefault(m.Target, "vantage"),
			"severity": severity, "timestamp": at.UTC().Format(time.RFC3339), "component": m.Name, "class": m.EventType,
			"custom_details": details}
		if m.Link != "" {
			ev["links"] = []map[string]any{{"href": m.Link, "text": "Open in Vantage"}}
		}
	}
	return postJSON(ctx, orDefault(s["events_url"], integration.DefaultPagerDutyAPI), ev)
}
