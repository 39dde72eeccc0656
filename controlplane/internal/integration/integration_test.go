package integration

import (
	"slices"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		typ  string
		in   Settings
		want []string // fields with errors
		out  Settings
	}{
		{"slack", Slack, Settings{"webhook_url": " https://hooks.slack.com/services/T/B/x "}, nil,
			Settings{"webhook_url": "https://hooks.slack.com/services/T/B/x"}},
		{"telegram default", Telegram, Settings{"bot_token": "1:abcdef", "chat_id": "@ops"}, nil,
			Settings{"bot_token": "1:abcdef", "chat_id": "@ops", "api_url": DefaultTelegramAPI}},
		{"oncall default", Oncall, Settings{"routing_key": "routing-key"}, nil, Settings{"routing_key": "routing-key", "events_url": DefaultPagerDutyAPI}},
		{"missing", Pushover, Settings{}, []string{"settings.app_token", "settings.user_key"}, nil},
		{"unknown", Discord, Settings{"webhook_url": "https://d.example/x", "avatar": "x"}, []string{"settings.avatar"}, nil},
		{"credentials in URL", IncidentIO, Settings{"url": "https://u:p@i.example/x", "token": "inc-token"}, []string{"settings.url"}, nil},
		{"not http", MicrosoftTeams, Settings{"webhook_url": "javascript:alert(1)"}, []string{"settings.webhook_url"}, nil},
		{"path in token", Telegram, Settings{"bot_token": "1:a/../b", "chat_id": "1"}, []string{"settings.bot_token"}, nil},
		// Short secrets are refused: they would be redacted inside ordinary words.
		{"short secrets", Pushover, Settings{"app_token": "at", "user_key": "1234567"}, []string{"settings.app_token", "settings.user_key"}, nil},
		{"8 characters", Oncall, Settings{"routing_key": "12345678"}, nil, Settings{"routing_key": "12345678", "events_url": DefaultPagerDutyAPI}},
		{"short non-secret", Telegram, Settings{"bot_token": "1:abcdef", "chat_id": "1"}, nil, nil},
		{"unknown type", "IRC", Settings{}, []string{"type"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errs := Validate(tc.typ, tc.in)
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			if !slices.Equal(fields, tc.want) {
				t.Fatalf("errors %v, want fields %v", errs, tc.want)
			}
			if tc.out != nil && len(out) != len(tc.out) {
				t.Fatalf("out %v, want %v", out, tc.out)
			}
			for k, v := range tc.out {
				if out[k] != v {
					t.Fatalf("out %v, want %v", out, tc.out)
				}
			}
		})
	}
}

func TestRedactedAndMerge(t *testing.T) {
	t.Parallel()
	stored := Settings{"bot_token": "1:secret", "chat_id": "42", "api_url": "https://tg.example"}
	red := Redacted(Telegram, stored)
	if red["bot_token"] != "[redacted]" || red["chat_id"] != "42" || red["api_url"] != "https://tg.example" {
		t.Fatalf("redacted %v", red)
	}
	if r := Redacted(Slack, Settings{"webhook_url": "https://hooks.slack.com/services/T/B/x"}); r["webhook_url"] != "https://hooks.slack.com/[redacted]" {
		t.Fatalf("redacted URL %v", r)
	}
	// Sent back redacted: kept; a new value: replaced; null: removed (back to the default).
	m := Merge(Telegram, stored, Settings{"bot_token": "[redacted]", "chat_id": "43"}, []string{"api_url"})
	if m["bot_token"] != "1:secret" || m["chat_id"] != "43" || m["api_url"] != "" {
		t.Fatalf("merged %v", m)
	}
	if m := Merge(Telegram, stored, Settings{"bot_token": "2:new"}, nil); m["bot_token"] != "2:new" {
		t.Fatalf("merged %v", m)
	}
	if s := Secrets(Pushover, Settings{"app_token": "a", "user_key": "u", "api_url": "https://p.example"}); !slices.Equal(s, []string{"a", "u"}) {
		t.Fatalf("secrets %v", s)
	}
}

// TestSecretsToResend: a change that moves a URL setting to another scheme, host or port must
// give every secret again (a redacted one sent back does not count); a path, the same origin
// spelt differently, or a secret URL given whole needs nothing more.
func TestSecretsToResend(t *testing.T) {
	t.Parallel()
	tg := Settings{"bot_token": "1:secret", "chat_id": "42", "api_url": DefaultTelegramAPI}
	inc := Settings{"url": "https://api.incident.io/v2/alert_events/http/src", "token": "inc-secret"}
	for _, tc := range []struct {
		name    string
		typ     string
		stored  Settings
		patch   Settings
		cleared []string
		moved   string
		missing []string
	}{
		{"host", Telegram, tg, Settings{"api_url": "https://evil.example"}, nil, "api_url", []string{"bot_token"}},
		{"scheme", Telegram, tg, Settings{"api_url": "http://api.telegram.org"}, nil, "api_url", []string{"bot_token"}},
		{"port", Telegram, tg, Settings{"api_url": "https://api.telegram.org:8443"}, nil, "api_url", []string{"bot_token"}},
		{"secret sent back redacted", Telegram, tg, Settings{"api_url": "https://evil.example", "bot_token": "[redacted]"}, nil,
			"api_url", []string{"bot_token"}},
		{"secret given", Telegram, tg, Settings{"api_url": "https://evil.example", "bot_token": "2:another"}, nil, "", nil},
		{"path only", Telegram, tg, Settings{"api_url": "https://api.telegram.org/proxy"}, nil, "", nil},
		{"same origin spelt differently", Telegram, tg, Settings{"api_url": "HTTPS://API.Telegram.org:443"}, nil, "", nil},
		{"back to the default", Telegram, Settings{"bot_token": "1:secret", "chat_id": "42", "api_url": "https://tg.example"},
			nil, []string{"api_url"}, "api_url", []string{"bot_token"}},
		{"every secret of two", Pushover, Settings{"app_token": "app-secret", "user_key": "user-secret", "api_url": DefaultPushoverAPI},
			Settings{"api_url": "https://evil.example/1/messages.json", "user_key": "user-other"}, nil, "api_url", []string{"app_token"}},
		{"oncall", Oncall, Settings{"routing_key": "pd-secret", "events_url": DefaultPagerDutyAPI},
			Settings{"events_url": "https://evil.example/v2/enqueue"}, nil, "events_url", []string{"routing_key"}},
		{"secret URL moved without the token", IncidentIO, inc, Settings{"url": "https://evil.example/x"}, nil, "url", []string{"token"}},
		{"secret URL moved with the token", IncidentIO, inc, Settings{"url": "https://evil.example/x", "token": "inc-other"}, nil, "", nil},
		{"secret URL sent back", Slack, Settings{"webhook_url": "https://hooks.slack.com/services/T/B/x"},
			Settings{"webhook_url": "https://hooks.slack.com/[redacted]"}, nil, "", nil},
		{"webhook URL replaced", Slack, Settings{"webhook_url": "https://hooks.slack.com/services/T/B/x"},
			Settings{"webhook_url": "https://chat.example/hooks/y"}, nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next, errs := Validate(tc.typ, Merge(tc.typ, tc.stored, tc.patch, tc.cleared))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			moved, missing := SecretsToResend(tc.typ, tc.stored, next, tc.patch)
			if moved != tc.moved || !slices.Equal(missing, tc.missing) {
				t.Fatalf("SecretsToResend = %q %v, want %q %v", moved, missing, tc.moved, tc.missing)
			}
		})
	}
}
