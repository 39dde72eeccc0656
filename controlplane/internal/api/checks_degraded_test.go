package api

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestCheckDegradedResponseTime: degraded_response_time_ms is null by default, set by a create
// or a PATCH and cleared by null; a timeout lowered below it is refused (TestCheckValidation
// has the other 400s).
func TestCheckDegradedResponseTime(t *testing.T) {
	h := newHarness(t)
	created := ckCreate(t, h, h.tokenA, "/v1/checks/uptime", ckUptimeBody())
	if v, ok := created["degraded_response_time_ms"]; !ok || v != nil {
		t.Fatalf("degraded_response_time_ms of a new check = %v (present %v), want null", v, ok)
	}
	path := "/v1/checks/" + created["id"].(string)
	if r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"degraded_response_time_ms": 750}); r.Status != http.StatusOK {
		t.Fatalf("PATCH 750: %d %s", r.Status, r.Raw)
	}
	if got := h.do(http.MethodGet, path, h.tokenA, nil).Result()["degraded_response_time_ms"]; got != float64(750) {
		t.Fatalf("after PATCH 750: degraded_response_time_ms = %v, want 750", got)
	}
	if r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"name": "renamed"}); r.Result()["degraded_response_time_ms"] != float64(750) {
		t.Fatalf("a PATCH without the field changed it: %v", r.Result()["degraded_response_time_ms"])
	}
	if r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"degraded_response_time_ms": nil}); r.Status != http.StatusOK {
		t.Fatalf("PATCH null: %d %s", r.Status, r.Raw)
	}
	if got, ok := h.do(http.MethodGet, path, h.tokenA, nil).Result()["degraded_response_time_ms"]; !ok || got != nil {
		t.Fatalf("after PATCH null: degraded_response_time_ms = %v (present %v), want null", got, ok)
	}
}

// TestCheckDegraded: a check's degraded field says why the evaluator holds it degraded (the
// rows it writes), null when it is not, or while paused; another organization's rows never
// show.
func TestCheckDegraded(t *testing.T) {
	h := newHarness(t)
	id := ckID(t, h, "/v1/checks/uptime", ckUptimeBody())
	path := "/v1/checks/" + id
	degraded := func() any {
		t.Helper()
		r := h.do(http.MethodGet, path, h.tokenA, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.Status, r.Raw)
		}
		return r.Result()["degraded"]
	}
	if d := degraded(); d != nil {
		t.Fatalf("degraded of a new check = %v, want null", d)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := h.st.Pool().Exec(context.Background(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	checkID, now := uuid.MustParse(id), time.Now()
	exec(`INSERT INTO check_slowness (org_id, check_id, since, degraded, slow_regions) VALUES ($1, $2, $3, false, '{cloud:us-east-1}')`, h.orgA, checkID, now)
	if d := degraded(); d != nil {
		t.Fatalf("degraded during an unconfirmed slow streak = %v, want null", d)
	}
	exec(`UPDATE check_slowness SET degraded = true WHERE check_id = $1`, checkID)
	if d, _ := degraded().(map[string]any); d == nil || !reflect.DeepEqual(d["reasons"], []any{"slow"}) {
		t.Fatalf("degraded when slow = %v, want reasons [slow]", d)
	}
	exec(`INSERT INTO check_degradations (org_id, check_id, since, degraded, failing_regions) VALUES ($1, $2, $3, true, '{cloud:eu-west-2}')`, h.orgA, checkID, now)
	if d, _ := degraded().(map[string]any); d == nil || !reflect.DeepEqual(d["reasons"], []any{"regional", "slow"}) {
		t.Fatalf("degraded when slow and regional = %v, want reasons [regional slow]", d)
	}
	if r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"paused": true}); r.Status != http.StatusOK || r.Result()["degraded"] != nil {
		t.Fatalf("PATCH paused: %d, degraded %v; want 200 and null", r.Status, r.Result()["degraded"])
	}
	if r := h.do(http.MethodPatch, path, h.tokenA, map[string]any{"paused": false}); r.Result()["degraded"] == nil {
		t.Fatalf("PATCH unpaused: degraded null, want the reasons")
	}
	if r := h.do(http.MethodGet, path, h.token(h.orgB, "UPTIME_CHECKS:READ"), nil); r.Status != http.StatusNotFound {
		t.Fatalf("another organization's GET: %d, want 404", r.Status)
	}
}
