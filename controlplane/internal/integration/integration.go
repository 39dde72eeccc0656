// Package integration defines integrations, the destinations of alerts beyond webhooks and
// e-mail: their types, the settings each type takes (with its defaults, validation and which
// of them are secret), and the *_alerts list of checks and heartbeats that names each type.
// The API validates and redacts with it, the store seals what it validates, and the
// notifier's providers (notifier/provider) send with it. It imports nothing of the control
// plane.
package integration

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Types of integration (the API's `type`).
const (
	Slack          = "SLACK"
	Discord        = "DISCORD"
	MicrosoftTeams = "MICROSOFT_TEAMS"
	Telegram       = "TELEGRAM"
	Pushover       = "PUSHOVER"
	IncidentIO     = "INCIDENT_IO"
	Oncall         = "ONCALL"
)

// Defaults of the optional base URLs.
const (
	DefaultTelegramAPI  = "https://api.telegram.org"
	DefaultPushoverAPI  = "https://api.pushover.net/1/messages.json"
	DefaultPagerDutyAPI = "https://events.pagerduty.com/v2/enqueue"
)

// Limits of setting values.
const (
	MaxURL   = 2048 // characters of a URL setting
	MaxValue = 512  // characters of any other setting
	MaxName  = 255  // characters of an integration's name
	// MinSecret is the fewest characters of a secret that is not a URL. Every provider's
	// tokens and keys are far longer (Pushover's are 30 characters, PagerDuty's routing keys
	// 32), and a shorter value would be found inside ordinary words of the texts it is
	// redacted from.
	MinSecret = 8
)

// field is one setting of a type.
type field struct {
	Name     string
	Required bool
	Secret   bool   // sealed at rest (as every setting is), redacted in responses, never logged
	URL      bool   // an absolute http(s) URL
	Default  string // "" when none
}

// spec is what a type takes.
type spec struct {
	AlertsField string // the check and heartbeat list that names integrations of the type
	Fields      []field
}

var specs = map[string]spec{
	Slack:          {"slack_alerts", []field{{Name: "webhook_url", Required: true, Secret: true, URL: true}}},
	Discord:        {"discord_alerts", []field{{Name: "webhook_url", Required: true, Secret: true, URL: true}}},
	MicrosoftTeams: {"microsoft_teams_alerts", []field{{Name: "webhook_url", Required: true, Secret: true, URL: true}}},
	Telegram: {"telegram_alerts", []field{{Name: "bot_token", Required: true, Secret: true}, {Name: "chat_id", Required: true},
		{Name: "api_url", URL: true, Default: DefaultTelegramAPI}}},
	Pushover: {"pushover_alerts", []field{{Name: "app_token", Required: true, Secret: true},
		{Name: "user_key", Required: true, Secret: true}, {Name: "api_url", URL: true, Default: DefaultPushoverAPI}}},
	IncidentIO: {"incident_io_alerts", []field{{Name: "url", Required: true, Secret: true, URL: true},
		{Name: "token", Required: true, Secret: true}}},
	Oncall: {"oncall_alerts", []field{{Name: "routing_key", Required: true, Secret: true},
		{Name: "events_url", URL: true, Default: DefaultPagerDutyAPI}}},
}

// Types are every type, in the order the API documents them.
func Types() []string {
	return []string{Slack, Discord, MicrosoftTeams, Telegram, Pushover, IncidentIO, Oncall}
}

// Valid reports whether t is a type.
func Valid(t string) bool { _, ok := specs[t]; return ok }

// AlertsField is the *_alerts list of checks and heartbeats that names integrations of type t.
func AlertsField(t string) string { return specs[t].AlertsField }

// TypeOfAlertsField is the type whose integrations the *_alerts list names ("" for
// user_alerts and webhook_alerts, which name users and webhooks).
func TypeOfAlertsField(list string) string {
	for t, s := range specs {
		if s.AlertsField == list {
			return t
		}
	}
	return ""
}

// Settings are one integration's settings: every value is a string.
type Settings map[string]string

// FieldError is a bad setting: Field is "settings.<name>" (or "settings").
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Merge applies a PATCH's settings to the stored ones: a given value replaces, null (absent
// from patch but listed in cleared) removes, and a secret given as its own redacted form (a
// client sending back what it read) keeps the stored value.
func Merge(t string, stored, patch Settings, cleared []string) Settings {
	out := Settings{}
	for k, v := range stored {
		out[k] = v
	}
	for _, k := range cleared {
		delete(out, k)
	}
	for k, v := range patch {
		if sentBack(t, k, stored, v) {
			continue
		}
		out[k] = v
	}
	return out
}

// sentBack reports whether v, given for setting k, is the redacted form of a stored secret: a
// client writing back what it read, which keeps the stored value.
func sentBack(t, k string, stored Settings, v string) bool {
	f, ok := specs[t].field(k)
	return ok && f.Secret && stored[k] != "" && v == redact(f, stored[k])
}

// SecretsToResend names the secret settings a change must give again, because it moves a URL
// setting to another origin (scheme, host or port): the stored secrets were given for the old
// destination, and sending them to one the caller chose would hand them to anyone allowed to
// edit the integration but never allowed to read them. A secret counts as given when patch
// carries it, other than in its redacted form. stored are the settings before the change, next
// after it (defaults filled in). moved names the first URL setting that moved; both results are
// empty when none did or every secret is given.
func SecretsToResend(t string, stored, next, patch Settings) (moved string, missing []string) {
	for _, f := range specs[t].Fields {
		if f.URL && moved == "" && origin(stored[f.Name]) != origin(next[f.Name]) {
			moved = f.Name
		}
	}
	if moved == "" {
		return "", nil
	}
	for _, f := range specs[t].Fields {
		v, given := patch[f.Name]
		if f.Secret && (!given || sentBack(t, f.Name, stored, v)) {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	return moved, missing
}

// origin is the scheme, host and port a URL sends to, with the scheme's default port spelt
// out and the host in lower case, so that writing the same destination differently is not a
// move; "" when v is not an absolute URL.
func origin(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

func (s spec) field(name string) (field, bool) {
	i := slices.IndexFunc(s.Fields, func(f field) bool { return f.Name == name })
	if i < 0 {
		return field{}, false
	}
	return s.Fields[i], true
}

// Validate checks the settings of a type and returns them with defaults filled in; every
// problem is a FieldError naming the setting, in a stable order.
func Validate(t string, in Settings) (Settings, []FieldError) {
	sp, ok := specs[t]
	if !ok {
		return nil, []FieldError{{"type", "must be one of " + strings.Join(Types(), ", ")}}
	}
	var errs []FieldError
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, ok := sp.field(k); !ok {
			allowed := make([]string, len(sp.Fields))
			for i, f := range sp.Fields {
				allowed[i] = f.Name
			}
			errs = append(errs, FieldError{"settings." + k, fmt.Sprintf("is not a setting of %s; use %s", t, strings.Join(allowed, ", "))})
		}
	}
	out := Settings{}
	for _, f := range sp.Fields {
		v, given := in[f.Name]
		v = strings.TrimSpace(v)
		switch {
		case !given || v == "":
			if f.Required {
				errs = append(errs, FieldError{"settings." + f.Name, "is required"})
			} else if f.Default != "" {
				out[f.Name] = f.Default
			}
			continue
		case f.URL:
			if msg := checkURL(v); msg != "" {
				errs = append(errs, FieldError{"settings." + f.Name, msg})
				continue
			}
		case utf8.RuneCountInString(v) > MaxValue:
			errs = append(errs, FieldError{"settings." + f.Name, fmt.Sprintf("must be at most %d characters", MaxValue)})
			continue
		case strings.ContainsAny(v, "\r\n\t /?#"):
			errs = append(errs, FieldError{"settings." + f.Name, "must not contain spaces, '/', '?' or '#'"})
			continue
		case f.Secret && utf8.RuneCountInString(v) < MinSecret:
			errs = append(errs, FieldError{"settings." + f.Name, fmt.Sprintf("must be at least %d characters", MinSecret)})
			continue
		}
		out[f.Name] = v
	}
	return out, errs
}

func checkURL(v string) string {
	if utf8.RuneCountInString(v) > MaxURL {
		return fmt.Sprintf("must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "must be an absolute http(s) URL without credentials"
	}
	return ""
}

// Redacted are the settings as the API shows them: secrets replaced by "[redacted]", or for a
// secret URL by its scheme and host followed by "/[redacted]", so that the destination stays
// recognisable without its token.
func Redacted(t string, s Settings) Settings {
	out := Settings{}
	for _, f := range specs[t].Fields {
		if v, ok := s[f.Name]; ok {
			out[f.Name] = v
			if f.Secret {
				out[f.Name] = redact(f, v)
			}
		}
	}
	return out
}

func redact(f field, v string) string {
	if f.URL {
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host + "/[redacted]"
		}
	}
	return "[redacted]"
}

// Secrets are the secret values of s, to keep out of error texts and logs.
func Secrets(t string, s Settings) []string {
	var out []string
	for _, f := range specs[t].Fields {
		if v := s[f.Name]; f.Secret && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Decode reads stored settings.
func Decode(b []byte) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode integration settings: %w", err)
	}
	return s, nil
}

// TestResult is what a provider answered a test message (POST /v1/integrations/{id}/test).
type TestResult struct {
	Delivered  bool
	StatusCode *int   // nil when no answer came
	Body       string // the beginning of the answer, secrets redacted
	Error      string // "" when delivered
	LatencyMs  float64
}
