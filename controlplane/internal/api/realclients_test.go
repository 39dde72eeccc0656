package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The shapes the reference Terraform provider sends that the public API contract does not
// state: each is accepted with its evident meaning, and only these.

func TestRealClientTypeOnTypedPatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := map[string]string{}
	for kind, body := range map[string]string{
		"uptime":  `{"name":"u","url":"https://example.com"}`,
		"browser": `{"name":"b","script":` + jsonString(fuzzScript) + `}`,
		"dns":     `{"name":"d","dns_domain":"example.com","dns_record_type":"A"}`,
		"tcp":     `{"name":"t","tcp_hostname":"example.com","tcp_port":443}`,
	} {
		ids[kind] = h.spCall(t, http.MethodPost, "/v1/checks/"+kind, body, http.StatusCreated).Result()["id"].(string)
	}
	own := map[string]string{"uptime": "UPTIME_CHECK", "browser": "BROWSER_CHECK", "dns": "DNS_CHECK", "tcp": "TCP_CHECK"}
	for kind, typ := range own {
		r := h.spCall(t, http.MethodPatch, "/v1/checks/"+kind+"/"+ids[kind], `{"type":"`+typ+`","name":"renamed"}`, http.StatusOK)
		if r.Result()["name"] != "renamed" {
			t.Errorf("%s: %s", kind, r.Raw)
		}
		other := "TCP_CHECK"
		if kind == "tcp" {
			other = "UPTIME_CHECK"
		}
		r = h.spCall(t, http.MethodPatch, "/v1/checks/"+kind+"/"+ids[kind], `{"type":"`+other+`"}`, http.StatusBadRequest)
		if !strings.Contains(r.ErrorText(), "type: must be "+typ) {
			t.Errorf("%s with %s: %s", kind, other, r.Raw)
		}
	}
	// The generic PATCH keeps its contract rule: a DNS check cannot become an uptime check.
	h.spCall(t, http.MethodPatch, "/v1/checks/"+ids["dns"], `{"type":"UPTIME_CHECK"}`, http.StatusBadRequest)
}

func TestRealClientEmptyStringAsNull(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	script := jsonString(fuzzScript)
	b := h.spCall(t, http.MethodPost, "/v1/checks/browser", `{"name":"b","url":"","script":`+script+`}`, http.StatusCreated).Result()
	if b["url"] != nil {
		t.Fatalf("browser url %v, want null", b["url"])
	}
	id := b["id"].(string)
	h.spCall(t, http.MethodPatch, "/v1/checks/browser/"+id, `{"url":"https://example.com"}`, http.StatusOK)
	if r := h.spCall(t, http.MethodPatch, "/v1/checks/browser/"+id, `{"url":""}`, http.StatusOK); r.Result()["url"] != nil {
		t.Fatalf("PATCH url \"\": %s", r.Raw)
	}
	g := h.spCall(t, http.MethodPost, "/v1/checks", `{"name":"g","type":"BROWSER_CHECK","url":"","script":`+script+`}`, http.StatusCreated)
	if g.Result()["url"] != nil {
		t.Fatalf("generic create: %s", g.Raw)
	}
	// An uptime check still needs a URL.
	h.spCall(t, http.MethodPost, "/v1/checks", `{"name":"u","url":""}`, http.StatusBadRequest)
	h.spCall(t, http.MethodPost, "/v1/checks/uptime", `{"name":"u","url":""}`, http.StatusBadRequest)

	d := h.spCall(t, http.MethodPost, "/v1/checks/dns", `{"name":"d","dns_domain":"example.com","dns_record_type":"A","dns_resolver":""}`, http.StatusCreated).Result()
	if d["dns_resolver"] != nil {
		t.Fatalf("dns_resolver %v, want null", d["dns_resolver"])
	}
	did := d["id"].(string)
	h.spCall(t, http.MethodPatch, "/v1/checks/dns/"+did, `{"dns_resolver":"1.1.1.1:53"}`, http.StatusOK)
	if r := h.spCall(t, http.MethodPatch, "/v1/checks/dns/"+did, `{"dns_resolver":""}`, http.StatusOK); r.Result()["dns_resolver"] != nil {
		t.Fatalf("PATCH dns_resolver \"\": %s", r.Raw)
	}
	// Elsewhere "" keeps its contract meaning.
	h.spCall(t, http.MethodPost, "/v1/checks/dns", `{"name":"d","dns_domain":"","dns_record_type":"A"}`, http.StatusBadRequest)
}

