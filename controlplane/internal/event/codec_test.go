package event

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var (
	t0     = time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	id1    = uuid.MustParse("0190a0b0-0000-7000-8000-000000000001")
	id2    = uuid.MustParse("0190a0b0-0000-7000-8000-000000000002")
	id3    = uuid.MustParse("0190a0b0-0000-7000-8000-000000000003")
	target = "https://example.com/health"
)

// everyEvent has one value of every event type, with every field set.
func everyEvent() []Event {
	ended := t0.Add(time.Hour)
	minutes := 90
	uptime := UptimeAlert{OccurredAt: t0, Check: Check{ID: id1, OrgID: id2, Name: "API", Kind: "uptime", URL: &target,
		State: "DOWN", AlertPriority: "HIGH", Alerts: json.RawMessage(`{"webhook_alerts":["x"]}`)},
		Incident: &CheckIncident{ID: id3, CheckID: id1, StartedAt: t0, EndedAt: &ended}}
	hb := HeartbeatAlert{OccurredAt: t0, Heartbeat: json.RawMessage(`{"id":"` + id1.String() + `","status":"DOWN"}`)}
	inc := IncidentChange{OccurredAt: t0, StatusPage: PageRef{ID: id1, Name: "Acme"}, Incident: json.RawMessage(`{"id":"i","title":"Down"}`)}
	page := MailPage{ID: id1, Name: "Acme", Subdomain: "acme"}
	return []Event{
		UptimeDown{uptime}, UptimeReminder{uptime}, UptimeUp{uptime},
		UptimeDegraded{RegionalAlert{UptimeAlert: uptime, FailingRegions: []string{"cloud:eu-west-2"}, Reason: DegradedRegional}},
		UptimeRestored{RegionalAlert{UptimeAlert: uptime, Reason: DegradedRegional}},
		UptimeDegraded{RegionalAlert{UptimeAlert: uptime, Reason: DegradedSlow, SlowRegions: []string{"cloud:us-east-1"}}},
		UptimeRestored{RegionalAlert{UptimeAlert: uptime, Reason: DegradedSlow}},
		AgentUnhealthy{RegionHealthChange{OccurredAt: t0, Region: "cloud:eu-west-2", UnhealthySince: t0, Reason: "lone failures", Checks: 3}},
		AgentHealthy{RegionHealthChange{OccurredAt: t0, Region: "cloud:eu-west-2", UnhealthySince: t0.Add(-time.Minute), Checks: 3}},
		HeartbeatDown{hb}, HeartbeatReminder{hb}, HeartbeatUp{hb},
		IncidentStarted{inc}, IncidentUpdated{inc}, IncidentResolved{inc},
		SubscriberConfirmation{OccurredAt: t0, StatusPage: page, SubscriberID: id2, Email: "a@example.com"},
		SubscriberNotification{OccurredAt: t0, Reason: ReasonMaintenanceStarted, StatusPage: page,
			Incident:   NoticeIncident{ID: id2, Title: "Upgrade", Impact: "MAINTENANCE", StartDate: &t0, DurationMinutes: &minutes},
			Update:     NoticeUpdate{ID: id3, Status: "IN_PROGRESS", Description: "Started.", DateHappened: t0},
			Components: []NoticeComponent{{ID: id1, Name: "API", Status: "MAINTENANCE"}}},
		InvitationCreated{OccurredAt: t0, InvitationID: id1, Email: "b@example.com", Role: "ADMIN", OrgID: id2,
			OrgName: "Acme", InvitedBy: "Alice"},
		RegionUnserved{RegionChange{OccurredAt: t0, Region: "cloud:eu-west-2", UnservedSince: t0.Add(-3 * time.Minute), Checks: 4}},
		RegionServed{RegionChange{OccurredAt: t0, Region: "cloud:eu-west-2", UnservedSince: t0.Add(-9 * time.Minute), Checks: 4}},
		CustomDomainReleased{CustomDomainChange{OccurredAt: t0, StatusPage: PageRef{ID: id1, Name: "Acme"}, Domain: "status.acme.test"}},
		CustomDomainUnverified{CustomDomainChange{OccurredAt: t0, StatusPage: PageRef{ID: id1, Name: "Acme"}, Domain: "status.acme.test"},
			t0.Add(-72 * time.Hour)},
		CertificateExpiring{CertificateAlert{OccurredAt: t0, Check: uptime.Check, Region: "cloud:eu-west-2", DaysLeft: 6,
			Certificate: Certificate{Subject: "CN=example.com", Issuer: "CN=Test CA", NotAfter: t0.Add(150 * time.Hour), SHA256: "ab12"}}, 7},
		CertificateExpired{CertificateAlert{OccurredAt: t0, Check: uptime.Check, Region: "cloud:us-east-1", DaysLeft: -2,
			Certificate: Certificate{Subject: "CN=example.com", Issuer: "CN=Test CA", NotAfter: t0.Add(-49 * time.Hour), SHA256: "cd34"}}},
	}
}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	for _, ev := range everyEvent() {
		t.Run(reflect.TypeOf(ev).Name(), func(t *testing.T) {
			enc, err := Encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			if enc.Type != ev.Type() || enc.Version != Version {
				t.Fatalf("encoded as %s v%d", enc.Type, enc.Version)
			}
			got, err := Decode(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Fatalf("round trip\n got %#v\nwant %#v", got, ev)
			}
			if !got.At().Equal(t0) {
				t.Fatalf("At = %s", got.At())
			}
		})
		seen[reflect.TypeOf(ev)] = true
	}
	if len(seen) != 22 {
		t.Fatalf("%d event types covered", len(seen))
	}
}

