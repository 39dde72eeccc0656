package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestMaintenanceWindowHoldsAlerts: a check inside an active maintenance window goes DOWN with
// no outbox row; after the window, the next failing verdict sends the held-back uptime.down.
func TestMaintenanceWindowHoldsAlerts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0, recovery: 0})
	other := h.createCheck(checkSpec{confirmation: 0, recovery: 0})
	t0 := h.clock.Now() // Sunday 2026-03-01 12:00 UTC
	if _, err := h.st.CreateMaintenanceWindow(context.Background(), store.SystemActor, h.org, store.MaintenanceWindow{
		Name: "deploy", StartDate: t0, DurationMinutes: 60, Timezone: "UTC", DaysOfWeek: []time.Weekday{time.Sunday},
		Checks: []uuid.UUID{checkID}}); err != nil {
		t.Fatal(err)
	}
	a := h.connect("a1", "cloud:us-east-1")
	at := func(minute int) time.Time { return t0.Add(time.Duration(minute) * time.Minute) }

	h.run(a, checkID, at(1), true, "UP")
	h.run(a, checkID, at(2), false, "DOWN")
	h.run(a, checkID, at(30), false, "DOWN")
	if ob := h.outbox(checkID); len(ob) != 0 {
		t.Fatalf("outbox inside the window: %+v", ob)
	}
	// A check outside the window alerts as usual.
	h.run(a, other, at(3), false, "DOWN")
	if ob := h.outbox(other); len(ob) != 1 {
		t.Fatalf("outbox of a check outside the window: %+v", ob)
	}

	h.run(a, checkID, at(60), false, "DOWN") // the window has ended: the held-back alert goes out
	ob := h.outbox(checkID)
	if len(ob) != 1 || ob[0].event != "uptime.down" {
		t.Fatalf("outbox after the window: %+v, want one uptime.down", ob)
	}
	h.run(a, checkID, at(61), true, "UP")
	if ob := h.outbox(checkID); len(ob) != 2 || ob[1].event != "uptime.up" {
		t.Fatalf("outbox after recovery: %+v", ob)
	}
}
