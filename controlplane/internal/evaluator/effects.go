package evaluator

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Outbox event types (api/openapi/webhooks.yaml). A reminder is an uptime.down with "reminder": true.
const (
	EventUptimeDown = event.TypeUptimeDown
	EventUptimeUp   = event.TypeUptimeUp
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
	regional    Regional // regional degradation (regional.go)
	slow        Regional // slowness (slow.go)
	// downDeps are the check's dependencies DOWN at the last failing verdict (dependencies.go).
	downDeps []uuid.UUID
}

func (ce *checkEval) apply(ctx context.Context, r *pendingRun) error {
	v := verdictOf(ce.c, &r.Run)
	if v.Passing {
		ce.out.passing++
	} else {
		ce.out.failing++
	}
	policy := policyOf(ce.c)
	policy.Muted = policy.Muted || ce.maintenance
	if err := ce.dependencies(ctx, v, &policy); err != nil {
		return err
	}
	next, effects := Step(ce.state, v, ce.now, policy)
	ce.state, ce.lastRun = next, r.ScheduledAt
	for _, fx := range effects {
		if err := ce.effect(ctx, fx); err != nil {
			return err
		}
	}
	if err := ce.stepRegional(ctx, r, policy); err != nil {
		return err
	}
	return ce.stepSlow(ctx, r, policy)
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
		if len(ce.downDeps) > 0 {
			if err := ce.tx.SetIncidentCause(ctx, c.OrgID, inc.ID, ce.downDeps[0]); err != nil {
				return err
			}
		}
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

func (ce *checkEval) alert(ctx context.Context, name string, reminder bool, at time.Time) error {
	a, incidentID, err := ce.uptimeAlert(ctx, at)
	if err != nil {
		return err
	}
	var ev event.Event = event.UptimeDown{UptimeAlert: a}
	switch {
	case name == EventUptimeUp:
		ev = event.UptimeUp{UptimeAlert: a}
	case reminder:
		ev = event.UptimeReminder{UptimeAlert: a}
	}
	ce.queue(ev, incidentID, at)
	return nil
}

// uptimeAlert is what an uptime event at at says of the check and its open or just-closed
// incident.
func (ce *checkEval) uptimeAlert(ctx context.Context, at time.Time) (event.UptimeAlert, *uuid.UUID, error) {
	c := ce.c
	if ce.known == nil {
		inc, ok, err := ce.tx.CurrentIncident(ctx, c.OrgID, c.ID)
		if err != nil {
			return event.UptimeAlert{}, nil, err
		}
		if ok {
			ce.known = &inc
		}
	}
	a := event.UptimeAlert{OccurredAt: at, Check: event.Check{ID: c.ID, OrgID: c.OrgID, Name: c.Name, Kind: c.Kind,
		URL: c.URL, State: string(ce.state.Status), AlertPriority: c.AlertPriority, Alerts: c.Alerts}}
	var incidentID *uuid.UUID
	if inc := ce.known; inc != nil {
		incidentID = &inc.ID
		a.Incident = &event.CheckIncident{ID: inc.ID, CheckID: inc.CheckID, StartedAt: inc.StartedAt, EndedAt: inc.EndedAt}
	}
	return a, incidentID, nil
}

// queue adds an event of the check to the outbox rows of the transaction.
func (ce *checkEval) queue(ev event.Event, incidentID *uuid.UUID, at time.Time) {
	c := ce.c
	checkID := c.ID
	ce.events = append(ce.events, store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: c.OrgID, Event: ev,
		CheckID: &checkID, IncidentID: incidentID, AlertPriority: c.AlertPriority, CreatedAt: at})
	if ce.out.alerts == nil {
		ce.out.alerts = map[string]int{}
	}
	ce.out.alerts[ev.Type()]++
}

// checkState is the check row to write back after the judged runs.
func (ce *checkEval) checkState() store.CheckState {
	s := ce.state
	return store.CheckState{OrgID: ce.c.OrgID, CheckID: ce.c.ID, State: string(s.Status), StateChangedAt: ptr(s.ChangedAt),
		FailingSince: ptr(s.FailingSince), PassingSince: ptr(s.PassingSince), LastAlertAt: ptr(s.LastAlertAt),
		DownAlerted: s.DownAlerted, CurrentIncidentID: ce.incident, LastRunAt: ptr(ce.lastRun)}
}
