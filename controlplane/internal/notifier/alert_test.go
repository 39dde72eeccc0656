package notifier

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
	"github.com/vantagehq/vantage/pkg/check"
)

// describedRegion stands for an event type the notifier has no case for that says itself, as
// a new type may (describer).
type describedRegion struct{ event.RegionUnserved }

func (describedRegion) Describe() (string, string) {
	return "No agent serves cloud:eu-west-2", "3 checks run from it"
}

// TestAlertMessageOfEveryEventType: the message of each event type that reaches integrations
// says what the document-parsing path said (its name, target, since when, regions, summary,
// link, dedup key, priority and time), now read from the typed event; an event type without a
// case is a notice with its type, or with its own title and summary.
func TestAlertMessageOfEveryEventType(t *testing.T) {
	t.Parallel()
	const base = "https://vantage.example"
	id := uuid.MustParse("0190a0b0-0000-7000-8000-000000000001")
	chk := uuid.MustParse("0190a0b0-0000-7000-8000-00000000c001")
	inc := uuid.MustParse("0190a0b0-0000-7000-8000-00000000d001")
	hbID := uuid.MustParse("0190a0b0-0000-7000-8000-00000000b001")
	page := uuid.MustParse("0190a0b0-0000-7000-8000-00000000a001")
	at := time.Date(2026, 3, 4, 5, 10, 0, 0, time.UTC)
	started, ended := at.Add(-10*time.Minute), at.Add(-time.Minute)
	url := "https://api.example.com/health"
	snap := event.Check{ID: chk, Name: "api", Kind: "uptime", URL: &url, State: "DOWN", AlertPriority: "HIGH",
		Alerts: json.RawMessage(`{"webhook_alerts":["w1"],"slack_alerts":["s1"],"user_alerts":["u1"]}`)}
	down := event.UptimeAlert{OccurredAt: at, Check: snap, Incident: &event.CheckIncident{ID: inc, CheckID: chk, StartedAt: started}}
	up := down
	up.Incident = &event.CheckIncident{ID: inc, CheckID: chk, StartedAt: started, EndedAt: &ended}
	regional := event.RegionalAlert{UptimeAlert: event.UptimeAlert{OccurredAt: at, Check: snap},
		FailingRegions: []string{"cloud:eu-west-2", "cloud:us-east-1"}}
	hb := func(status, extra string) event.HeartbeatAlert {
		return event.HeartbeatAlert{OccurredAt: at, Heartbeat: json.RawMessage(`{"id":"` + hbID.String() + `","name":"nightly backup",` +
			`"status":"` + status + `","grace_period":300,"alert_priority":"LOW",` + extra +
			`"alerts":{"oncall_alerts":["p1"],"webhook_alerts":[]}}`)}
	}
	change := event.IncidentChange{OccurredAt: at, StatusPage: event.PageRef{ID: page, Name: "Acme"},
		Incident: json.RawMessage(`{"id":"e001","title":"Elevated errors","impact":"PARTIAL_OUTAGE","started":"2026-03-04T05:06:07.891Z",` +
			`"updates":[{"status":"INVESTIGATING","description":"Looking into it."},{"status":"OLDER","description":"ignored"}]}`)}
	incStarted := time.Date(2026, 3, 4, 5, 6, 7, 891e6, time.UTC)
	region := event.RegionUnserved{RegionChange: event.RegionChange{OccurredAt: at, Region: "cloud:eu-west-2", UnservedSince: started, Checks: 3}}

	checkMsg := provider.Message{EventID: id.String(), EventType: event.TypeUptimeDown, State: provider.Down, Kind: "check",
		Name: "api", Target: url, Since: started, Link: base + "/v1/checks/" + chk.String(), Priority: "HIGH",
		DedupKey: "vantage/check/" + chk.String() + "/incident/" + inc.String(), At: at}
	with := func(m provider.Message, edit func(*provider.Message)) provider.Message { edit(&m); return m }
	for _, tc := range []struct {
		name string
		ev   event.Event
		want provider.Message
	}{
		{"uptime.down", event.UptimeDown{UptimeAlert: down}, checkMsg},
		{"uptime.down reminder", event.UptimeReminder{UptimeAlert: down}, with(checkMsg, func(m *provider.Message) { m.Reminder = true })},
		{"uptime.up", event.UptimeUp{UptimeAlert: up}, with(checkMsg, func(m *provider.Message) {
			m.EventType, m.State, m.Until = event.TypeUptimeUp, provider.Up, &ended
		})},
		{"uptime.degraded", event.UptimeDegraded{RegionalAlert: regional}, provider.Message{EventID: id.String(),
			EventType: event.TypeUptimeDegraded, State: provider.Open, Kind: "check", Name: "api (regional degradation)", Target: url,
			Regions: []string{"cloud:eu-west-2", "cloud:us-east-1"}, Summary: "UP, but failing in cloud:eu-west-2, cloud:us-east-1",
			Link: base + "/v1/checks/" + chk.String() + "/regions", Priority: "HIGH", DedupKey: "vantage/check/" + chk.String() + "/degraded", At: at}},
		{"uptime.restored", event.UptimeRestored{RegionalAlert: event.RegionalAlert{UptimeAlert: regional.UptimeAlert}}, provider.Message{
			EventID: id.String(), EventType: event.TypeUptimeRestored, State: provider.Resolved, Kind: "check", Name: "api (regional degradation)",
			Target: url, Summary: "passing in every region again", Link: base + "/v1/checks/" + chk.String() + "/regions", Priority: "HIGH",
			DedupKey: "vantage/check/" + chk.String() + "/degraded", At: at}},
		{"heartbeat.down", event.HeartbeatDown{HeartbeatAlert: hb("DOWN", `"last_seen":"2026-03-04T04:00:00.000Z","report_period":3600,`)},
			provider.Message{EventID: id.String(), EventType: event.TypeHeartbeatDown, State: provider.Down, Kind: "heartbeat",
				Name: "nightly backup", Summary: "last ping 2026-03-04T04:00:00.000Z; expected every 3600s with 300s of grace",
				Link: base + "/v1/heartbeats/" + hbID.String(), Priority: "HIGH", DedupKey: "vantage/heartbeat/" + hbID.String(), At: at}},
		{"heartbeat.up", event.HeartbeatUp{HeartbeatAlert: hb("UP", `"last_seen":null,"report_period":null,"report_period_cron":"0 3 * * *",`)},
			provider.Message{EventID: id.String(), EventType: event.TypeHeartbeatUp, State: provider.Up, Kind: "heartbeat",
				Name: "nightly backup", Summary: "last ping never; expected on 0 3 * * * with 300s of grace",
				Link: base + "/v1/heartbeats/" + hbID.String(), Priority: "HIGH", DedupKey: "vantage/heartbeat/" + hbID.String(), At: at}},
		{"status_page.incident.started", event.IncidentStarted{IncidentChange: change}, provider.Message{EventID: id.String(),
			EventType: event.TypeIncidentStarted, State: provider.Open, Kind: "status page incident", Name: "Elevated errors (Acme)",
			Since: incStarted, Summary: "PARTIAL_OUTAGE — INVESTIGATING: Looking into it.",
			Link: base + "/v1/status_pages/" + page.String() + "/incidents/e001", Priority: "HIGH",
			DedupKey: "vantage/status_page_incident/e001", At: at}},
		{"status_page.incident.resolved", event.IncidentResolved{IncidentChange: change}, provider.Message{EventID: id.String(),
			EventType: event.TypeIncidentResolved, State: provider.Resolved, Kind: "status page incident", Name: "Elevated errors (Acme)",
			Since: incStarted, Summary: "PARTIAL_OUTAGE — INVESTIGATING: Looking into it.",
			Link: base + "/v1/status_pages/" + page.String() + "/incidents/e001", Priority: "HIGH",
			DedupKey: "vantage/status_page_incident/e001", At: at}},
		{"a type without a case", region, provider.Message{EventID: id.String(), EventType: event.TypeRegionUnserved,
			State: provider.Notice, Kind: "event", Name: event.TypeRegionUnserved, Link: base, Priority: "HIGH",
			DedupKey: "vantage/event/" + id.String(), At: at}},
		{"a type without a case that says itself", describedRegion{region}, provider.Message{EventID: id.String(),
			EventType: event.TypeRegionUnserved, State: provider.Notice, Kind: "event", Name: "No agent serves cloud:eu-west-2",
			Summary: "3 checks run from it", Link: base, Priority: "HIGH", DedupKey: "vantage/event/" + id.String(), At: at}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := newAlert(id, tc.ev, time.Time{}, "HIGH")
			if err != nil {
				t.Fatal(err)
			}
			if got := a.message(base); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("message\n got %+v\nwant %+v", got, tc.want)
			}
			if h := tc.want.Headline(); h == "" || strings.HasPrefix(h, " ") {
				t.Fatalf("headline %q", h)
			}
		})
	}
}

