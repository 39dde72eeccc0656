package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
)

// hbCreate creates a heartbeat through the API and returns the response.
func hbCreate(t *testing.T, h *harness, token string, body map[string]any) response {
	t.Helper()
	r := h.do(http.MethodPost, "/v1/heartbeats", token, body)
	expectStatus(t, r, http.StatusCreated)
	return r
}

func TestHeartbeatCRUD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	r := hbCreate(t, h, h.tokenA, map[string]any{"name": "nightly backup", "report_period": 86400, "grace_period": 600})
	golden(t, "heartbeat_create_defaults", r.Raw)
	res := r.Result()
	if res["status"] != "PENDING" || res["alert_priority"] != "LOW" || res["reminder_alert_interval_minutes"] != float64(1440) || res["project_id"] != nil {
		t.Fatalf("defaults: %s", r.Raw)
	}
	id := res["id"].(string)

	cron := hbCreate(t, h, h.tokenA, map[string]any{"name": "hourly report", "report_period_cron": "0 * * * *",
		"timezone": "America/New_York", "grace_period": 60, "alert_priority": "HIGH", "reminder_alert_interval_minutes": -1,
		"slack_alerts": []string{h.newIntegration(h.orgA, integration.Slack)}})
	golden(t, "heartbeat_create_cron", cron.Raw)

	g := h.do(http.MethodGet, "/v1/heartbeats/"+id, h.tokenA, nil)
	expectStatus(t, g, http.StatusOK)

	// PATCH: switch to cron (the period is cleared), then pause and mute.
	p := h.do(http.MethodPatch, "/v1/heartbeats/"+id, h.tokenA, map[string]any{"report_period_cron": "30 2 * * *", "timezone": "Europe/Berlin"})
	expectStatus(t, p, http.StatusOK)
	if p.Result()["report_period"] != nil || p.Result()["report_period_cron"] != "30 2 * * *" {
		t.Fatalf("switch to cron: %s", p.Raw)
	}
	p = h.do(http.MethodPatch, "/v1/heartbeats/"+id, h.tokenA, map[string]any{"report_period": 60, "report_period_cron": nil, "timezone": nil})
	expectStatus(t, p, http.StatusOK)
	if p.Result()["report_period"] != float64(60) || p.Result()["timezone"] != nil {
		t.Fatalf("switch back: %s", p.Raw)
	}
	p = h.do(http.MethodPatch, "/v1/heartbeats/"+id, h.tokenA, map[string]any{"muted": true})
	if p.Result()["status"] != "MUTED" {
		t.Fatalf("muted: %s", p.Raw)
	}
	p = h.do(http.MethodPatch, "/v1/heartbeats/"+id, h.tokenA, map[string]any{"paused": true})
	if p.Result()["status"] != "PAUSED" {
		t.Fatalf("paused: %s", p.Raw)
	}

	l := h.do(http.MethodGet, "/v1/heartbeats?search=NIGHTLY", h.tokenA, nil)
	expectStatus(t, l, http.StatusOK)
	if items := l.Items(); len(items) != 1 || items[0]["id"] != id {
		t.Fatalf("search: %s", l.Raw)
	}
	l = h.do(http.MethodGet, "/v1/heartbeats", h.tokenA, nil)
	golden(t, "heartbeat_list", l.Raw)

	// Org isolation.
	expectStatus(t, h.do(http.MethodGet, "/v1/heartbeats/"+id, h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodPatch, "/v1/heartbeats/"+id, h.tokenB, map[string]any{"name": "x"}), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodDelete, "/v1/heartbeats/"+id, h.tokenB, nil), http.StatusNotFound)
	if n := len(h.do(http.MethodGet, "/v1/heartbeats", h.tokenB, nil).Items()); n != 0 {
		t.Fatalf("org B lists %d heartbeats", n)
	}

	d := h.do(http.MethodDelete, "/v1/heartbeats/"+id, h.tokenA, nil)
	expectStatus(t, d, http.StatusOK)
	nf := h.do(http.MethodGet, "/v1/heartbeats/"+id, h.tokenA, nil)
	expectStatus(t, nf, http.StatusNotFound)
	if !strings.Contains(nf.FirstError(), "heartbeat not found") {
		t.Fatalf("404 message: %s", nf.Raw)
	}

	// Every mutation is audited.
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE auditable_type = 'Heartbeat' AND auditable_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 6 { // created, 4 × updated, deleted
		t.Fatalf("%d audit events, want 6", n)
	}
}

func TestHeartbeatValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := hbCreate(t, h, h.tokenA, map[string]any{"name": "x", "report_period": 60, "grace_period": 60}).Result()["id"].(string)
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		msg    string
	}{
		{"no grace period", "POST", "/v1/heartbeats", map[string]any{"name": "x", "report_period": 60}, 400, "grace_period: is required"},
		{"grace period 0", "POST", "/v1/heartbeats", map[string]any{"name": "x", "report_period": 60, "grace_period": 0}, 400, "grace_period"},
		{"no schedule", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60}, 400, "one of report_period or report_period_cron is required"},
		{"both schedules", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "report_period_cron": "* * * * *"}, 400, "report_period_cron"},
		{"bad cron", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period_cron": "every day"}, 400, "cron"},
		{"bad timezone", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period_cron": "0 9 * * *", "timezone": "Moon/Base"}, 400, "timezone"},
		{"reminder below -1", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "reminder_alert_interval_minutes": -2}, 400, "reminder_alert_interval_minutes"},
		{"priority", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "alert_priority": "URGENT"}, 400, "alert_priority"},
		{"unknown field", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "color": "red"}, 400, "unknown property"},
		{"unknown project", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "project_id": uuid.NewString()}, 404, "project not found"},
		{"malformed project", "POST", "/v1/heartbeats", map[string]any{"name": "x", "grace_period": 60, "report_period": 60, "project_id": "nope"}, 400, "project_id"},
		{"patch project_id", "PATCH", "/v1/heartbeats/" + id, map[string]any{"project_id": uuid.NewString()}, 400, "move"},
		{"patch clears the only schedule", "PATCH", "/v1/heartbeats/" + id, map[string]any{"report_period": nil}, 400, "required"},
		{"patch empty", "PATCH", "/v1/heartbeats/" + id, map[string]any{}, 400, "at least one field"},
		{"patch null name", "PATCH", "/v1/heartbeats/" + id, map[string]any{"name": nil}, 400, "name"},
		{"short id", "GET", "/v1/heartbeats/abc", nil, 400, "at least 8"},
		{"not our id", "GET", "/v1/heartbeats/abcdefghij", nil, 404, "heartbeat not found"},
		{"list bad project", "GET", "/v1/heartbeats?project_id=bad", nil, 400, "project_id"},
		{"list unknown project", "GET", "/v1/heartbeats?project_id=" + uuid.NewString(), nil, 404, "project not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, h.tokenA, tc.body)
			expectStatus(t, r, tc.status)
			if !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.msg)
			}
		})
	}
	// Permissions: READ cannot edit, another area cannot read.
	read := h.token(h.orgA, "HEARTBEAT_CHECKS:READ")
	expectStatus(t, h.do(http.MethodGet, "/v1/heartbeats", read, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats", read, map[string]any{"name": "x"}), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/heartbeats", h.token(h.orgA, "UPTIME_CHECKS:EDIT"), nil), http.StatusForbidden)
}

func TestHeartbeatMoveAndProjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proj := pvCreateProject(t, h, h.tokenA, "ops")
	in := hbCreate(t, h, h.tokenA, map[string]any{"name": "in project", "report_period": 60, "grace_period": 60, "project_id": proj})
	if in.Result()["project_id"] != proj {
		t.Fatalf("create in project: %s", in.Raw)
	}
	out := hbCreate(t, h, h.tokenA, map[string]any{"name": "unassigned", "report_period": 60, "grace_period": 60})
	id := out.Result()["id"].(string)

	l := h.do(http.MethodGet, "/v1/heartbeats?project_id="+proj, h.tokenA, nil)
	if items := l.Items(); len(items) != 1 || items[0]["name"] != "in project" {
		t.Fatalf("project filter: %s", l.Raw)
	}
	l = h.do(http.MethodGet, "/v1/heartbeats?project_id=unassigned", h.tokenA, nil)
	if items := l.Items(); len(items) != 1 || items[0]["name"] != "unassigned" {
		t.Fatalf("unassigned filter: %s", l.Raw)
	}

	m := h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{"project_id": proj})
	expectStatus(t, m, http.StatusOK)
	golden(t, "heartbeat_move", m.Raw)
	before := h.do(http.MethodGet, "/v1/heartbeats/"+id, h.tokenA, nil).Result()["updated_at"]
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{"project_id": proj}), http.StatusOK)
	if after := h.do(http.MethodGet, "/v1/heartbeats/"+id, h.tokenA, nil).Result()["updated_at"]; after != before {
		t.Fatal("a no-op move touched updated_at")
	}
	back := h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{"project_id": nil})
	expectStatus(t, back, http.StatusOK)
	if back.Result()["project_id"] != nil {
		t.Fatalf("move to unassigned: %s", back.Raw)
	}
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{"project_id": uuid.NewString()}), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{}), http.StatusBadRequest)
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenA, map[string]any{"project_id": proj, "x": 1}), http.StatusBadRequest)
	expectStatus(t, h.do(http.MethodPost, "/v1/heartbeats/"+id+"/move", h.tokenB, map[string]any{"project_id": nil}), http.StatusNotFound)
}
