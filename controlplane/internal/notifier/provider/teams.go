package provider

import (
	"context"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// teams posts an Adaptive Card (version 1.4) to a Microsoft Teams Workflows webhook
// (webhook_url), wrapped as the "message" with one attachment Workflows expects: a bold
// headline coloured by state, the facts as a FactSet and an Action.OpenUrl to the link. The
// webhook answers 202 Accepted, 429 when throttled.
type teams struct{}

func (teams) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	var facts []map[string]any
	var actions []map[string]any
	for _, f := range m.Facts() {
		if f.Title == "Link" {
			actions = append(actions, map[string]any{"type": "Action.OpenUrl", "title": "Open in Vantage", "url": f.Value})
			continue
		}
		facts = append(facts, map[string]any{"title": f.Title, "value": f.Value})
	}
	colour := map[State]string{Down: "Attention", Up: "Good", Open: "Warning", Resolved: "Good", Notice: "Warning"}[m.State]
	body := []map[string]any{
		{"type": "TextBlock", "text": m.Headline(), "weight": "Bolder", "size": "Large", "wrap": true, "color": colour},
		{"type": "FactSet", "facts": facts},
		{"type": "TextBlock", "text": "Vantage · " + m.EventType, "isSubtle": true, "size": "Small", "wrap": true},
	}
	card := map[string]any{"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
		"version": "1.4", "body": body}
	if len(actions) > 0 {
		card["actions"] = actions
	}
	return postJSON(ctx, s["webhook_url"], map[string]any{"type": "message", "attachments": []map[string]any{{
		"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": nil, "content": card}}})
}
