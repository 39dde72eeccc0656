package heartbeat

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// clock is a settable clock shared by the store, the monitor and the ping handler.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

type fixture struct {
	t   *testing.T
	ctx context.Context
	st  *store.Store
	clk *clock
	org uuid.UUID
	mon *Monitor
}

var t0 = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC) // a Monday

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := &clock{t: t0}
	st := storetest.New(t, store.WithClock(clk.Now))
	ctx := context.Background()
	org, err := st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	mon, err := NewMonitor(MonitorConfig{BatchSize: 2}, MonitorDeps{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, st: st, clk: clk, org: org.ID, mon: mon}
}

func intp(v int) *int       { return &v }
func strp(s string) *string { return &s }

func (f *fixture) create(h store.Heartbeat) store.Heartbeat {
	f.t.Helper()
	if h.Name == "" {
		h.Name = "nightly backup"
	}
	if h.AlertPriority == "" {
		h.AlertPriority = "LOW"
	}
	if h.ReminderAlertIntervalMinutes == nil {
		h.ReminderAlertIntervalMinutes = intp(-1)
	}
	out, err := f.st.CreateHeartbeat(f.ctx, store.SystemActor, f.org, h)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) ping(id uuid.UUID, kind store.PingKind) {
	f.t.Helper()
	if _, err := f.st.RecordPing(f.ctx, id, kind, f.clk.Now()); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sweepAt(at time.Time) SweepStats {
	f.t.Helper()
	f.clk.Set(at)
	s, err := f.mon.Sweep(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fixture) get(id uuid.UUID) store.Heartbeat {
	f.t.Helper()
	h, err := f.st.GetHeartbeat(f.ctx, f.org, id, f.clk.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func (f *fixture) expectState(id uuid.UUID, want string) {
	f.t.Helper()
	if got := f.get(id).State; got != want {
		f.t.Fatalf("at %s: state %s, want %s", f.clk.Now().Format(time.RFC3339), got, want)
	}
}

type outboxRow struct {
	Event   string
	Payload map[string]any
}

func (f *fixture) outbox(id uuid.UUID) []outboxRow {
	f.t.Helper()
	rows, err := f.st.Pool().Query(f.ctx, `SELECT event_type, payload FROM outbox WHERE check_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var p []byte
		if err := rows.Scan(&r.Event, &p); err != nil {
			f.t.Fatal(err)
		}
		if err := json.Unmarshal(p, &r.Payload); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func (f *fixture) expectEvents(id uuid.UUID, want ...string) []outboxRow {
	f.t.Helper()
	got := f.outbox(id)
	var names []string
	for _, r := range got {
		name := r.Event
		if r.Payload["reminder"] == true {
			name += "(reminder)"
		}
		names = append(names, name)
	}
	if len(names) != len(want) {
		f.t.Fatalf("at %s: outbox %v, want %v", f.clk.Now().Format(time.RFC3339), names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			f.t.Fatalf("at %s: outbox %v, want %v", f.clk.Now().Format(time.RFC3339), names, want)
		}
	}
	return got
}

func TestHeartbeatPeriodLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 30})
	other := f.create(store.Heartbeat{Name: "never pinged", ReportPeriod: intp(60), GracePeriod: 30})

	f.sweepAt(t0.Add(time.Hour))
	f.expectState(other.ID, "PENDING") // never pinged: not DOWN
	f.expectState(h.ID, "PENDING")

	start := t0.Add(time.Hour)
	f.ping(h.ID, store.PingSuccess)
	f.expectState(h.ID, "UP") // the ping itself makes a PENDING heartbeat UP
	if got := f.get(h.ID).LastSeen; got == nil || !got.Equal(start) {
		t.Fatalf("last_seen %v, want %v", got, start)
	}
	f.sweepAt(start.Add(89 * time.Second))
	f.expectState(h.ID, "UP")
	f.expectEvents(h.ID)

	f.sweepAt(start.Add(90 * time.Second)) // period + grace
	f.expectState(h.ID, "DOWN")
	down := f.expectEvents(h.ID, EventDown)
	hb, _ := down[0].Payload["heartbeat"].(map[string]any)
	if hb["id"] != h.ID.String() || hb["status"] != "DOWN" || down[0].Payload["event"] != EventDown || down[0].Payload["occurred_at"] == nil ||
		hb["webhook_alerts"] == nil || hb["alerts"].(map[string]any)["webhook_alerts"] == nil {
		t.Fatalf("payload %v", down[0].Payload)
	}
	f.sweepAt(start.Add(10 * time.Minute))
	f.expectEvents(h.ID, EventDown) // once

	f.clk.Set(start.Add(11 * time.Minute))
	f.ping(h.ID, store.PingSuccess)
	f.expectState(h.ID, "DOWN") // the monitor turns it UP
	f.sweepAt(start.Add(11*time.Minute + time.Second))
	f.expectState(h.ID, "UP")
	up := f.expectEvents(h.ID, EventDown, EventUp)
	if hb, _ := up[1].Payload["heartbeat"].(map[string]any); hb["status"] != "UP" {
		t.Fatalf("up payload %v", up[1].Payload)
	}
	f.sweepAt(start.Add(11*time.Minute + 2*time.Second))
	f.expectEvents(h.ID, EventDown, EventUp)
	f.expectState(other.ID, "PENDING")
}

func TestHeartbeatCronWithTimezone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Every day at 09:00 New York time, 10 minutes of grace.
	h := f.create(store.Heartbeat{ReportPeriodCron: strp("0 9 * * *"), Timezone: strp("America/New_York"), GracePeriod: 600})
	ny, _ := time.LoadLocation("America/New_York")
	f.clk.Set(time.Date(2026, 1, 5, 9, 0, 30, 0, ny))
	f.ping(h.ID, store.PingSuccess)
	// Next due 2026-01-06 09:00 EST = 14:00 UTC; DOWN from 14:10 UTC.
	f.sweepAt(time.Date(2026, 1, 6, 14, 9, 59, 0, time.UTC))
	f.expectState(h.ID, "UP")
	f.sweepAt(time.Date(2026, 1, 6, 14, 10, 0, 0, time.UTC))
	f.expectState(h.ID, "DOWN")
	f.expectEvents(h.ID, EventDown)

	// After the switch to daylight time the same wall clock is an hour earlier in UTC.
	f.clk.Set(time.Date(2026, 3, 9, 9, 1, 0, 0, ny))
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(time.Date(2026, 3, 10, 13, 9, 59, 0, time.UTC))
	f.expectState(h.ID, "UP")
	f.sweepAt(time.Date(2026, 3, 10, 13, 10, 0, 0, time.UTC))
	f.expectState(h.ID, "DOWN")
	f.expectEvents(h.ID, EventDown, EventUp, EventDown)
}

func TestHeartbeatStartAndFail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(3600), GracePeriod: 60})

	// A start that never completes is DOWN after the grace period, even from PENDING.
	f.ping(h.ID, store.PingStart)
	f.sweepAt(t0.Add(59 * time.Second))
	f.expectState(h.ID, "PENDING")
	f.sweepAt(t0.Add(60 * time.Second))
	f.expectState(h.ID, "DOWN")
	f.expectEvents(h.ID, EventDown)

	// Completion records the run's duration and the monitor turns it UP.
	f.clk.Set(t0.Add(90 * time.Second))
	f.ping(h.ID, store.PingSuccess)
	if d := f.get(h.ID).LastDurationMs; d == nil || *d != 90_000 {
		t.Fatalf("last_duration_ms %v, want 90000", d)
	}
	f.sweepAt(t0.Add(91 * time.Second))
	f.expectState(h.ID, "UP")

	// A started run that completes within the grace period stays UP.
	f.clk.Set(t0.Add(10 * time.Minute))
	f.ping(h.ID, store.PingStart)
	f.sweepAt(t0.Add(10*time.Minute + 30*time.Second))
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(t0.Add(12 * time.Minute))
	f.expectState(h.ID, "UP")
	if d := f.get(h.ID).LastDurationMs; d == nil || *d != 30_000 {
		t.Fatalf("last_duration_ms %v, want 30000", d)
	}

	// A fail ping is DOWN at once, with the failed run's duration.
	f.clk.Set(t0.Add(20 * time.Minute))
	f.ping(h.ID, store.PingStart)
	f.clk.Set(t0.Add(20*time.Minute + 5*time.Second))
	f.ping(h.ID, store.PingFail)
	f.sweepAt(t0.Add(20*time.Minute + 6*time.Second))
	f.expectState(h.ID, "DOWN")
	if d := f.get(h.ID).LastDurationMs; d == nil || *d != 5_000 {
		t.Fatalf("last_duration_ms %v, want 5000", d)
	}
	f.expectEvents(h.ID, EventDown, EventUp, EventDown)
	f.clk.Set(t0.Add(21 * time.Minute))
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(t0.Add(21*time.Minute + time.Second))
	f.expectState(h.ID, "UP")
	f.expectEvents(h.ID, EventDown, EventUp, EventDown, EventUp)
}

func TestHeartbeatReminders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60, ReminderAlertIntervalMinutes: intp(10)})
	never := f.create(store.Heartbeat{Name: "no reminders", ReportPeriod: intp(60), GracePeriod: 60, ReminderAlertIntervalMinutes: intp(-1)})
	f.ping(h.ID, store.PingSuccess)
	f.ping(never.ID, store.PingSuccess)
	down := t0.Add(2 * time.Minute)
	f.sweepAt(down)
	f.expectEvents(h.ID, EventDown)
	f.sweepAt(down.Add(9 * time.Minute))
	f.expectEvents(h.ID, EventDown)
	f.sweepAt(down.Add(10 * time.Minute))
	f.expectEvents(h.ID, EventDown, EventDown+"(reminder)")
	f.sweepAt(down.Add(15 * time.Minute))
	f.expectEvents(h.ID, EventDown, EventDown+"(reminder)")
	f.sweepAt(down.Add(20 * time.Minute))
	f.expectEvents(h.ID, EventDown, EventDown+"(reminder)", EventDown+"(reminder)")
	f.expectEvents(never.ID, EventDown)
}

func TestHeartbeatMutedAndPaused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	muted := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60, Muted: true})
	paused := f.create(store.Heartbeat{Name: "paused", ReportPeriod: intp(60), GracePeriod: 60, Paused: true})
	f.ping(muted.ID, store.PingSuccess)
	f.ping(paused.ID, store.PingSuccess)
	if ok, _ := f.st.RecordPing(f.ctx, paused.ID, store.PingSuccess, f.clk.Now()); ok {
		t.Fatal("a paused heartbeat took a ping")
	}
	f.sweepAt(t0.Add(5 * time.Minute))
	f.expectState(muted.ID, "DOWN") // tracked underneath MUTED
	if s := Status(f.get(muted.ID)); s != "MUTED" {
		t.Fatalf("status %s, want MUTED", s)
	}
	f.expectEvents(muted.ID)
	f.expectState(paused.ID, "PENDING")
	if s := Status(f.get(paused.ID)); s != "PAUSED" {
		t.Fatalf("status %s, want PAUSED", s)
	}

	// Unmuted while still DOWN: the held-back heartbeat.down goes out on the next sweep.
	if _, err := f.st.UpdateHeartbeat(f.ctx, store.SystemActor, f.org, muted.ID, func(h *store.Heartbeat) error {
		h.Muted = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.sweepAt(t0.Add(6 * time.Minute))
	f.expectEvents(muted.ID, EventDown)
}

func TestHeartbeatMaintenanceWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60})
	// Mondays 12:00–13:00 UTC; t0 is Monday 12:00.
	if _, err := f.st.CreateMaintenanceWindow(f.ctx, store.SystemActor, f.org, store.MaintenanceWindow{Name: "deploys",
		StartDate: t0, DurationMinutes: 60, Timezone: "UTC", DaysOfWeek: []time.Weekday{time.Monday},
		Heartbeats: []uuid.UUID{h.ID}}); err != nil {
		t.Fatal(err)
	}
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(t0.Add(5 * time.Minute))
	f.expectState(h.ID, "DOWN")
	if s := Status(f.get(h.ID)); s != "MAINTENANCE" {
		t.Fatalf("status %s, want MAINTENANCE", s)
	}
	f.expectEvents(h.ID)
	f.sweepAt(t0.Add(59 * time.Minute))
	f.expectEvents(h.ID)
	// Leaving the window re-evaluates it: still DOWN, so the alert goes out now.
	f.sweepAt(t0.Add(60 * time.Minute))
	if s := Status(f.get(h.ID)); s != "DOWN" {
		t.Fatalf("status %s, want DOWN", s)
	}
	f.expectEvents(h.ID, EventDown)
}

func TestStepTable(t *testing.T) {
	t.Parallel()
	now := t0
	earlier := now.Add(-time.Hour)
	cases := []struct {
		name      string
		h         store.Heartbeat
		health    Health
		wantState string
		wantAlert []Alert
	}{
		{"pending stays on unknown", store.Heartbeat{State: "PENDING"}, Unknown, "PENDING", nil},
		{"pending healthy is up, silently", store.Heartbeat{State: "PENDING"}, Healthy, "UP", nil},
		{"pending failing is down", store.Heartbeat{State: "PENDING"}, Failing, "DOWN", []Alert{{Event: EventDown}}},
		{"up failing is down", store.Heartbeat{State: "UP"}, Failing, "DOWN", []Alert{{Event: EventDown}}},
		{"down healthy is up", store.Heartbeat{State: "DOWN", DownAlerted: true, LastAlertAt: &earlier}, Healthy, "UP", []Alert{{Event: EventUp}}},
		{"down healthy without down alert: no up", store.Heartbeat{State: "DOWN"}, Healthy, "UP", nil},
		{"down failing held back", store.Heartbeat{State: "DOWN"}, Failing, "DOWN", []Alert{{Event: EventDown}}},
		{"muted down", store.Heartbeat{State: "UP", Muted: true}, Failing, "DOWN", nil},
		{"maintenance down", store.Heartbeat{State: "UP", InMaintenance: true}, Failing, "DOWN", nil},
		{"reminder due", store.Heartbeat{State: "DOWN", DownAlerted: true, LastAlertAt: &earlier, ReminderAlertIntervalMinutes: intp(60)}, Failing, "DOWN", []Alert{{Event: EventDown, Reminder: true}}},
		{"reminder never", store.Heartbeat{State: "DOWN", DownAlerted: true, LastAlertAt: &earlier, ReminderAlertIntervalMinutes: intp(-1)}, Failing, "DOWN", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, alerts := Step(tc.h, tc.health, now)
			if st.State != tc.wantState || len(alerts) != len(tc.wantAlert) {
				t.Fatalf("got %s %v, want %s %v", st.State, alerts, tc.wantState, tc.wantAlert)
			}
			for i := range alerts {
				if alerts[i] != tc.wantAlert[i] {
					t.Fatalf("got %v, want %v", alerts, tc.wantAlert)
				}
			}
		})
	}
}

func TestParseCron(t *testing.T) {
	t.Parallel()
	for _, bad := range []struct{ expr, tz string }{{"* * *", ""}, {"0 9 * * *", "Mars/Olympus"}, {"CRON_TZ=UTC 0 9 * * *", ""}, {"@every 5m", ""}, {"0 9 * * *", "Local"}} {
		if _, err := ParseCron(bad.expr, bad.tz); err == nil {
			t.Errorf("ParseCron(%q, %q) accepted", bad.expr, bad.tz)
		}
	}
	s, err := ParseCron("@daily", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 1, 5, 23, 0, 0, 0, time.UTC)) {
		t.Fatalf("next %s", got)
	}
}

// TestHeartbeatResumeStartsOver: a DOWN heartbeat that is paused and resumed (the API's PATCH
// applies Resume) is PENDING again, its pings before the pause forgotten, so the next sweep
// neither finds it DOWN nor sends heartbeat.up; its first ping makes it UP without an alert.
func TestHeartbeatResumeStartsOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 30})
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(t0.Add(2 * time.Minute))
	f.expectState(h.ID, "DOWN")
	f.expectEvents(h.ID, EventDown)
	set := func(paused bool) store.Heartbeat {
		t.Helper()
		out, err := f.st.UpdateHeartbeat(f.ctx, store.SystemActor, f.org, h.ID, func(hb *store.Heartbeat) error {
			was := hb.Paused
			hb.Paused = paused
			if was && !paused {
				Resume(hb, f.clk.Now())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	set(true)
	f.clk.Set(t0.Add(time.Hour))
	got := set(false)
	if got.State != "PENDING" || got.StateChangedAt == nil || !got.StateChangedAt.Equal(t0.Add(time.Hour)) || got.DownAlerted ||
		got.LastAlertAt != nil || got.LastSuccessAt != nil || got.FailedAt != nil || got.RunStartedAt != nil || got.LastSeen == nil {
		t.Fatalf("resumed heartbeat %+v", got)
	}
	f.sweepAt(t0.Add(2 * time.Hour))
	f.expectState(h.ID, "PENDING")
	f.ping(h.ID, store.PingSuccess)
	f.sweepAt(t0.Add(2*time.Hour + time.Second))
	f.expectState(h.ID, "UP")
	f.expectEvents(h.ID, EventDown)
}
