package statuspage

import "testing"

func TestStatusPageOverall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		components []string
		impacts    []string
		inProgress bool
		want       string
	}{
		{"no components", nil, nil, false, AllSystemsOperational},
		{"all operational", []string{Operational, NoImpact}, nil, false, AllSystemsOperational},
		{"degraded", []string{Operational, DegradedPerformance}, nil, false, PartiallyDegradedService},
		{"partial outage", []string{DegradedPerformance, PartialOutage}, nil, false, MinorServiceOutage},
		{"major outage wins", []string{PartialOutage, MajorOutage, Maintenance}, nil, false, MajorSystemOutage},
		{"maintenance component", []string{Operational, Maintenance}, nil, false, ServiceUnderMaintenance},
		{"outage outranks maintenance", []string{Maintenance, DegradedPerformance}, nil, false, PartiallyDegradedService},
		{"active incident impact", []string{Operational}, []string{PartialOutage}, false, MinorServiceOutage},
		{"no-impact incident", []string{Operational}, []string{NoImpact}, false, AllSystemsOperational},
		{"maintenance in progress", []string{Operational}, nil, true, ServiceUnderMaintenance},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Overall(tc.components, tc.impacts, tc.inProgress); got != tc.want {
				t.Fatalf("Overall = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestStatusPageDescription(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		AllSystemsOperational: "All Systems Operational", PartiallyDegradedService: "Partially Degraded Service",
		MinorServiceOutage: "Minor Service Outage", MajorSystemOutage: "Major System Outage", ServiceUnderMaintenance: "Service Under Maintenance",
	}
	for _, s := range PageStatuses {
		if got := Description(s); got != want[s] {
			t.Errorf("Description(%s) = %q, want %q", s, got, want[s])
		}
	}
}

func TestComponentFromMonitors(t *testing.T) {
	t.Parallel()
	up, down := Monitor{State: "UP"}, Monitor{State: "DOWN"}
	cases := []struct {
		name string
		ms   []Monitor
		want string
	}{
		{"no monitors", nil, Operational},
		{"pending gives no signal", []Monitor{{State: "PENDING"}}, Operational},
		{"up", []Monitor{up}, Operational},
		{"one down of one", []Monitor{down}, MajorOutage},
		{"all down", []Monitor{down, down}, MajorOutage},
		{"some down", []Monitor{down, up}, PartialOutage},
		{"verifying", []Monitor{up, {State: "VERIFYING"}}, DegradedPerformance},
		{"recovering", []Monitor{{State: "RECOVERING"}}, DegradedPerformance},
		{"regionally degraded", []Monitor{up, {State: "DEGRADED"}}, DegradedPerformance},
		{"down outranks degraded", []Monitor{down, {State: "DEGRADED"}}, PartialOutage},
		{"down outranks verifying", []Monitor{down, {State: "VERIFYING"}}, PartialOutage},
		{"paused down is ignored", []Monitor{{State: "DOWN", Paused: true}, up}, Operational},
		{"only paused", []Monitor{{State: "DOWN", Paused: true}}, Operational},
		{"paused ignored, rest down", []Monitor{{State: "UP", Paused: true}, down}, MajorOutage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromMonitors(tc.ms); got != tc.want {
				t.Fatalf("FromMonitors = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestIncidentImpactOf(t *testing.T) {
	t.Parallel()
	if got := ImpactOf(nil); got != NoImpact {
		t.Fatalf("ImpactOf(nil) = %s", got)
	}
	if got := ImpactOf([]string{Operational}); got != NoImpact {
		t.Fatalf("ImpactOf(OPERATIONAL) = %s", got)
	}
	if got := ImpactOf([]string{DegradedPerformance, MajorOutage}); got != MajorOutage {
		t.Fatalf("ImpactOf = %s", got)
	}
}