// TestEventDecodesVersion1Rows decodes payloads exactly as the producers wrote them before
// events were typed: rows queued before the upgrade must still go out.
func TestEventDecodesVersion1Rows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ, payload string
		want         Event
	}{
		{"uptime.down", `{"event": "uptime.down", "check": {"id": "0190a0b0-0000-7000-8000-000000000001", "url": null, "name": "API",
			"state": "DOWN", "org_id": "0190a0b0-0000-7000-8000-000000000002", "check_type": "uptime", "alert_priority": "LOW"},
			"incident": null, "reminder": true, "occurred_at": "2026-03-04T05:06:07.891Z"}`,
			UptimeReminder{UptimeAlert{OccurredAt: t0, Check: Check{ID: id1, OrgID: id2, Name: "API", Kind: "uptime", State: "DOWN", AlertPriority: "LOW"}}}},
		// A row queued before degradation had reasons was regional.
		{"uptime.degraded", `{"event": "uptime.degraded", "check": {"id": "0190a0b0-0000-7000-8000-000000000001", "url": null, "name": "API",
			"state": "UP", "org_id": "0190a0b0-0000-7000-8000-000000000002", "check_type": "uptime", "alert_priority": "LOW"},
			"incident": null, "reminder": false, "occurred_at": "2026-03-04T05:06:07.891Z", "failing_regions": ["cloud:eu-west-2"]}`,
			UptimeDegraded{RegionalAlert{UptimeAlert: UptimeAlert{OccurredAt: t0, Check: Check{ID: id1, OrgID: id2, Name: "API", Kind: "uptime", State: "UP", AlertPriority: "LOW"}},
				FailingRegions: []string{"cloud:eu-west-2"}, Reason: DegradedRegional}}},
		{"heartbeat.up", `{"event": "heartbeat.up", "reminder": false, "heartbeat": {"id": "h"}, "occurred_at": "2026-03-04T05:06:07.891Z"}`,
			HeartbeatUp{HeartbeatAlert{OccurredAt: t0, Heartbeat: json.RawMessage(`{"id": "h"}`)}}},
		{"status_page.incident.resolved", `{"event": "status_page.incident.resolved", "incident": {"id": "i"},
			"occurred_at": "2026-03-04T05:06:07.891Z", "status_page": {"id": "0190a0b0-0000-7000-8000-000000000001", "name": "Acme"}}`,
			IncidentResolved{IncidentChange{OccurredAt: t0, StatusPage: PageRef{ID: id1, Name: "Acme"}, Incident: json.RawMessage(`{"id": "i"}`)}}},
		{"subscriber.notification", `{"event": "subscriber.notification", "reason": "incident.created", "update": {"id": "0190a0b0-0000-7000-8000-000000000003",
			"status": "INVESTIGATING", "description": "Looking.", "date_happened": "2026-03-04T05:06:07.891Z"},
			"incident": {"id": "0190a0b0-0000-7000-8000-000000000002", "title": "Down", "impact": "MAJOR_OUTAGE"},
			"components": [], "occurred_at": "2026-03-04T05:06:07.891Z", "status_page": {"id": "0190a0b0-0000-7000-8000-000000000001",
			"name": "Acme", "subdomain": "acme"}, "component_ids": []}`,
			SubscriberNotification{OccurredAt: t0, Reason: ReasonIncidentCreated, StatusPage: MailPage{ID: id1, Name: "Acme", Subdomain: "acme"},
				Incident: NoticeIncident{ID: id2, Title: "Down", Impact: "MAJOR_OUTAGE"},
				Update:   NoticeUpdate{ID: id3, Status: "INVESTIGATING", Description: "Looking.", DateHappened: t0}, Components: []NoticeComponent{}}},
		{"invitation.created", `{"event": "invitation.created", "invitation": {"id": "0190a0b0-0000-7000-8000-000000000001", "role": "MEMBER",
			"email": "b@example.com"}, "invited_by": "", "occurred_at": "2026-03-04T05:06:07.891Z",
			"organization": {"id": "0190a0b0-0000-7000-8000-000000000002", "name": "Acme"}}`,
			InvitationCreated{OccurredAt: t0, InvitationID: id1, Email: "b@example.com", Role: "MEMBER", OrgID: id2, OrgName: "Acme"}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			got, err := Decode(Encoded{Type: tc.typ, Version: 1, Payload: []byte(tc.payload)})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decoded\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestEventDecodeRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		enc  Encoded
		want string
	}{
		{"unknown version", Encoded{Type: TypeUptimeUp, Version: 2, Payload: []byte(`{}`)}, "unknown payload version 2"},
		{"unknown type", Encoded{Type: "uptime.sideways", Version: 1, Payload: []byte(`{}`)}, "unknown event type"},
		{"not JSON", Encoded{Type: TypeUptimeUp, Version: 1, Payload: []byte(`{`)}, "decode uptime.up"},
		{"heartbeat without heartbeat", Encoded{Type: TypeHeartbeatDown, Version: 1, Payload: []byte(`{"event":"heartbeat.down"}`)}, "no heartbeat"},
		{"incident without incident", Encoded{Type: TypeIncidentUpdated, Version: 1, Payload: []byte(`{"incident":null}`)}, "no incident"},
		{"region event without region", Encoded{Type: TypeRegionUnserved, Version: 1, Payload: []byte(`{"checks":1}`)}, "no region"},
		{"custom domain event without domain", Encoded{Type: TypeCustomDomainReleased, Version: 1, Payload: []byte(`{"status_page":{"name":"x"}}`)}, "no custom domain"},
		{"unverified without missing_since", Encoded{Type: TypeCustomDomainUnverified, Version: 1, Payload: []byte(`{"custom_domain":"a.test"}`)}, "no missing_since"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.enc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEventUptimePayloadVersion1 pins the stored uptime payload: the format old notifiers read.
func TestEventUptimePayloadVersion1(t *testing.T) {
	t.Parallel()
	enc, err := Encode(UptimeUp{UptimeAlert{OccurredAt: t0, Check: Check{ID: id1, OrgID: id2, Name: "API", Kind: "uptime",
		State: "UP", AlertPriority: "LOW"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"uptime.up","reminder":false,"occurred_at":"2026-03-04T05:06:07.891Z","check":{"id":"` + id1.String() +
		`","org_id":"` + id2.String() + `","name":"API","check_type":"uptime","url":null,"state":"UP","alert_priority":"LOW"},"incident":null}`
	if string(enc.Payload) != want {
		t.Fatalf("payload\n got %s\nwant %s", enc.Payload, want)
	}
}
