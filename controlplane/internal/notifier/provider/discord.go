package provider

import (
	"context"
	"net/http"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// Embed colours: red for down, green for up and resolved, amber for an open incident and a
// notice, grey for a test.
const (
	colourDown  = 0xD93025
	colourUp    = 0x1E8E3E
	colourOpen  = 0xF9AB00
	colourTest  = 0x80868B
	discordName = "Vantage"
)

// discord posts one embed to a channel webhook (webhook_url): the headline as its title, the
// facts as inline fields, the link as its url. Discord answers 204 (200 with ?wait=true), and
// 429 with Retry-After and a JSON retry_after.
type discord struct{}

func (discord) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	var fields []map[string]any
	url := ""
	for _, f := range m.Facts() {
		if f.Title == "Link" {
			url = f.Value
			continue
		}
		fields = append(fields, map[string]any{"name": f.Title, "value": truncate(f.Value, 1024), "inline": f.Title != "Last result"})
	}
	embed := map[string]any{"title": truncate(m.Headline(), 256), "color": colour(m), "fields": fields,
		"timestamp": m.At.UTC().Format(time.RFC3339), "footer": map[string]any{"text": "Vantage · " + m.EventType}}
	if url != "" {
		embed["url"] = url
	}
	return postJSON(ctx, s["webhook_url"], map[string]any{"username": discordName, "embeds": []any{embed},
		"allowed_mentions": map[string]any{"parse": []string{}}})
}

func colour(m Message) int {
	switch {
	case m.Test:
		return colourTest
	case m.State == Down:
		return colourDown
	case m.State == Open, m.State == Notice:
		return colourOpen
	}
	return colourUp
}
