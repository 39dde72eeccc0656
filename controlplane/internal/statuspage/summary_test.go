package statuspage

import (
	"encoding/json"
	"testing"
	"time"
)

func TestStatusPageBuildSummary(t *testing.T) {
	t.Parallel()
	page := Page{ID: "p", Name: "Acme", Subdomain: "acme"}
	cases := []struct {
		name        string
		components  []Component
		active      []IncidentBase
		maintenance []ScheduledMaintenance
		want        string
	}{
		{"empty page", nil, nil, nil, "All Systems Operational"},
		{"worst component", []Component{{Status: Operational}, {Status: MajorOutage}}, nil, nil, "Major System Outage"},
		{"active incident impact", []Component{{Status: Operational}}, []IncidentBase{{Impact: DegradedPerformance}}, nil, "Partially Degraded Service"},
		{"scheduled, not started", nil, nil, []ScheduledMaintenance{{State: Scheduled}}, "All Systems Operational"},
		{"maintenance in progress", nil, nil, []ScheduledMaintenance{{State: InProgress}}, "Service Under Maintenance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := BuildSummary(page, tc.components, tc.active, tc.maintenance)
			if s.Status.Description != tc.want {
				t.Fatalf("description %q, want %q", s.Status.Description, tc.want)
			}
			if s.Components == nil || s.ActiveIncidents == nil || s.ScheduledMaintenance == nil || s.StatusPage.Subdomain != "acme" {
				t.Fatalf("summary lists must be arrays, never null: %+v", s)
			}
		})
	}
}

func TestStatusPageTimeFormat(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", 3600))
	b, err := json.Marshal(Time(ts))
	if err != nil || string(b) != `"2026-01-02T02:04:05.006Z"` {
		t.Fatalf("Time JSON %s (%v)", b, err)
	}
}
