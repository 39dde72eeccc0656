// Package provider turns one alert (a Message) into the request a chat or on-call service
// documents for it, one file per service: Slack Block Kit through incoming webhooks (also
// Mattermost and Rocket.Chat, which accept the same), Discord embeds, Microsoft Teams Adaptive
// Cards through Workflows webhooks, Telegram's Bot API sendMessage, Pushover's messages API,
// incident.io's HTTP alert sources and PagerDuty's Events API v2. Providers build requests
// only; the notifier sends them, with its address policy, timeout and retries, and reads the
// answer with Outcome.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// State is what an alert says about its resource.
type State string

// States of a Message.
const (
	Down     State = "DOWN"     // a check or heartbeat is down (or still down: Reminder)
	Up       State = "UP"       // it recovered; the incident is resolved
	Open     State = "OPEN"     // a status page incident started or changed
	Resolved State = "RESOLVED" // a status page incident was resolved
	Notice   State = "NOTICE"   // an event of a type without states of its own: its title says it
)

// Message is one alert, said the same way to every provider.
type Message struct {
	EventID   string
	EventType string // uptime.down, heartbeat.up, status_page.incident.started, … or "test"
	State     State
	Reminder  bool
	Test      bool   // a test message (POST /v1/integrations/{id}/test): marked as such
	Kind      string // what it is about: "check", "heartbeat", "status page incident" or "event"
	Name      string // the check's, heartbeat's or incident's name; a notice's title
	Target    string // the URL or host a check probes; "" when none
	Since     time.Time
	Until     *time.Time // when it recovered
	Regions   []string   // the regions that failed (else the check's regions)
	Summary   string     // the last result, or the incident's latest update
	Link      string     // where to look
	Priority  string     // LOW or HIGH (alert_priority)
	DedupKey  string     // one per incident: a trigger and its resolve share it
	At        time.Time  // when it happened
}

// Resolves reports whether the message ends an incident.
func (m Message) Resolves() bool { return m.State == Up || m.State == Resolved }

// Headline is the one-line title every provider shows.
func (m Message) Headline() string {
	var h string
	switch m.State {
	case Down:
		h = fmt.Sprintf("DOWN: %s %s", m.Kind, m.Name)
		if m.Reminder {
			h = fmt.Sprintf("Still DOWN: %s %s", m.Kind, m.Name)
		}
	case Up:
		h = fmt.Sprintf("UP: %s %s recovered", m.Kind, m.Name)
	case Open:
		h = fmt.Sprintf("Incident: %s", m.Name)
	case Resolved:
		h = fmt.Sprintf("Resolved: %s", m.Name)
	case Notice:
		h = m.Name
	}
	if m.Test {
		h = "[TEST] " + h + " (a test message from Vantage; nothing is down)"
	}
	return h
}

// Fact is one labelled detail of a message.
type Fact struct{ Title, Value string }

// Facts are the details every provider lists: what failed, since when, from where, the last
// result and the link.
func (m Message) Facts() []Fact {
	var out []Fact
	if m.Target != "" {
		out = append(out, Fact{"Target", m.Target})
	}
	if !m.Since.IsZero() {
		since := m.Since.UTC().Format(time.RFC3339)
		switch {
		case m.Until != nil:
			out = append(out, Fact{"Down", fmt.Sprintf("from %s to %s (%s)", since, m.Until.UTC().Format(time.RFC3339),
				m.Until.Sub(m.Since).Round(time.Second))})
		case m.State == Down:
			out = append(out, Fact{"Since", fmt.Sprintf("%s (%s)", since, m.At.Sub(m.Since).Round(time.Second))})
		default:
			out = append(out, Fact{"Since", since})
		}
	}
	if len(m.Regions) > 0 {
		out = append(out, Fact{"Regions", strings.Join(m.Regions, ", ")})
	}
	if m.Summary != "" {
		out = append(out, Fact{"Last result", m.Summary})
	}
	if m.Priority != "" {
		out = append(out, Fact{"Priority", m.Priority})
	}
	if m.Link != "" {
		out = append(out, Fact{"Link", m.Link})
	}
	return out
}

// Text is the message as plain text: the headline, then one line per fact.
func (m Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Headline())
	for _, f := range m.Facts() {
		if f.Title == "Link" {
			continue
		}
		b.WriteString("\n" + f.Title + ": " + f.Value)
	}
	return b.String()
}

// Provider builds the request that delivers a message to one integration.
type Provider interface {
	Request(ctx context.Context, s integration.Settings, m Message) (*http.Request, error)
}

// For returns the provider of an integration type (nil for an unknown type).
func For(t string) Provider {
	switch t {
	case integration.Slack:
		return slack{}
	case integration.Discord:
		return discord{}
	case integration.MicrosoftTeams:
		return teams{}
	case integration.Telegram:
		return telegram{}
	case integration.Pushover:
		return pushover{}
	case integration.IncidentIO:
		return incidentIO{}
	case integration.Oncall:
		return pagerDuty{}
	}
	return nil
}

// postJSON is a JSON POST of v to url.
func postJSON(ctx context.Context, url string, v any) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the integration's URL is not a valid request target")
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// RetryAfter is how long a 429 (or 503) answer asks to wait: the Retry-After header (seconds
// or an HTTP date), else a retry_after member of a JSON body (Discord's seconds at the top,
// Telegram's under parameters). 0 when the answer says nothing.
func RetryAfter(h http.Header, body []byte, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var b struct {
		RetryAfter float64 `json:"retry_after"`
		Parameters struct {
			RetryAfter float64 `json:"retry_after"`
		} `json:"parameters"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.RetryAfter > 0 {
			return time.Duration(b.RetryAfter * float64(time.Second))
		}
		if b.Parameters.RetryAfter > 0 {
			return time.Duration(b.Parameters.RetryAfter * float64(time.Second))
		}
	}
	return 0
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