// TestAlertRecipientsAndEnvelope: routing reads the alert lists of the check (its stored
// lists) and of the heartbeat (its "alerts"), and the document's envelope says the event.
func TestAlertRecipientsAndEnvelope(t *testing.T) {
	t.Parallel()
	id, hbID := uuid.New(), uuid.New()
	queued := time.Date(2026, 3, 4, 5, 0, 0, 123456789, time.UTC)
	up := event.UptimeReminder{UptimeAlert: event.UptimeAlert{Check: event.Check{ID: uuid.New(),
		Alerts: json.RawMessage(`{"webhook_alerts":["w1","w2"],"user_alerts":["u1"],"oncall_alerts":["p1"]}`)}}}
	a, err := newAlert(id, up, queued, "LOW")
	if err != nil {
		t.Fatal(err)
	}
	want := &check.Alerts{Webhook: []string{"w1", "w2"}, User: []string{"u1"}, Oncall: []string{"p1"}}
	if !reflect.DeepEqual(a.Alerts, want) {
		t.Fatalf("check alert lists %+v, want %+v", a.Alerts, want)
	}
	doc := a.document()
	if doc.ID != id.String() || doc.Type != event.TypeUptimeDown || !doc.Reminder || doc.AlertPriority != "LOW" ||
		doc.OccurredAt != "2026-03-04T05:00:00.123Z" { // an event without a time of its own: when it was queued
		t.Fatalf("envelope %+v", doc)
	}
	hb := event.HeartbeatDown{HeartbeatAlert: event.HeartbeatAlert{OccurredAt: queued,
		Heartbeat: json.RawMessage(`{"id":"` + hbID.String() + `","name":"x","alerts":{"webhook_alerts":["w3"],"slack_alerts":["s1"]}}`)}}
	if a, err = newAlert(id, hb, time.Time{}, "LOW"); err != nil {
		t.Fatal(err)
	}
	if a.Heartbeat.ID != hbID || !reflect.DeepEqual(a.Alerts, &check.Alerts{Webhook: []string{"w3"}, Slack: []string{"s1"}}) {
		t.Fatalf("heartbeat %+v, alert lists %+v", a.Heartbeat, a.Alerts)
	}
}

