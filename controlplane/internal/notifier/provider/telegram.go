package provider

import (
	"context"
	"html"
	"net/http"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// telegram calls the Bot API's sendMessage (POST {api_url}/bot{bot_token}/sendMessage) with
// chat_id and an HTML-formatted text (the headline in bold, one line per fact, the link).
// The Bot API answers {"ok":true,…}, and 429 with {"parameters":{"retry_after":N}}.
type telegram struct{}

func (telegram) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	var b strings.Builder
	b.WriteString("<b>" + html.EscapeString(m.Headline()) + "</b>")
	for _, f := range m.Facts() {
		if f.Title == "Link" {
			b.WriteString("\n<a href=\"" + html.EscapeString(f.Value) + "\">Open in Vantage</a>")
			continue
		}
		b.WriteString("\n<b>" + html.EscapeString(f.Title) + ":</b> " + html.EscapeString(f.Value))
	}
	base := strings.TrimRight(orDefault(s["api_url"], integration.DefaultTelegramAPI), "/")
	return postJSON(ctx, base+"/bot"+s["bot_token"]+"/sendMessage", map[string]any{"chat_id": s["chat_id"],
		"text": truncate(b.String(), 4096), "parse_mode": "HTML", "disable_web_page_preview": true})
}