// The reference Terraform provider may give dns_resolver as a bare IP address (v4 or v6, no
// port): it means port 53 and is answered back exactly as given, so a plan sees no change.
func TestRealClientDNSResolverBareIP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, ip := range []string{"1.1.1.1", "2606:4700:4700::1111", "::1"} {
		d := h.spCall(t, http.MethodPost, "/v1/checks/dns", `{"name":"d","dns_domain":"example.com","dns_record_type":"A","dns_resolver":"`+ip+`"}`, http.StatusCreated).Result()
		if d["dns_resolver"] != ip {
			t.Fatalf("create dns_resolver %q: answered %v", ip, d["dns_resolver"])
		}
		id := d["id"].(string)
		if got := h.spCall(t, http.MethodGet, "/v1/checks/dns/"+id, nil, http.StatusOK).Result()["dns_resolver"]; got != ip {
			t.Fatalf("GET dns_resolver %q: answered %v", ip, got)
		}
		if got := h.spCall(t, http.MethodPatch, "/v1/checks/dns/"+id, `{"dns_resolver":"`+ip+`","dns_record_type":"AAAA"}`, http.StatusOK).Result()["dns_resolver"]; got != ip {
			t.Fatalf("PATCH dns_resolver %q: answered %v", ip, got)
		}
	}
}

func TestRealClientTCPFamilyAny(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.spCall(t, http.MethodPost, "/v1/checks/tcp", `{"name":"t","tcp_hostname":"example.com","tcp_port":443,"tcp_ip_family":"Any"}`, http.StatusCreated)
	if r.Result()["tcp_ip_family"] != "Any" {
		t.Fatalf("create: %s", r.Raw)
	}
	id := r.Result()["id"].(string)
	if g := h.spCall(t, http.MethodGet, "/v1/checks/"+id, nil, http.StatusOK); g.Result()["tcp_ip_family"] != "Any" {
		t.Fatalf("get: %s", g.Raw)
	}
	h.spCall(t, http.MethodPatch, "/v1/checks/tcp/"+id, `{"tcp_ip_family":"IPv6"}`, http.StatusOK)
	if p := h.spCall(t, http.MethodPatch, "/v1/checks/tcp/"+id, `{"tcp_ip_family":"Any"}`, http.StatusOK); p.Result()["tcp_ip_family"] != "Any" {
		t.Fatalf("patch: %s", p.Raw)
	}
	h.spCall(t, http.MethodPatch, "/v1/checks/tcp/"+id, `{"tcp_ip_family":"any"}`, http.StatusBadRequest)
}

func TestRealClientComponentGroupsAlias(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "groupsalias")
	base := "/v1/status_pages/" + page + "/component_groups"
	g := h.spCall(t, http.MethodPost, base, map[string]any{"name": "Core"}, http.StatusCreated).Result()
	id := g["id"].(string)
	h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/groups/"+id, nil, http.StatusOK)
	if l := h.spCall(t, http.MethodGet, base, nil, http.StatusOK); len(l.Items()) != 1 {
		t.Fatalf("list: %s", l.Raw)
	}
	if p := h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"name": "Edge"}, http.StatusOK); p.Result()["name"] != "Edge" {
		t.Fatalf("patch: %s", p.Raw)
	}
	h.spCall(t, http.MethodGet, base+"/"+id, nil, http.StatusOK)
	h.spCall(t, http.MethodPut, base+"/sort-order", map[string]any{"group_ids": []string{id}}, http.StatusOK)
	h.spCall(t, http.MethodPut, base+"/"+id+"/sort-order", map[string]any{"component_ids": []string{}}, http.StatusOK)
	h.spCall(t, http.MethodDelete, base+"/"+id, nil, http.StatusOK)
	h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/groups/"+id, nil, http.StatusNotFound)
}

func TestRealClientMaintenancePatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "mpatch")
	db, cache := h.newComponent(t, page, "Database"), h.newComponent(t, page, "Cache")
	base := "/v1/status_pages/" + page + "/scheduled_maintenance"
	start := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	m := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Upgrade", "description": "first", "start_date": start,
		"duration_minutes": 30, "components_affected": []string{db}}, http.StatusCreated).Result()
	id := m["id"].(string)
	r := h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"title": "Upgrade", "description": "second",
		"components_affected": []string{cache}, "notifications": map[string]any{"an_hour_before": true, "at_end": false}}, http.StatusOK).Result()
	comps := r["components"].([]any)
	if len(comps) != 1 || comps[0].(map[string]any)["id"] != cache {
		t.Errorf("components %v, want only Cache", comps)
	}
	n := r["notifications"].(map[string]any)
	if n["an_hour_before"] != true || n["at_start"] != true || n["at_end"] != false {
		t.Errorf("notifications %v", n)
	}
	u := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/incidents/"+id+"/updates", nil, http.StatusOK)
	if items := u.Items(); len(items) != 1 || items[0]["description"] != "second" {
		t.Errorf("announcement: %s", u.Raw)
	}
	h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"components_affected": []string{"0192f7c4-8d3e-7a55-9b1e-3f5a2c7d9e01"}}, http.StatusBadRequest)
	h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"description": ""}, http.StatusBadRequest)
	h.spCall(t, http.MethodPatch, base+"/"+id, map[string]any{"notifications": map[string]any{"daily": true}}, http.StatusBadRequest)

	// An incident PATCH without impact stays a 400: the contract requires it.
	inc := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "Down", "description": "d",
		"status": "INVESTIGATING"}, http.StatusCreated).Result()["id"].(string)
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+page+"/incidents/"+inc, map[string]any{"title": "x"}, http.StatusBadRequest)
}

