package evaluator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Outbox event types (api.md "Events"). A reminder is an uptime.down with "reminder": true.
const (
	EventUptimeDown = "uptime.down"
	EventUptimeUp   = "uptime.up"
)

// checkEval steps one check's machine through the runs judged in this transaction and carries
// out the effects.
type checkEval struct {
	c        *store.PipelineCheck
	tx       Tx
	now      time.Time
	state    State
	lastRun  time.Time
	incident *uuid.UUID      // the open incident
	known    *store.Incident // the open or just-closed incident, once read or written
	events   []store.OutboxEvent
	out      *outcome
	// maintenance: the check is inside an active maintenance window (alerts are held back).
	maintenance bool
}

func (ce *checkEval) apply(ctx context.Context, r *pendingRun) error {
	v := verdictOf(&r.Run)
	if v.Passing {
		ce.out.passing++
	} else {
		ce.out.failing++
	}
	policy := policyOf(ce.c)
	policy.Muted = policy.Muted || ce.maintenance
	next, effects := Step(ce.state, v, ce.now, policy)
	ce.state, ce.lastRun = next, r.ScheduledAt
	for _, fx := range effects {
		if err := ce.effect(ctx, fx); err != nil {
			return err
		}
	}
	return nil
}

func (ce *checkEval) effect(ctx context.Context, fx Effect) error {
	c := ce.c
	switch fx.Kind {
	case EffectConfirm:
		// Delivered by OnStateChange after commit: the check is now VERIFYING.
	case EffectOpenIncident:
		inc, err := ce.tx.OpenIncident(ctx, c.OrgID, c.ID, fx.At)
		if err != nil {
			return err
		}
		ce.incident, ce.known = &inc.ID, &inc
	case EffectCloseIncident:
		inc, ok, err := ce.tx.CloseIncident(ctx, c.OrgID, c.ID, fx.At)
		if err != nil {
			return err
		}
		ce.incident, ce.known = nil, nil
		if ok {
			ce.known = &inc
		}
	case EffectAlertDown:
		return ce.alert(ctx, EventUptimeDown, false, fx.At)
	case EffectAlertReminder:
		return ce.alert(ctx, EventUptimeDown, true, fx.At)
	case EffectAlertUp:
		return ce.alert(ctx, EventUptimeUp, false, fx.At)
	}
	return nil
}

// alertPayload is the outbox payload: enough for the notifier to render and route the alert
// without reading the check again (it may be deleted by then).
type alertPayload struct {
	Event      string           `json:"event"`
	Reminder   bool             `json:"reminder"`
	OccurredAt time.Time        `json:"occurred_at"`
	Check      checkPayload     `json:"check"`
	Incident   *incidentPayload `json:"incident"`
}

type checkPayload struct {
	ID            uuid.UUID       `json:"id"`
	OrgID         uuid.UUID       `json:"org_id"`
	Name          string          `json:"name"`
	Kind          string          `json:"check_type"`
	URL           *string         `json:"url"`
	State         Status          `json:"state"`
	AlertPriority string          `json:"alert_priority"`
	Alerts        json.RawMessage `json:"alerts,omitempty"`
}

type incidentPayload struct {
	ID        uuid.UUID  `json:"id"`
	CheckID   uuid.UUID  `json:"check_id"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
}

func (ce *checkEval) alert(ctx context.Context, event string, reminder bool, at time.Time) error {
	c := ce.c
	if ce.known == nil {
		inc, ok, err := ce.tx.CurrentIncident(ctx, c.OrgID, c.ID)
		if err != nil {
			return err
		}
		if ok {
			ce.known = &inc
		}
	}
	p := alertPayload{Event: event, Reminder: reminder, OccurredAt: at.UTC(), Check: checkPayload{
		ID: c.ID, OrgID: c.OrgID, Name: c.Name, Kind: c.Kind, URL: c.URL, State: ce.state.Status,
		AlertPriority: c.AlertPriority, Alerts: json.RawMessage(c.Alerts)}}
	if len(c.Alerts) == 0 {
		p.Check.Alerts = nil
	}
	var incidentID *uuid.UUID
	if inc := ce.known; inc != nil {
		incidentID = &inc.ID
		p.Incident = &incidentPayload{ID: inc.ID, CheckID: inc.CheckID, StartedAt: inc.StartedAt.UTC(), EndedAt: inc.EndedAt}
	}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode %s alert of check %s: %w", event, c.ID, err)
	}
	ce.events = append(ce.events, store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: c.OrgID, EventType: event,
		CheckID: c.ID, IncidentID: incidentID, AlertPriority: c.AlertPriority, Payload: body, CreatedAt: at})
	if ce.out.alerts == nil {
		ce.out.alerts = map[string]int{}
	}
	ce.out.alerts[event]++
	return nil
}

// checkState is the check row to write back after the judged runs.
func (ce *checkEval) checkState() store.CheckState {
	s := ce.state
	return store.CheckState{OrgID: ce.c.OrgID, CheckID: ce.c.ID, State: string(s.Status), StateChangedAt: ptr(s.ChangedAt),
		FailingSince: ptr(s.FailingSince), PassingSince: ptr(s.PassingSince), LastAlertAt: ptr(s.LastAlertAt),
		DownAlerted: s.DownAlerted, CurrentIncidentID: ce.incident, LastRunAt: ptr(ce.lastRun)}
}
