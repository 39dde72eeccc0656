package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// fakeClock is a settable clock for the status page runner.
type fakeClock struct{ now time.Time }

func (f *fakeClock) Now() time.Time { return f.now }

func TestStatusPageScheduledMaintenance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "maint")
	db, cache := h.newComponent(t, page, "Database"), h.newComponent(t, page, "Cache")
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+cache, `{"status":"DEGRADED_PERFORMANCE"}`, http.StatusOK)
	base := "/v1/status_pages/" + page + "/scheduled_maintenance"
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	startS := start.Format(time.RFC3339)

	for _, tc := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"title required", map[string]any{"description": "d", "start_date": startS, "duration_minutes": 30}, 400, "title: is required"},
		{"description required", map[string]any{"title": "t", "start_date": startS, "duration_minutes": 30}, 400, "description: is required"},
		{"description min 1", map[string]any{"title": "t", "description": "", "start_date": startS, "duration_minutes": 30}, 400, "description: must not be empty"},
		{"start_date required", map[string]any{"title": "t", "description": "d", "duration_minutes": 30}, 400, "start_date: is required"},
		{"start_date format", map[string]any{"title": "t", "description": "d", "start_date": "tomorrow", "duration_minutes": 30}, 400, "start_date:"},
		{"duration required", map[string]any{"title": "t", "description": "d", "start_date": startS}, 400, "duration_minutes: is required"},
		{"duration at least 1", map[string]any{"title": "t", "description": "d", "start_date": startS, "duration_minutes": 0}, 400, "duration_minutes:"},
		{"duration integer", map[string]any{"title": "t", "description": "d", "start_date": startS, "duration_minutes": 1.5}, 400, "duration_minutes:"},
		{"component of no page", map[string]any{"title": "t", "description": "d", "start_date": startS, "duration_minutes": 5, "components_affected": []string{uuid.NewString()}}, 400, "components_affected:"},
		{"notifications unknown key", map[string]any{"title": "t", "description": "d", "start_date": startS, "duration_minutes": 5, "notifications": map[string]any{"sms": true}}, 400, "notifications.sms: unknown property"},
		{"unknown page", nil, 404, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, body := base, tc.body
			if body == nil {
				path, body = "/v1/status_pages/"+uuid.NewString()+"/scheduled_maintenance", map[string]any{"title": "t", "description": "d", "start_date": startS, "duration_minutes": 5}
			}
			r := h.do(http.MethodPost, path, h.tokenA, body)
			expectStatus(t, r, tc.status)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}

	created := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Database upgrade", "description": "Upgrading to v16",
		"start_date": startS, "duration_minutes": 30, "components_affected": []string{db, cache}, "notifications": map[string]any{"an_hour_before": true}}, http.StatusCreated)
	golden(t, "status_page_maintenance_create", created.Raw)
	m := created.Result()
	id := m["id"].(string)
	if n := m["notifications"].(map[string]any); n["an_hour_before"] != true || n["at_start"] != true || n["at_end"] != true || m["impact"] != "MAINTENANCE" || m["started"] != nil {
		t.Fatalf("created maintenance: %v", m)
	}
	patched := h.spCall(t, http.MethodPatch, base+"/"+id, `{"title":"Database upgrade (v16)","duration_minutes":45}`, http.StatusOK).Result()
	if patched["duration_minutes"] != float64(45) {
		t.Fatalf("patch: %v", patched)
	}
	list := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents", nil, http.StatusOK).Items()
	sm, _ := list[0]["scheduled_maintenance"].(map[string]any)
	if sm == nil || sm["duration_minutes"] != float64(45) || sm["notify_subscribers_at_start"] != true || list[0]["latest_update"].(map[string]any)["status"] != "SCHEDULED" {
		t.Fatalf("incident list item of a maintenance: %v", list[0])
	}

	clock := &fakeClock{now: start.Add(-time.Minute)}
	runner := statusPages(t, h.st, clock.Now)
	ctx := context.Background()
	status := func(comp string) any {
		return h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/components/"+comp, nil, 200).Result()["status"]
	}
	steps := []struct {
		name            string
		at              time.Time
		state           string // latest update status
		db, cache, page string
	}{
		{"before the start nothing moves", start.Add(-time.Minute), "SCHEDULED", "OPERATIONAL", "DEGRADED_PERFORMANCE", "PARTIALLY_DEGRADED_SERVICE"},
		{"at the start: in progress", start, "IN_PROGRESS", "MAINTENANCE", "MAINTENANCE", "SERVICE_UNDER_MAINTENANCE"},
		{"during: unchanged", start.Add(44 * time.Minute), "IN_PROGRESS", "MAINTENANCE", "MAINTENANCE", "SERVICE_UNDER_MAINTENANCE"},
		{"at the end: completed and restored", start.Add(45 * time.Minute), "COMPLETED", "OPERATIONAL", "DEGRADED_PERFORMANCE", "PARTIALLY_DEGRADED_SERVICE"},
		{"later ticks change nothing", start.Add(2 * time.Hour), "COMPLETED", "OPERATIONAL", "DEGRADED_PERFORMANCE", "PARTIALLY_DEGRADED_SERVICE"},
	}
	for _, st := range steps {
		clock.now = st.at
		if err := runner.Tick(ctx); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		inc := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents/"+id, nil, 200).Result()
		if got := inc["latest_update"].(map[string]any)["status"]; got != st.state {
			t.Fatalf("%s: latest update %v, want %s", st.name, got, st.state)
		}
		if status(db) != st.db || status(cache) != st.cache {
			t.Fatalf("%s: components %v/%v, want %s/%s", st.name, status(db), status(cache), st.db, st.cache)
		}
		if got := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page, nil, 200).Result()["status"]; got != st.page {
			t.Fatalf("%s: page status %v, want %s", st.name, got, st.page)
		}
		if st.state == "IN_PROGRESS" {
			expectStatus(t, h.do(http.MethodPatch, base+"/"+id, h.tokenA, `{"title":"too late"}`), http.StatusBadRequest)
			sum := h.do(http.MethodGet, "/v1/status_pages/maint/summary", "", nil).Result()
			if sum["status"].(map[string]any)["description"] != "Service Under Maintenance" || len(sum["scheduled_maintenance"].([]any)) != 1 {
				t.Fatalf("summary during maintenance: %v", sum)
			}
		}
	}
	done := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents/"+id, nil, 200)
	golden(t, "status_page_maintenance_completed", done.Raw)
	final := done.Result()
	if final["ended"] != start.Add(45*time.Minute).Format("2006-01-02T15:04:05.000Z") ||
		final["started"] != start.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("started/ended: %v / %v", final["started"], final["ended"])
	}
	events, _ := h.outboxEvents(t, id)
	if strings.Join(events, ",") != "status_page.incident.started,status_page.incident.updated,status_page.incident.updated,status_page.incident.resolved" {
		t.Fatalf("outbox: %v", events)
	}
	if h.auditCount(t, "status_page_scheduled_maintenance.started") != 1 || h.auditCount(t, "status_page_scheduled_maintenance.completed") != 1 {
		t.Fatal("lifecycle steps not audited")
	}
	sum := h.do(http.MethodGet, "/v1/status_pages/maint/summary", "", nil).Result()
	if len(sum["scheduled_maintenance"].([]any)) != 0 {
		t.Fatalf("completed maintenance still in the summary: %v", sum)
	}

	// A maintenance whose window passed entirely between ticks goes through both steps; one
	// deleted while in progress gives its components back.
	past := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Missed", "description": "d",
		"start_date": start.Add(3 * time.Hour).Format(time.RFC3339), "duration_minutes": 10, "components_affected": []string{db}}, http.StatusCreated).Result()["id"].(string)
	running := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Long", "description": "d",
		"start_date": start.Add(5 * time.Hour).Format(time.RFC3339), "duration_minutes": 600, "components_affected": []string{cache}}, http.StatusCreated).Result()["id"].(string)
	clock.now = start.Add(6 * time.Hour)
	if err := runner.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	skipped := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents/"+past, nil, 200).Result()
	if skipped["latest_update"].(map[string]any)["status"] != "COMPLETED" || len(skipped["updates"].([]any)) != 3 || status(db) != "OPERATIONAL" {
		t.Fatalf("missed window: %v", skipped)
	}
	if status(cache) != "MAINTENANCE" {
		t.Fatalf("cache %v during the long maintenance", status(cache))
	}
	expectStatus(t, h.do(http.MethodGet, base+"/"+uuid.NewString(), h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, base+"/"+running, h.tokenB, nil), http.StatusNotFound)
	h.spCall(t, http.MethodDelete, base+"/"+running, nil, http.StatusOK)
	if status(cache) != "DEGRADED_PERFORMANCE" {
		t.Fatalf("cache %v after deleting the maintenance in progress", status(cache))
	}
	// Back-dated: a window that ended before the maintenance was even created still ends
	// COMPLETED with ended set; so does one whose start was moved into the past.
	backdated := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Back-dated", "description": "d",
		"start_date": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339), "duration_minutes": 30}, http.StatusCreated).Result()["id"].(string)
	moved := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Moved", "description": "d",
		"start_date": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "duration_minutes": 30}, http.StatusCreated).Result()["id"].(string)
	h.spCall(t, http.MethodPatch, base+"/"+moved, map[string]any{"start_date": time.Now().Add(-3 * time.Hour).UTC().Format(time.RFC3339)}, http.StatusOK)
	clock.now = time.Now()
	if err := runner.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for _, mid := range []string{backdated, moved} {
		got := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents/"+mid, nil, 200).Result()
		if got["latest_update"].(map[string]any)["status"] != "COMPLETED" || got["ended"] == nil {
			t.Fatalf("maintenance in the past: %v", got)
		}
	}
	// A regular incident is not a scheduled maintenance.
	inc := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", `{"title":"t","description":"d","status":"UPDATE"}`, http.StatusCreated).Result()["id"].(string)
	expectStatus(t, h.do(http.MethodGet, base+"/"+inc, h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodDelete, base+"/"+inc, h.tokenA, nil), http.StatusNotFound)
}

func TestStatusPageComponentFollowsChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	page := h.newPage(t, "follow")
	comp := h.newComponent(t, page, "API")
	newCheck := func(name string) string {
		return h.spCall(t, http.MethodPost, "/v1/checks/uptime", map[string]any{"name": name, "url": "https://example.com"}, http.StatusCreated).Result()["id"].(string)
	}
	c1, c2 := newCheck("eu"), newCheck("us")
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, map[string]any{"check_ids": []string{c1, c2}}, http.StatusOK)
	setCheck := func(id, state string, paused bool) {
		if _, err := h.st.Pool().Exec(ctx, `UPDATE checks SET state = $2, paused = $3 WHERE id = $1`, id, state, paused); err != nil {
			t.Fatal(err)
		}
	}
	clock := &fakeClock{now: time.Now()}
	runner := statusPages(t, h.st, clock.Now)
	status := func() any {
		return h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/components/"+comp, nil, 200).Result()["status"]
	}
	for _, tc := range []struct {
		name           string
		s1, s2         string
		paused1        bool
		want, wantPage string
	}{
		{"both pending", "PENDING", "PENDING", false, "OPERATIONAL", "ALL_SYSTEMS_OPERATIONAL"},
		{"both up", "UP", "UP", false, "OPERATIONAL", "ALL_SYSTEMS_OPERATIONAL"},
		{"one verifying", "VERIFYING", "UP", false, "DEGRADED_PERFORMANCE", "PARTIALLY_DEGRADED_SERVICE"},
		{"one down", "DOWN", "UP", false, "PARTIAL_OUTAGE", "MINOR_SERVICE_OUTAGE"},
		{"both down", "DOWN", "DOWN", false, "MAJOR_OUTAGE", "MAJOR_SYSTEM_OUTAGE"},
		{"one recovering", "RECOVERING", "DOWN", false, "PARTIAL_OUTAGE", "MINOR_SERVICE_OUTAGE"},
		{"recovering alone", "RECOVERING", "UP", false, "DEGRADED_PERFORMANCE", "PARTIALLY_DEGRADED_SERVICE"},
		{"paused down check is ignored", "DOWN", "UP", true, "OPERATIONAL", "ALL_SYSTEMS_OPERATIONAL"},
	} {
		setCheck(c1, tc.s1, tc.paused1)
		setCheck(c2, tc.s2, false)
		clock.now = clock.now.Add(time.Minute)
		if err := runner.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if got := status(); got != tc.want {
			t.Fatalf("%s: component %v, want %s", tc.name, got, tc.want)
		}
		if got := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page, nil, 200).Result()["status"]; got != tc.wantPage {
			t.Fatalf("%s: page %v, want %s", tc.name, got, tc.wantPage)
		}
	}
	if h.auditCount(t, "status_page_component.status_changed") == 0 {
		t.Fatal("automatic status changes are not audited")
	}
	// Overridden: the status is the user's, whatever the checks say.
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, `{"override_status":true,"status":"NO_IMPACT"}`, http.StatusOK)
	setCheck(c1, "DOWN", false)
	if err := runner.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "NO_IMPACT" {
		t.Fatalf("overridden component %v, want NO_IMPACT", got)
	}
	// Back to following: recomputed at once.
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/components/"+comp, `{"override_status":false}`, http.StatusOK)
	if got := status(); got != "PARTIAL_OUTAGE" {
		t.Fatalf("component %v after clearing the override, want PARTIAL_OUTAGE", got)
	}
	// Deleting a linked check unlinks it.
	h.spCall(t, http.MethodDelete, "/v1/checks/uptime/"+c1, nil, http.StatusOK)
	if err := runner.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	r := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/components/"+comp, nil, 200).Result()
	if len(r["check_ids"].([]any)) != 1 || r["status"] != "OPERATIONAL" {
		t.Fatalf("after deleting a linked check: %v", r)
	}
}

func TestStatusPageServiceRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "runloop")
	comp := h.newComponent(t, page, "API")
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/scheduled_maintenance", map[string]any{"title": "Now", "description": "d",
		"start_date": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), "duration_minutes": 60, "components_affected": []string{comp}}, http.StatusCreated)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	runner, err := statuspage.New(statuspage.Config{Interval: 10 * time.Millisecond}, statuspage.Deps{Store: h.st})
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- runner.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/components/"+comp, nil, 200).Result()["status"]
		if st == "MAINTENANCE" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run did not start the maintenance (component %v)", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
}
