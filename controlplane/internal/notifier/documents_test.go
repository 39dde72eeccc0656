package notifier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// The documents webhooks receive are pinned byte for byte: testdata/*.json are the bodies the
// notifier sent for legacyRows before events were typed (captured from that version).

// documentScenario is one event of every webhook-visible type, stored as the producers stored
// them before events were typed (version 1 rows). Every id and time is fixed, so the document
// each sends is fixed too.
var (
	docCheck     = uuid.MustParse("0190a0b0-0000-7000-8000-00000000c001")
	docHeartbeat = uuid.MustParse("0190a0b0-0000-7000-8000-00000000b001")
	docPage      = uuid.MustParse("0190a0b0-0000-7000-8000-00000000a001")
	docIncident  = uuid.MustParse("0190a0b0-0000-7000-8000-00000000d001")
	docAlerts    = `{"user_alerts":[],"slack_alerts":[],"discord_alerts":[],"webhook_alerts":[],"oncall_alerts":[],"incident_io_alerts":[],"microsoft_teams_alerts":[],"telegram_alerts":[],"pushover_alerts":[]}`
)

type legacyRow struct {
	name, eventType string
	id              uuid.UUID
	checkID         *uuid.UUID
	payload         string
}

func legacyRows() []legacyRow {
	ev := func(n int) uuid.UUID { return uuid.MustParse(fmt.Sprintf("0190a0b0-0000-7000-8000-%012d", n)) }
	check := `{"id":"` + docCheck.String() + `","org_id":"0190a0b0-0000-7000-8000-00000000f001","name":"API \"eu\" <main>","check_type":"uptime",` +
		`"url":"https://example.com/health?a=1&b=ä","state":"DOWN","alert_priority":"HIGH","alerts":` + docAlerts + `}`
	incident := `{"id":"` + docIncident.String() + `","check_id":"` + docCheck.String() + `","started_at":"2026-03-04T05:00:00.123456Z","ended_at":null}`
	closed := `{"id":"` + docIncident.String() + `","check_id":"` + docCheck.String() + `","started_at":"2026-03-04T05:00:00.123456Z","ended_at":"2026-03-04T06:00:00.5Z"}`
	hb := `{"id":"` + docHeartbeat.String() + `","name":"nightly backup","status":"DOWN","last_seen":"2026-03-04T04:00:00.000Z","report_period":3600,` +
		`"report_period_cron":null,"timezone":null,"grace_period":300,"reminder_alert_interval_minutes":1440,"alert_priority":"LOW",` +
		`"last_duration_ms":1234,"project_id":null,"created_at":"2026-03-01T00:00:00.000Z","updated_at":"2026-03-02T00:00:00.000Z",` +
		`"user_alerts":[],"slack_alerts":[],"discord_alerts":[],"webhook_alerts":[],"oncall_alerts":[],"incident_io_alerts":[],` +
		`"microsoft_teams_alerts":[],"telegram_alerts":[],"pushover_alerts":[],"alerts":` + docAlerts + `}`
	inc := `{"id":"0190a0b0-0000-7000-8000-00000000e001","title":"Elevated errors","impact":"PARTIAL_OUTAGE","started":"2026-03-04T05:06:07.891Z",` +
		`"created_at":"2026-03-04T05:06:07.891Z","updated_at":"2026-03-04T05:06:07.891Z","latest_update":{"id":"0190a0b0-0000-7000-8000-00000000e002",` +
		`"status":"INVESTIGATING","date_happened":"2026-03-04T05:06:07.891Z"},"components":[{"id":"0190a0b0-0000-7000-8000-00000000e003","name":"API"}],` +
		`"updates":[{"id":"0190a0b0-0000-7000-8000-00000000e002","incident_id":"0190a0b0-0000-7000-8000-00000000e001","status":"INVESTIGATING",` +
		`"description":"Looking into it.","date_happened":"2026-03-04T05:06:07.891Z","created_at":"2026-03-04T05:06:07.891Z",` +
		`"updated_at":"2026-03-04T05:06:07.891Z","components":[{"id":"0190a0b0-0000-7000-8000-00000000e003","name":"API","old_status":"OPERATIONAL","new_status":"PARTIAL_OUTAGE"}]}]}`
	page := `{"id":"` + docPage.String() + `","name":"Acme"}`
	return []legacyRow{
		{"uptime_down", "uptime.down", ev(1), &docCheck, `{"event":"uptime.down","reminder":false,"occurred_at":"2026-03-04T05:06:07.891234Z","check":` + check + `,"incident":` + incident + `}`},
		{"uptime_reminder", "uptime.down", ev(2), &docCheck, `{"event":"uptime.down","reminder":true,"occurred_at":"2026-03-04T05:36:07Z","check":` + check + `,"incident":` + incident + `}`},
		{"uptime_up", "uptime.up", ev(3), &docCheck, `{"event":"uptime.up","reminder":false,"occurred_at":"2026-03-04T06:00:00.5Z","check":` + strings.Replace(check, `"DOWN"`, `"UP"`, 1) + `,"incident":` + closed + `}`},
		{"uptime_down_no_incident", "uptime.down", ev(4), &docCheck, `{"event":"uptime.down","reminder":false,"occurred_at":"2026-03-04T05:06:07Z","check":` + check + `,"incident":null}`},
		{"heartbeat_down", "heartbeat.down", ev(5), &docHeartbeat, `{"event":"heartbeat.down","reminder":false,"occurred_at":"2026-03-04T05:06:07.891234Z","heartbeat":` + hb + `}`},
		{"heartbeat_reminder", "heartbeat.down", ev(6), &docHeartbeat, `{"event":"heartbeat.down","reminder":true,"occurred_at":"2026-03-04T05:06:07Z","heartbeat":` + hb + `}`},
		{"heartbeat_up", "heartbeat.up", ev(7), &docHeartbeat, `{"event":"heartbeat.up","reminder":false,"occurred_at":"2026-03-04T05:06:07Z","heartbeat":` + strings.Replace(hb, `"DOWN"`, `"UP"`, 1) + `}`},
		{"incident_started", "status_page.incident.started", ev(8), nil, `{"event":"status_page.incident.started","occurred_at":"2026-03-04T05:06:07.891Z","status_page":` + page + `,"incident":` + inc + `}`},
		{"incident_updated", "status_page.incident.updated", ev(9), nil, `{"event":"status_page.incident.updated","occurred_at":"2026-03-04T05:06:08.000Z","status_page":` + page + `,"incident":` + inc + `}`},
		{"incident_resolved", "status_page.incident.resolved", ev(10), nil, `{"event":"status_page.incident.resolved","occurred_at":"2026-03-04T05:06:09.000Z","status_page":` + page + `,"incident":` + inc + `}`},
	}
}

