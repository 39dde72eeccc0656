package provider

import (
	"context"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// incidentIO posts to an incident.io HTTP alert source (url, with "Authorization: Bearer
// token"): title, description, deduplication_key (one per incident), status "firing" or
// "resolved", source_url and metadata. incident.io answers 202 {"status":"success",…}, 429
// when rate limited.
type incidentIO struct{}

func (incidentIO) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	status := "firing"
	if m.Resolves() {
		status = "resolved"
	}
	meta := map[string]any{"event_id": m.EventID, "event_type": m.EventType, "kind": m.Kind, "name": m.Name,
		"alert_priority": m.Priority, "regions": m.Regions, "test": m.Test}
	if m.Target != "" {
		meta["target"] = m.Target
	}
	body := map[string]any{"title": m.Headline(), "description": m.Text(), "deduplication_key": m.DedupKey,
		"status": status, "metadata": meta}
	if m.Link != "" {
		body["source_url"] = m.Link
	}
	req, err := postJSON(ctx, s["url"], body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s["token"])
	return req, nil
}
