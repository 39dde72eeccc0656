package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func mwCreate(t *testing.T, h *harness, body map[string]any) response {
	t.Helper()
	r := h.do(http.MethodPost, "/v1/maintenance-windows", h.tokenA, body)
	expectStatus(t, r, http.StatusCreated)
	return r
}

func TestMaintenanceWindowCRUD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := pvInsertCheck(t, h, h.orgA, pvCheck{})
	hbID := hbCreate(t, h, h.tokenA, map[string]any{"name": "cron job", "report_period": 60, "grace_period": 60}).Result()["id"].(string)

	r := mwCreate(t, h, map[string]any{"name": "Weekly deploy", "start_date": "2026-01-05T22:30:00.000Z", "duration_minutes": 90,
		"timezone": "Europe/Berlin", "days_of_week": []string{"MONDAY", "THURSDAY", "MONDAY"},
		"checks": []string{checkID.String()}, "heartbeats": []string{hbID}})
	golden(t, "maintenance_window_create", r.Raw)
	id := r.Result()["id"].(string)
	if r.Result()["status"] != "ENABLED" {
		t.Fatalf("new window: %s", r.Raw)
	}

	g := h.do(http.MethodGet, "/v1/maintenance-windows/"+id, h.tokenA, nil)
	expectStatus(t, g, http.StatusOK)

	// A zoneless start_date is read in the window's time zone.
	p := h.do(http.MethodPatch, "/v1/maintenance-windows/"+id, h.tokenA, map[string]any{"start_date": "2026-02-02T09:00:00", "checks": []string{}, "status": "DISABLED"})
	expectStatus(t, p, http.StatusOK)
	if p.Result()["start_date"] != "2026-02-02T08:00:00.000Z" || len(p.Result()["checks"].([]any)) != 0 ||
		len(p.Result()["heartbeats"].([]any)) != 1 || p.Result()["status"] != "DISABLED" {
		t.Fatalf("patch: %s", p.Raw)
	}

	mwCreate(t, h, map[string]any{"name": "Nightly", "start_date": "2026-01-01T00:00:00Z", "duration_minutes": 30,
		"timezone": "UTC", "days_of_week": []string{"SUNDAY"}})
	l := h.do(http.MethodGet, "/v1/maintenance-windows?search=weekly", h.tokenA, nil)
	expectStatus(t, l, http.StatusOK)
	if items := l.Items(); len(items) != 1 || items[0]["id"] != id {
		t.Fatalf("search: %s", l.Raw)
	}
	golden(t, "maintenance_window_list", h.do(http.MethodGet, "/v1/maintenance-windows", h.tokenA, nil).Raw)

	expectStatus(t, h.do(http.MethodGet, "/v1/maintenance-windows/"+id, h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodPatch, "/v1/maintenance-windows/"+id, h.tokenB, map[string]any{"name": "x"}), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodDelete, "/v1/maintenance-windows/"+id, h.tokenB, nil), http.StatusNotFound)

	d := h.do(http.MethodDelete, "/v1/maintenance-windows/"+id, h.tokenA, nil)
	expectStatus(t, d, http.StatusOK)
	expectStatus(t, h.do(http.MethodGet, "/v1/maintenance-windows/"+id, h.tokenA, nil), http.StatusNotFound)
	var links, audits int
	ctx := context.Background()
	if err := h.st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM maintenance_window_checks) + (SELECT count(*) FROM maintenance_window_heartbeats)`).Scan(&links); err != nil {
		t.Fatal(err)
	}
	if err := h.st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE auditable_type = 'MaintenanceWindow' AND auditable_id = $1`, id).Scan(&audits); err != nil {
		t.Fatal(err)
	}
	if links != 0 || audits != 3 {
		t.Fatalf("after delete: %d associations, %d audit events (want 0, 3)", links, audits)
	}
}

func TestMaintenanceWindowValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	foreignCheck := pvInsertCheck(t, h, h.orgB, pvCheck{})
	id := mwCreate(t, h, map[string]any{"name": "w", "start_date": "2026-01-01T00:00:00Z", "duration_minutes": 30,
		"timezone": "UTC", "days_of_week": []string{"SUNDAY"}}).Result()["id"].(string)
	valid := func(over map[string]any) map[string]any {
		b := map[string]any{"name": "w", "start_date": "2026-01-01T00:00:00Z", "duration_minutes": 30, "timezone": "UTC", "days_of_week": []string{"SUNDAY"}}
		for k, v := range over {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	cases := []struct {
		name, method, path string
		body               any
		msg                string
	}{
		{"no name", "POST", "/v1/maintenance-windows", valid(map[string]any{"name": nil}), "name: is required"},
		{"empty name", "POST", "/v1/maintenance-windows", valid(map[string]any{"name": " "}), "name"},
		{"no start", "POST", "/v1/maintenance-windows", valid(map[string]any{"start_date": nil}), "start_date: is required"},
		{"bad start", "POST", "/v1/maintenance-windows", valid(map[string]any{"start_date": "9:00"}), "start_date"},
		{"zero duration", "POST", "/v1/maintenance-windows", valid(map[string]any{"duration_minutes": 0}), "duration_minutes"},
		{"no timezone", "POST", "/v1/maintenance-windows", valid(map[string]any{"timezone": nil}), "timezone: is required"},
		{"bad timezone", "POST", "/v1/maintenance-windows", valid(map[string]any{"timezone": "Nowhere/City"}), "timezone"},
		{"no days", "POST", "/v1/maintenance-windows", valid(map[string]any{"days_of_week": []string{}}), "days_of_week"},
		{"bad day", "POST", "/v1/maintenance-windows", valid(map[string]any{"days_of_week": []string{"FUNDAY"}}), "days_of_week"},
		{"unknown check", "POST", "/v1/maintenance-windows", valid(map[string]any{"checks": []string{uuid.NewString()}}), "unknown ids"},
		{"other org's check", "POST", "/v1/maintenance-windows", valid(map[string]any{"checks": []string{foreignCheck.String()}}), "unknown ids"},
		{"malformed heartbeat id", "POST", "/v1/maintenance-windows", valid(map[string]any{"heartbeats": []string{"nope"}}), "unknown ids"},
		{"bad status", "PATCH", "/v1/maintenance-windows/" + id, map[string]any{"status": "ON"}, "status"},
		{"empty patch", "PATCH", "/v1/maintenance-windows/" + id, map[string]any{}, "no fields to update"},
		{"unknown field", "PATCH", "/v1/maintenance-windows/" + id, map[string]any{"color": 1}, "unknown property"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, h.tokenA, tc.body)
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.msg) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.msg)
			}
		})
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/maintenance-windows/abc", h.tokenA, nil), http.StatusBadRequest)
	expectStatus(t, h.do(http.MethodGet, "/v1/maintenance-windows", h.token(h.orgA, "HEARTBEAT_CHECKS:EDIT"), nil), http.StatusForbidden)
}

// TestMaintenanceWindowShowsMaintenance: checks and heartbeats of an active, enabled window
// show MAINTENANCE in reads and lists; disabling the window shows their own status again.
func TestMaintenanceWindowShowsMaintenance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkID := pvInsertCheck(t, h, h.orgA, pvCheck{})
	quiet := pvInsertCheck(t, h, h.orgA, pvCheck{})
	hbID := hbCreate(t, h, h.tokenA, map[string]any{"name": "job", "report_period": 60, "grace_period": 60}).Result()["id"].(string)
	start := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	all := []string{"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}
	id := mwCreate(t, h, map[string]any{"name": "now", "start_date": start, "duration_minutes": 120, "timezone": "Asia/Tokyo",
		"days_of_week": all, "checks": []string{checkID.String()}, "heartbeats": []string{hbID}}).Result()["id"].(string)

	status := func(path string) any { return h.do(http.MethodGet, path, h.tokenA, nil).Result()["status"] }
	listed := func(path, id string) any {
		for _, it := range h.do(http.MethodGet, path, h.tokenA, nil).Items() {
			if it["id"] == id {
				return it["status"]
			}
		}
		return nil
	}
	if s := status("/v1/checks/" + checkID.String()); s != "MAINTENANCE" {
		t.Fatalf("check status %v, want MAINTENANCE", s)
	}
	if s := listed("/v1/checks", checkID.String()); s != "MAINTENANCE" {
		t.Fatalf("listed check status %v, want MAINTENANCE", s)
	}
	patched := h.do(http.MethodPatch, "/v1/checks/"+checkID.String(), h.tokenA, map[string]any{"name": "renamed", "timeout": 10000})
	expectStatus(t, patched, http.StatusOK)
	if s := patched.Result()["status"]; s != "MAINTENANCE" {
		t.Fatalf("patched check status %v, want MAINTENANCE", s)
	}
	if s := listed("/v1/checks", quiet.String()); s != "PENDING" {
		t.Fatalf("check outside the window shows %v", s)
	}
	if s := status("/v1/heartbeats/" + hbID); s != "MAINTENANCE" {
		t.Fatalf("heartbeat status %v, want MAINTENANCE", s)
	}
	if s := listed("/v1/heartbeats", hbID); s != "MAINTENANCE" {
		t.Fatalf("listed heartbeat status %v, want MAINTENANCE", s)
	}
	expectStatus(t, h.do(http.MethodPatch, "/v1/maintenance-windows/"+id, h.tokenA, map[string]any{"status": "DISABLED"}), http.StatusOK)
	if s := status("/v1/checks/" + checkID.String()); s != "PENDING" {
		t.Fatalf("check status %v after disabling, want PENDING", s)
	}
	if s := status("/v1/heartbeats/" + hbID); s != "PENDING" {
		t.Fatalf("heartbeat status %v after disabling, want PENDING", s)
	}
}