// deliverDocuments stores rows (insert, in the order given), runs a notifier and returns the
// body each event's webhook delivery carried, by event id.
func deliverDocuments(t *testing.T, e *env, insert func(ctx context.Context) []uuid.UUID) map[uuid.UUID][]byte {
	t.Helper()
	ctx := context.Background()
	if _, err := e.st.Pool().Exec(ctx, `INSERT INTO heartbeats (id, org_id, name, grace_period, report_period) VALUES ($1, $2, 'nightly', 300, 3600)`, docHeartbeat, e.org); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Pool().Exec(ctx, `INSERT INTO status_pages (id, org_id, name, subdomain) VALUES ($1, $2, 'Acme', 'acme')`, docPage, e.org); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Pool().Exec(ctx, `UPDATE checks SET id = $1 WHERE id = $2`, docCheck, e.check); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, nil)
	if _, err := e.st.CreateWebhook(ctx, store.SystemActor, e.org, store.NewWebhook{URL: rcv.URL, Secret: newSecret(),
		Events: []string{"uptime.down", "uptime.up", "heartbeat.down", "heartbeat.up", "status_page.incident.started",
			"status_page.incident.updated", "status_page.incident.resolved"},
		WebhookAssociations: store.WebhookAssociations{CheckIDs: []uuid.UUID{docCheck}, HeartbeatIDs: []uuid.UUID{docHeartbeat},
			StatusPageIDs: []uuid.UUID{docPage}}}); err != nil {
		t.Fatal(err)
	}
	ids := insert(ctx)
	e.run(notifier.Config{})
	testwait.Eventually(t, 5*time.Second, testwait.Holds("every document", func() bool { return len(rcv.requests()) >= len(ids) }))
	out := map[uuid.UUID][]byte{}
	for _, g := range rcv.requests() {
		out[uuid.MustParse(g.ID)] = g.Body
	}
	return out
}

// insertLegacy stores rows as version 1 outbox rows, the way their producers wrote them.
func insertLegacy(t *testing.T, e *env, rows []legacyRow) func(ctx context.Context) []uuid.UUID {
	return func(ctx context.Context) []uuid.UUID {
		var ids []uuid.UUID
		for _, r := range rows {
			var page *uuid.UUID
			if r.checkID == nil {
				page = &docPage
			}
			if _, err := e.st.Pool().Exec(ctx, `INSERT INTO outbox (id, org_id, event_type, check_id, status_page_id, alert_priority,
				payload, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'HIGH', $6, now(), now())`,
				r.id, e.org, r.eventType, r.checkID, page, r.payload); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.id)
		}
		return ids
	}
}

