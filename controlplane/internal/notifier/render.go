package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Document is the JSON every channel sends for one event (see the package documentation).
type Document struct {
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	OccurredAt    string         `json:"occurred_at"`
	AlertPriority string         `json:"alert_priority"`
	Reminder      bool           `json:"reminder"`
	Data          map[string]any `json:"data"`
}

// incidentSnapshot is the check incident in an uptime event's payload.
type incidentSnapshot struct {
	ID        uuid.UUID  `json:"id"`
	CheckID   uuid.UUID  `json:"check_id"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
}

// resourceRef is the part of a check, heartbeat or status page snapshot that routing reads.
type resourceRef struct {
	ID     uuid.UUID `json:"id"`
	Alerts *struct {
		User    []string `json:"user_alerts"`
		Webhook []string `json:"webhook_alerts"`
	} `json:"alerts"`
}

// checkSnapshot is the evaluator's check snapshot in the payload.
type checkSnapshot struct {
	ID            uuid.UUID       `json:"id"`
	Name          string          `json:"name"`
	Kind          string          `json:"check_type"`
	URL           *string         `json:"url"`
	State         string          `json:"state"`
	AlertPriority string          `json:"alert_priority"`
	Alerts        json.RawMessage `json:"alerts"`
}

func timeString(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// route renders an outbox event's document and names its destinations (stage 1). Producers
// write {event, reminder, occurred_at, <resource>, ...}; the members are read leniently so
// that one producer's extra or differently typed member never blocks its events.
func (n *Notifier) route(ctx context.Context, ev store.PendingEvent) (store.Fanout, error) {
	var f store.Fanout
	var p map[string]json.RawMessage
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return f, fmt.Errorf("decode payload: %w", err)
	}
	occurred := ev.CreatedAt
	var at time.Time
	if json.Unmarshal(p["occurred_at"], &at) == nil && !at.IsZero() {
		occurred = at
	}
	var reminder bool
	_ = json.Unmarshal(p["reminder"], &reminder)
	doc := Document{ID: ev.ID.String(), Type: ev.EventType, OccurredAt: timeString(occurred),
		AlertPriority: ev.AlertPriority, Reminder: reminder, Data: map[string]any{}}
	var ref resourceRef
	switch {
	case strings.HasPrefix(ev.EventType, "uptime."):
		var snap checkSnapshot
		if err := json.Unmarshal(p["check"], &snap); err != nil {
			return f, fmt.Errorf("decode check snapshot: %w", err)
		}
		_ = json.Unmarshal(p["check"], &ref)
		if ev.CheckID != nil {
			ref.ID, snap.ID = *ev.CheckID, *ev.CheckID
		}
		f.ResourceKind = "check"
		rendered, err := n.renderCheck(ctx, ev.OrgID, snap)
		if err != nil {
			return f, err
		}
		doc.Data["check"] = rendered
		doc.Data["incident"] = nil
		var inc *incidentSnapshot
		if json.Unmarshal(p["incident"], &inc) == nil && inc != nil {
			var ended *string
			if inc.EndedAt != nil {
				s := timeString(*inc.EndedAt)
				ended = &s
			}
			doc.Data["incident"] = map[string]any{"id": inc.ID.String(), "check_id": inc.CheckID.String(),
				"started_at": timeString(inc.StartedAt), "ended_at": ended}
		}
	default:
		for k, v := range p {
			if k != "event" && k != "reminder" && k != "occurred_at" {
				doc.Data[k] = v
			}
		}
		switch {
		case strings.HasPrefix(ev.EventType, "heartbeat."):
			f.ResourceKind = "heartbeat"
			_ = json.Unmarshal(p["heartbeat"], &ref)
		case strings.HasPrefix(ev.EventType, "status_page."):
			f.ResourceKind = "status_page"
			_ = json.Unmarshal(p["status_page"], &ref)
		}
	}
	f.ResourceID = ref.ID
	if isPeopleMail(ev.EventType) {
		m, err := mailFanout(ev, p)
		if err != nil {
			return f, err
		}
		f.Mail = m
	}
	if ref.Alerts != nil {
		f.WebhookIDs = parseIDs(ref.Alerts.Webhook)
		f.UserIDs = parseIDs(ref.Alerts.User)
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return f, fmt.Errorf("encode document: %w", err)
	}
	f.Body = body
	return f, nil
}

// renderCheck is the check as the API returns it, or the snapshot when the check is gone.
func (n *Notifier) renderCheck(ctx context.Context, orgID uuid.UUID, snap checkSnapshot) (any, error) {
	if n.opts.RenderCheck != nil {
		c, err := n.st.GetCheck(ctx, orgID, snap.ID, false)
		switch {
		case err == nil:
			return n.opts.RenderCheck(c), nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("read check %s: %w", snap.ID, err)
		}
	}
	out := map[string]any{}
	if len(snap.Alerts) > 0 {
		_ = json.Unmarshal(snap.Alerts, &out)
	}
	out["id"], out["name"], out["check_type"], out["url"] = snap.ID.String(), snap.Name, snap.Kind, snap.URL
	out["status"], out["alert_priority"] = snap.State, snap.AlertPriority
	return out, nil
}

// parseIDs keeps the ids that are UUIDs (ours); others cannot name a webhook or user.
func parseIDs(ss []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ss))
	for _, s := range ss {
		if id, err := uuid.Parse(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}