// TestAlertOfUndecodableEventIsAnError: alert lists, a heartbeat or an incident that do not
// decode make no alert (the fan-out or attempt fails, counted), where reading them leniently
// routed the event to nobody or sent it without its details.
func TestAlertOfUndecodableEventIsAnError(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	uptime := func(alerts string) event.Event {
		return event.UptimeDown{UptimeAlert: event.UptimeAlert{Check: event.Check{ID: uuid.New(), Alerts: json.RawMessage(alerts)}}}
	}
	heartbeat := func(doc string) event.Event {
		return event.HeartbeatDown{HeartbeatAlert: event.HeartbeatAlert{Heartbeat: json.RawMessage(doc)}}
	}
	incident := func(doc string) event.Event {
		return event.IncidentStarted{IncidentChange: event.IncidentChange{Incident: json.RawMessage(doc)}}
	}
	hbID := uuid.NewString()
	for _, tc := range []struct {
		name string
		ev   event.Event
		want string
	}{
		{"a list that is not a list", uptime(`{"webhook_alerts":"w1"}`), "the alert lists of check"},
		{"lists that are not JSON", uptime(`{"webhook_alerts":[`), "the alert lists of check"},
		{"a heartbeat id that is not a UUID", heartbeat(`{"id":"hb-1","name":"x"}`), "the heartbeat"},
		{"a heartbeat without id", heartbeat(`{"name":"x"}`), "the heartbeat has no id"},
		{"a heartbeat grace period that is text", heartbeat(`{"id":"` + hbID + `","grace_period":"300"}`), "the heartbeat"},
		{"heartbeat alert lists that are not lists", heartbeat(`{"id":"` + hbID + `","alerts":{"oncall_alerts":"p1"}}`), "the heartbeat"},
		{"an incident title that is a number", incident(`{"id":"e1","title":1}`), "the incident"},
		{"incident updates that are not a list", incident(`{"id":"e1","updates":{}}`), "the incident"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newAlert(id, tc.ev, time.Now(), "HIGH")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), id.String()) ||
				!strings.Contains(err.Error(), tc.ev.Type()) {
				t.Fatalf("error %v, want one naming the event and %q", err, tc.want)
			}
		})
	}
}

// TestCheckTarget: what a check probes, by kind, as the message's Target says it.
func TestCheckTarget(t *testing.T) {
	t.Parallel()
	url := "https://api.example.com/"
	for _, tc := range []struct {
		name string
		spec check.Spec
		want string
	}{
		{"uptime", check.Spec{HTTP: &check.HTTPSpec{URL: &url}}, url},
		{"script-only browser", check.Spec{HTTP: &check.HTTPSpec{}}, ""},
		{"WebSocket", check.Spec{WebSocket: &check.WebSocketSpec{URL: "wss://ws.example.com/feed"}}, "wss://ws.example.com/feed"},
		{"DNS", check.Spec{DNS: &check.DNSSpec{Domain: "example.com"}}, "example.com"},
		{"TCP", check.Spec{TCP: &check.TCPSpec{Hostname: "db.example.com", Port: 5432}}, "db.example.com:5432"},
		{"TCP on IPv6", check.Spec{TCP: &check.TCPSpec{Hostname: "2001:db8::1", Port: 443}}, "[2001:db8::1]:443"},
		{"ping", check.Spec{Ping: &check.PingSpec{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := checkTarget(tc.spec); got != tc.want {
				t.Fatalf("target %q, want %q", got, tc.want)
			}
		})
	}
}
