package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// feedIncident writes an incident of a check directly: the feed reads what the evaluator
// records, and the test needs exact start times.
func feedIncident(t *testing.T, h *harness, org uuid.UUID, checkID string, started time.Time, ended *time.Time) string {
	t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	ckSQL(t, h, `INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES ($1, $2, $3, $4, $5)`,
		id, org, checkID, started, ended)
	return id
}

// feedIDs lists the ids of a feed page.
func feedIDs(r response) []string {
	var out []string
	for _, it := range r.Items() {
		out = append(out, fmt.Sprint(it["id"]))
	}
	return out
}

// TestIncidentFeed: GET /v1/incidents lists the organization's check incidents and DOWN
// heartbeats, open first, then resolved, each newest first, in pages whose result_info counts
// the feed; the caller's grants choose the sources; another organization's incidents never
// appear; bad parameters are 400s naming the field.
func TestIncidentFeed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	at := func(hours int) time.Time { return base.Add(time.Duration(hours) * time.Hour) }
	ptr := func(t time.Time) *time.Time { return &t }

	web := ckID(t, h, "/v1/checks/uptime", ckUptimeBody())
	db := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	hb := hbCreate(t, h, h.tokenA, map[string]any{"name": "nightly backup", "report_period": 86400, "grace_period": 600}).Result()["id"].(string)
	hbUp := hbCreate(t, h, h.tokenA, map[string]any{"name": "hourly job", "report_period": 3600, "grace_period": 60}).Result()["id"].(string)
	ckSQL(t, h, `UPDATE heartbeats SET state = 'DOWN', state_changed_at = $2 WHERE id = $1`, hb, at(-2))
	ckSQL(t, h, `UPDATE heartbeats SET state = 'UP', state_changed_at = $2 WHERE id = $1`, hbUp, at(-1))
	other := ckCreate(t, h, h.tokenB, "/v1/checks/uptime", ckUptimeBody())["id"].(string)
	otherHB := hbCreate(t, h, h.tokenB, map[string]any{"name": "theirs", "report_period": 60, "grace_period": 60}).Result()["id"].(string)
	ckSQL(t, h, `UPDATE heartbeats SET state = 'DOWN', state_changed_at = $2 WHERE id = $1`, otherHB, at(1))
	feedIncident(t, h, h.orgB, other, at(0), nil)
	feedIncident(t, h, h.orgB, other, at(-3), ptr(at(-2)))

	openWeb := feedIncident(t, h, h.orgA, web, at(-1), nil)
	openDB := feedIncident(t, h, h.orgA, db, at(-5), nil)
	oldWeb := feedIncident(t, h, h.orgA, web, at(-10), ptr(at(-9)))
	newDB := feedIncident(t, h, h.orgA, db, at(-4), ptr(at(-3)))
	oldDB := feedIncident(t, h, h.orgA, db, at(-30), ptr(at(-29)))
	// Open: web (-1 h), the heartbeat (-2 h), db (-5 h). Resolved, newest first: db -4 h, web -10 h, db -30 h.
	all := []string{openWeb, hb, openDB, newDB, oldWeb, oldDB}

	r := h.do(http.MethodGet, "/v1/incidents", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if got := feedIDs(r); strings.Join(got, ",") != strings.Join(all, ",") {
		t.Fatalf("order:\n got %v\nwant %v", got, all)
	}
	items := r.Items()
	if items[0]["source"] != "CHECK" || items[0]["check_id"] != web || items[0]["heartbeat_id"] != nil ||
		items[0]["name"] != "API health" || items[0]["kind"] != "UPTIME" || items[0]["ended_at"] != nil ||
		items[0]["started_at"] != "2026-03-14T11:00:00.000Z" {
		t.Errorf("an open check incident: %v", items[0])
	}
	if items[1]["source"] != "HEARTBEAT" || items[1]["heartbeat_id"] != hb || items[1]["check_id"] != nil ||
		items[1]["name"] != "nightly backup" || items[1]["kind"] != "HEARTBEAT" || items[1]["started_at"] != "2026-03-14T10:00:00.000Z" {
		t.Errorf("a DOWN heartbeat: %v", items[1])
	}
	if items[3]["kind"] != "TCP" || items[3]["ended_at"] != "2026-03-14T09:00:00.000Z" {
		t.Errorf("a resolved incident: %v", items[3])
	}

	// Pages of two cut across the open and resolved parts; result_info counts the whole feed.
	for page, want := range [][]string{all[0:2], all[2:4], all[4:6], nil} {
		r := h.do(http.MethodGet, fmt.Sprintf("/v1/incidents?per_page=2&page=%d", page+1), h.tokenA, nil)
		expectStatus(t, r, http.StatusOK)
		info, _ := r.Body["result_info"].(map[string]any)
		if got := feedIDs(r); strings.Join(got, ",") != strings.Join(want, ",") || info["total_count"] != 6.0 {
			t.Errorf("page %d: %v (want %v), result_info %v", page+1, got, want, info)
		}
	}

	cases := []struct {
		name, query, token string
		want               []string
	}{
		{"open", "?status=open", h.tokenA, all[0:3]},
		{"resolved", "?status=resolved", h.tokenA, all[3:6]},
		{"one check", "?check_id=" + db, h.tokenA, []string{openDB, newDB, oldDB}},
		{"one check, resolved", "?status=resolved&check_id=" + db + "&per_page=1&page=2", h.tokenA, []string{oldDB}},
		{"checks only", "", h.token(h.orgA, "UPTIME_CHECKS:READ"), []string{openWeb, openDB, newDB, oldWeb, oldDB}},
		{"heartbeats only", "", h.token(h.orgA, "HEARTBEAT_CHECKS:READ"), []string{hb}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/v1/incidents"+tc.query, tc.token, nil)
			expectStatus(t, r, http.StatusOK)
			if got := feedIDs(r); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

	// The other organization sees its own only.
	r = h.do(http.MethodGet, "/v1/incidents", h.tokenB, nil)
	expectStatus(t, r, http.StatusOK)
	if got := r.Items(); len(got) != 3 || got[0]["heartbeat_id"] != otherHB {
		t.Errorf("org B's feed: %s", r.Raw)
	}

	for name, query := range map[string]string{
		"status":      "?status=closed",
		"check_id":    "?check_id=nope",
		"page":        "?page=0",
		"per_page":    "?per_page=101",
		"short check": "?check_id=" + web[:35],
	} {
		r := h.do(http.MethodGet, "/v1/incidents"+query, h.tokenA, nil)
		expectStatus(t, r, http.StatusBadRequest)
		field := strings.Fields(name)[len(strings.Fields(name))-1]
		if field == "check" {
			field = "check_id"
		}
		if !strings.Contains(r.ErrorText(), field) {
			t.Errorf("%s: %s does not name %s", name, r.Raw, field)
		}
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/incidents?check_id="+other, h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/incidents?check_id="+uuid.NewString(), h.tokenA, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/incidents?check_id="+web, h.token(h.orgA, "HEARTBEAT_CHECKS:READ"), nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/incidents", h.token(h.orgA, "PROJECTS:READ"), nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodGet, "/v1/incidents", "", nil), http.StatusUnauthorized)
}