// typedEvents are legacyRows as their producers queue them now: the same events, typed.
func typedEvents(t *testing.T, org uuid.UUID) map[string]store.OutboxEvent {
	t.Helper()
	rows := map[string]legacyRow{}
	for _, r := range legacyRows() {
		rows[r.name] = r
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The resource documents their packages render (heartbeat.Record, statuspage.Incident).
	member := func(name, key string) json.RawMessage {
		var p map[string]json.RawMessage
		if err := json.Unmarshal([]byte(rows[name].payload), &p); err != nil {
			t.Fatal(err)
		}
		return p[key]
	}
	url := "https://example.com/health?a=1&b=ä"
	check := event.Check{ID: docCheck, OrgID: uuid.MustParse("0190a0b0-0000-7000-8000-00000000f001"), Name: `API "eu" <main>`,
		Kind: "uptime", URL: &url, State: "DOWN", AlertPriority: "HIGH", Alerts: json.RawMessage(docAlerts)}
	up := check
	up.State = "UP"
	ended := at("2026-03-04T06:00:00.5Z")
	open := &event.CheckIncident{ID: docIncident, CheckID: docCheck, StartedAt: at("2026-03-04T05:00:00.123456Z")}
	closed := &event.CheckIncident{ID: docIncident, CheckID: docCheck, StartedAt: open.StartedAt, EndedAt: &ended}
	hb := func(name, when string) event.HeartbeatAlert {
		return event.HeartbeatAlert{OccurredAt: at(when), Heartbeat: member(name, "heartbeat")}
	}
	inc := func(when string) event.IncidentChange {
		return event.IncidentChange{OccurredAt: at(when), StatusPage: event.PageRef{ID: docPage, Name: "Acme"},
			Incident: member("incident_started", "incident")}
	}
	evs := map[string]event.Event{
		"uptime_down":             event.UptimeDown{UptimeAlert: event.UptimeAlert{OccurredAt: at("2026-03-04T05:06:07.891234Z"), Check: check, Incident: open}},
		"uptime_reminder":         event.UptimeReminder{UptimeAlert: event.UptimeAlert{OccurredAt: at("2026-03-04T05:36:07Z"), Check: check, Incident: open}},
		"uptime_up":               event.UptimeUp{UptimeAlert: event.UptimeAlert{OccurredAt: ended, Check: up, Incident: closed}},
		"uptime_down_no_incident": event.UptimeDown{UptimeAlert: event.UptimeAlert{OccurredAt: at("2026-03-04T05:06:07Z"), Check: check}},
		"heartbeat_down":          event.HeartbeatDown{HeartbeatAlert: hb("heartbeat_down", "2026-03-04T05:06:07.891234Z")},
		"heartbeat_reminder":      event.HeartbeatReminder{HeartbeatAlert: hb("heartbeat_reminder", "2026-03-04T05:06:07Z")},
		"heartbeat_up":            event.HeartbeatUp{HeartbeatAlert: hb("heartbeat_up", "2026-03-04T05:06:07Z")},
		"incident_started":        event.IncidentStarted{IncidentChange: inc("2026-03-04T05:06:07.891Z")},
		"incident_updated":        event.IncidentUpdated{IncidentChange: inc("2026-03-04T05:06:08.000Z")},
		"incident_resolved":       event.IncidentResolved{IncidentChange: inc("2026-03-04T05:06:09.000Z")},
	}
	out := map[string]store.OutboxEvent{}
	for name, ev := range evs {
		r := rows[name]
		o := store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: org, Event: ev, CheckID: r.checkID, AlertPriority: "HIGH", CreatedAt: time.Now()}
		if r.checkID == nil {
			o.StatusPageID = &docPage
		}
		out[name] = o
	}
	return out
}

func TestNotifierDocumentsUnchanged(t *testing.T) {
	t.Parallel()
	golden := func(t *testing.T, name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("version 1 rows", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		rows := legacyRows()
		bodies := deliverDocuments(t, e, insertLegacy(t, e, rows))
		for _, r := range rows {
			if want := golden(t, r.name); !bytes.Equal(bodies[r.id], want) {
				t.Errorf("%s:\n got %s\nwant %s", r.name, bodies[r.id], want)
			}
		}
	})
	t.Run("typed events", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		events := typedEvents(t, e.org)
		bodies := deliverDocuments(t, e, func(ctx context.Context) []uuid.UUID {
			var ids []uuid.UUID
			err := e.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
				for _, o := range events {
					ids = append(ids, o.ID)
					if err := tx.QueueEvents(ctx, o); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return ids
		})
		for _, r := range legacyRows() {
			id := events[r.name].ID
			want := bytes.Replace(golden(t, r.name), []byte(r.id.String()), []byte(id.String()), 1)
			if !bytes.Equal(bodies[id], want) {
				t.Errorf("%s:\n got %s\nwant %s", r.name, bodies[id], want)
			}
		}
	})
}
