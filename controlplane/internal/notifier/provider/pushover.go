package provider

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// pushover posts to the messages API (api_url, form-encoded): token, user, title, message,
// url and timestamp, with priority from the alert's alert_priority: HIGH is 1 (high priority,
// bypassing quiet hours), LOW is 0; a recovery is -1 (quiet) and a test 0. Pushover answers
// 200 {"status":1}, 4xx {"status":0,"errors":[…]}, 429 over the application's quota.
type pushover struct{}

func (pushover) Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error) {
	form := url.Values{}
	form.Set("token", s["app_token"])
	form.Set("user", s["user_key"])
	form.Set("title", truncate(m.Headline(), 250))
	msg := m.Text()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	form.Set("message", truncate(orDefault(msg, m.Headline()), 1024))
	form.Set("priority", strconv.Itoa(pushoverPriority(m)))
	if m.Link != "" {
		form.Set("url", m.Link)
		form.Set("url_title", "Open in Vantage")
	}
	if !m.At.IsZero() {
		form.Set("timestamp", strconv.FormatInt(m.At.Unix(), 10))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, orDefault(s["api_url"], integration.DefaultPushoverAPI),
		strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}

func pushoverPriority(m Message) int {
	switch {
	case m.Test:
		return 0
	case m.Resolves():
		return -1
	case m.Priority == "HIGH":
		return 1
	}
	return 0
}