// Status-page incidents and scheduled maintenance answer with their current status and
// description, which the reference Terraform provider reads back after every apply.
func TestRealClientIncidentStatusDescription(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.newPage(t, "tfread")
	incidents := "/v1/status_pages/" + page + "/incidents"
	want := func(what string, got map[string]any, status, description string) {
		t.Helper()
		if got["status"] != status || got["description"] != description {
			t.Errorf("%s: status %v, description %v; want %s, %q", what, got["status"], got["description"], status, description)
		}
	}
	created := h.spCall(t, http.MethodPost, incidents, map[string]any{"title": "API errors", "description": "Looking into it",
		"status": "INVESTIGATING"}, http.StatusCreated).Result()
	want("incident create", created, "INVESTIGATING", "Looking into it")
	id := created["id"].(string)
	want("incident get", h.spCall(t, http.MethodGet, incidents+"/"+id, nil, http.StatusOK).Result(), "INVESTIGATING", "Looking into it")
	h.spCall(t, http.MethodPost, incidents+"/"+id+"/updates", map[string]any{"status": "MONITORING", "description": "A fix is out"}, http.StatusCreated)
	want("incident after an update", h.spCall(t, http.MethodGet, incidents+"/"+id, nil, http.StatusOK).Result(), "MONITORING", "A fix is out")
	want("incident patch", h.spCall(t, http.MethodPatch, incidents+"/"+id, map[string]any{"title": "API errors", "impact": "MAJOR_OUTAGE"},
		http.StatusOK).Result(), "MONITORING", "A fix is out")

	maint := "/v1/status_pages/" + page + "/scheduled_maintenance"
	start := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	m := h.spCall(t, http.MethodPost, maint, map[string]any{"title": "Upgrade", "description": "Database upgrade", "start_date": start,
		"duration_minutes": 30}, http.StatusCreated).Result()
	want("maintenance create", m, "SCHEDULED", "Database upgrade")
	mid := m["id"].(string)
	want("maintenance patch", h.spCall(t, http.MethodPatch, maint+"/"+mid, map[string]any{"description": "Database and cache upgrade"},
		http.StatusOK).Result(), "SCHEDULED", "Database and cache upgrade")
	want("maintenance get", h.spCall(t, http.MethodGet, maint+"/"+mid, nil, http.StatusOK).Result(), "SCHEDULED", "Database and cache upgrade")
}

func TestRealClientWindowStartTimeOfDay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	at := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC) // 00:00 in Berlin on March 11
	h.setNow(at)
	cases := []struct {
		tz, start, want string
	}{
		{"Europe/Berlin", "02:30", "2026-03-11T01:30:00.000Z"}, // later that (Berlin) day
		{"Europe/Berlin", "00:00", "2026-03-11T23:00:00.000Z"}, // now is past: tomorrow
		{"UTC", "22:15", "2026-03-11T22:15:00.000Z"},
		{"America/New_York", "19:05", "2026-03-10T23:05:00.000Z"}, // 19:00 in New York (EDT) now
		{"America/New_York", "18:59", "2026-03-11T22:59:00.000Z"},
	}
	for _, tc := range cases {
		r := h.spCall(t, http.MethodPost, "/v1/maintenance-windows", map[string]any{"name": "w", "start_date": tc.start,
			"duration_minutes": 30, "timezone": tc.tz, "days_of_week": []string{"MONDAY"}}, http.StatusCreated)
		if got := r.Result()["start_date"]; got != tc.want {
			t.Errorf("%s %s: start_date %v, want %s", tc.tz, tc.start, got, tc.want)
		}
	}
	id := h.spCall(t, http.MethodPost, "/v1/maintenance-windows", map[string]any{"name": "w", "start_date": "2026-01-05T22:30:00.000Z",
		"duration_minutes": 30, "timezone": "UTC", "days_of_week": []string{"MONDAY"}}, http.StatusCreated).Result()["id"].(string)
	if r := h.spCall(t, http.MethodPatch, "/v1/maintenance-windows/"+id, map[string]any{"start_date": "06:45", "timezone": "Asia/Tokyo"}, http.StatusOK); r.Result()["start_date"] != "2026-03-11T21:45:00.000Z" {
		t.Errorf("PATCH: %s", r.Raw)
	}
	for _, bad := range []string{"24:00", "7:30", "07:60", "07:30:00"} {
		h.spCall(t, http.MethodPost, "/v1/maintenance-windows", map[string]any{"name": "w", "start_date": bad,
			"duration_minutes": 30, "timezone": "UTC", "days_of_week": []string{"MONDAY"}}, http.StatusBadRequest)
	}
}
