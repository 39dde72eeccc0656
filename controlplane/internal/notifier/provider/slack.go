package provider

import (
	"context"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// slack posts a Block Kit message to an incoming webhook (webhook_url), which Mattermost and
// Rocket.Chat accept too: `text` is the notification fallback, the blocks a header, the facts
// as fields and a button to the link. Slack answers 200 "ok", 429 with Retry-After.
type slack struct{}

func (slack) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	var fields []map[string]any
	link := ""
	for _, f := range m.Facts() {
		if f.Title == "Link" {
			link = f.Value
			continue
		}
		fields = append(fields, map[string]any{"type": "mrkdwn", "text": "*" + f.Title + "*\n" + truncate(f.Value, 1900)})
	}
	blocks := []map[string]any{
		{"type": "header", "text": map[string]any{"type": "plain_text", "text": truncate(m.Headline(), 150), "emoji": true}},
	}
	if len(fields) > 0 {
		blocks = append(blocks, map[string]any{"type": "section", "fields": fields[:min(len(fields), 10)]})
	}
	if link != "" {
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []map[string]any{{
			"type": "button", "text": map[string]any{"type": "plain_text", "text": "Open in Vantage"}, "url": link}}})
	}
	blocks = append(blocks, map[string]any{"type": "context", "elements": []map[string]any{{
		"type": "mrkdwn", "text": "Vantage · " + m.EventType + " · " + m.EventID}}})
	return postJSON(ctx, s["webhook_url"], map[string]any{"text": m.Text(), "blocks": blocks})
}
