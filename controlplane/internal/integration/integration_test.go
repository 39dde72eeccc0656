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
		{"telegram default", Telegram, Settings{"bot_token": "1:a", "chat_id": "@ops"}, nil,
			Settings{"bot_token": "1:a", "chat_id": "@ops", "api_url": DefaultTelegramAPI}},
		{"oncall default", Oncall, Settings{"routing_key": "k"}, nil, Settings{"routing_key": "k", "events_url": DefaultPagerDutyAPI}},
		{"missing", Pushover, Settings{}, []string{"settings.app_token", "settings.user_key"}, nil},
		{"unknown", Discord, Settings{"webhook_url": "https://d.example/x", "avatar": "x"}, []string{"settings.avatar"}, nil},
		{"credentials in URL", IncidentIO, Settings{"url": "https://u:p@i.example/x", "token": "t"}, []string{"settings.url"}, nil},
		{"not http", MicrosoftTeams, Settings{"webhook_url": "javascript:alert(1)"}, []string{"settings.webhook_url"}, nil},
		{"path in token", Telegram, Settings{"bot_token": "1:a/../b", "chat_id": "1"}, []string{"settings.bot_token"}, nil},
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
