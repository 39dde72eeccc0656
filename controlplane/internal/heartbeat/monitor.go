package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// Outbox event types (api/openapi/webhooks.yaml). A reminder is a heartbeat.down with "reminder": true.
const (
	EventDown = event.TypeHeartbeatDown
	EventUp   = event.TypeHeartbeatUp
)

// Sweeper is what the monitor needs from the store.
type Sweeper interface {
	SweepHeartbeats(ctx context.Context, afterID uuid.UUID, limit int, now time.Time,
		fn func(ctx context.Context, tx *store.HeartbeatTx, hbs []store.Heartbeat) error) (uuid.UUID, int, error)
}

var _ Sweeper = (*store.Store)(nil)

// MonitorConfig tunes the monitor. Zero values take the documented defaults.
type MonitorConfig struct {
	// Interval is the time between sweeps. Default 5s: a missed deadline or a ping after DOWN
	// is acted on within it.
	Interval time.Duration
	// BatchSize is how many heartbeats one transaction judges. Default 500.
	BatchSize int
}

// MonitorDeps are the monitor's collaborators.
type MonitorDeps struct {
	Store Sweeper // required
	// Logger receives the monitor's log (component heartbeat_monitor). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Monitor drives the heartbeat status machine. Every replica may run one: a sweep locks the
// rows it judges with SKIP LOCKED, so concurrent sweeps split the work instead of doubling it.
type Monitor struct {
	cfg MonitorConfig
	st  Sweeper
	log *slog.Logger
	now func() time.Time
}

// NewMonitor returns a monitor; it sweeps when Run (or Sweep) is called.
func NewMonitor(cfg MonitorConfig, deps MonitorDeps) (*Monitor, error) {
	if deps.Store == nil {
		return nil, errors.New("heartbeat monitor: a store is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Monitor{cfg: cfg, st: deps.Store, log: deps.Logger.With("component", "heartbeat_monitor"), now: deps.Now}, nil
}

// Run sweeps every Interval until ctx ends; a failed sweep is logged and retried on the next.
func (m *Monitor) Run(ctx context.Context) error {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := m.Sweep(ctx); err != nil && ctx.Err() == nil {
			m.log.ErrorContext(ctx, "heartbeat sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SweepStats is what one sweep did.
type SweepStats struct {
	Judged    int
	Down, Up  int // transitions
	Alerts    int // outbox rows written (down, up and reminders)
	Reminders int
}

// Sweep judges every monitored heartbeat once at the monitor's clock.
func (m *Monitor) Sweep(ctx context.Context) (SweepStats, error) {
	var stats SweepStats
	now := m.now()
	after := uuid.Nil
	for {
		last, n, err := m.st.SweepHeartbeats(ctx, after, m.cfg.BatchSize, now,
			func(ctx context.Context, tx *store.HeartbeatTx, hbs []store.Heartbeat) error {
				return m.judgeBatch(ctx, tx, hbs, now, &stats)
			})
		if err != nil {
			return stats, fmt.Errorf("sweep heartbeats: %w", err)
		}
		if n < m.cfg.BatchSize {
			return stats, nil
		}
		after = last
	}
}

func (m *Monitor) judgeBatch(ctx context.Context, tx *store.HeartbeatTx, hbs []store.Heartbeat, now time.Time, stats *SweepStats) error {
	var events []store.OutboxEvent
	for _, h := range hbs {
		stats.Judged++
		sched, err := ScheduleOf(h)
		if err != nil {
			m.log.WarnContext(ctx, "heartbeat has no valid schedule", "heartbeat_id", h.ID.String(), "org_id", h.OrgID.String(), "err", err)
			continue
		}
		next, fx := Step(h, Judge(h, sched, now), now)
		if next.State == h.State && next.DownAlerted == h.DownAlerted && equalTime(next.LastAlertAt, h.LastAlertAt) {
			continue
		}
		if err := tx.SaveState(ctx, h.OrgID, next); err != nil {
			return err
		}
		switch {
		case next.State == "DOWN" && h.State != "DOWN":
			stats.Down++
		case next.State == "UP" && h.State == "DOWN":
			stats.Up++
		}
		if next.State != h.State {
			m.log.InfoContext(ctx, "heartbeat state changed", "heartbeat_id", h.ID.String(), "org_id", h.OrgID.String(),
				"from", h.State, "to", next.State, "alerts", len(fx))
		}
		after := h
		after.State, after.StateChangedAt, after.DownAlerted, after.LastAlertAt = next.State, next.StateChangedAt, next.DownAlerted, next.LastAlertAt
		for _, f := range fx {
			ev, err := outboxEvent(after, f, now)
			if err != nil {
				return err
			}
			events = append(events, ev)
			stats.Alerts++
			if f.Reminder {
				stats.Reminders++
			}
		}
	}
	return tx.InsertOutbox(ctx, events)
}

// Resume starts a heartbeat that leaves its pause over as PENDING, forgetting the pings from
// before the pause (last_seen stays), so that it is not DOWN the moment it resumes and alerts
// afresh.
func Resume(h *store.Heartbeat, now time.Time) {
	if h.State != "PENDING" {
		h.State, h.StateChangedAt = "PENDING", &now
	}
	h.LastSuccessAt, h.RunStartedAt, h.FailedAt = nil, nil, nil
	h.DownAlerted, h.LastAlertAt = false, nil
}

// Alert is one alert a step emits.
type Alert struct {
	Event    string // EventDown or EventUp
	Reminder bool
}

// Step is the heartbeat status machine, pure: given the stored heartbeat and its health at
// now, it returns the state to store and the alerts to send.
//
//	PENDING|UP  Healthy            → UP (PENDING → UP alerts nobody)
//	PENDING|UP  Failing            → DOWN, heartbeat.down
//	DOWN        Healthy            → UP, heartbeat.up (only if heartbeat.down went out)
//	DOWN        Failing            → DOWN; the held-back heartbeat.down if it did not go out,
//	                                 else a reminder every reminder_alert_interval_minutes
//	any         Unknown            → unchanged
//
// Muted heartbeats and heartbeats inside an active maintenance window alert nobody; their
// state is still tracked, and a heartbeat still DOWN after the mute or window ends sends the
// held-back heartbeat.down on the next sweep. A reminder interval of -1, 0 or null means never.
func Step(h store.Heartbeat, health Health, now time.Time) (store.HeartbeatState, []Alert) {
	st := store.HeartbeatState{ID: h.ID, State: h.State, StateChangedAt: h.StateChangedAt, DownAlerted: h.DownAlerted, LastAlertAt: h.LastAlertAt}
	silent := h.Muted || h.InMaintenance
	to := func(s string) {
		if st.State != s {
			st.State = s
			t := now
			st.StateChangedAt = &t
		}
	}
	alertDown := func(reminder bool) []Alert {
		if silent {
			return nil
		}
		t := now
		st.DownAlerted, st.LastAlertAt = true, &t
		return []Alert{{Event: EventDown, Reminder: reminder}}
	}
	switch health {
	case Healthy:
		if h.State == "DOWN" {
			to("UP")
			alerted := st.DownAlerted
			st.DownAlerted, st.LastAlertAt = false, nil
			if alerted && !silent {
				return st, []Alert{{Event: EventUp}}
			}
			return st, nil
		}
		to("UP")
		return st, nil
	case Failing:
		if h.State != "DOWN" {
			to("DOWN")
			st.DownAlerted, st.LastAlertAt = false, nil
			return st, alertDown(false)
		}
		if !st.DownAlerted {
			return st, alertDown(false)
		}
		if r := h.ReminderAlertIntervalMinutes; r != nil && *r > 0 && st.LastAlertAt != nil &&
			!now.Before(st.LastAlertAt.Add(time.Duration(*r)*time.Minute)) {
			return st, alertDown(true)
		}
	}
	return st, nil
}

// snapshot is a heartbeat as alerts carry it: Record plus the nine alert lists again under
// "alerts", the shape the notifier routes on for every resource kind
// (<resource>.alerts.webhook_alerts).
type snapshot struct {
	Record
	Alerts check.Alerts `json:"alerts"`
}

func outboxEvent(h store.Heartbeat, a Alert, now time.Time) (store.OutboxEvent, error) {
	alerts := h.Alerts
	alerts.Normalize()
	doc, err := json.Marshal(snapshot{Record: Render(h), Alerts: alerts})
	if err != nil {
		return store.OutboxEvent{}, fmt.Errorf("encode %s alert of heartbeat %s: %w", a.Event, h.ID, err)
	}
	alert := event.HeartbeatAlert{OccurredAt: now, Heartbeat: doc}
	var ev event.Event = event.HeartbeatDown{HeartbeatAlert: alert}
	switch {
	case a.Event == EventUp:
		ev = event.HeartbeatUp{HeartbeatAlert: alert}
	case a.Reminder:
		ev = event.HeartbeatReminder{HeartbeatAlert: alert}
	}
	id := h.ID
	return store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: h.OrgID, Event: ev, CheckID: &id,
		AlertPriority: h.AlertPriority, CreatedAt: now}, nil
}

func equalTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
