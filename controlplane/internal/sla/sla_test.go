package sla

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
)

// bruteForce computes the report minute by minute: each minute of the period is observed
// unless the check did not exist yet, it is in the future, or a window is active
// (recurrence.Active, independent of Occurrences); an observed minute is down when an incident
// covers it.
func bruteForce(in Input, windows []recurrence.Window) Report {
	var r Report
	perIncident := make([]time.Duration, len(in.Incidents))
	for m := in.From; m.Before(in.To); m = m.Add(time.Minute) {
		if m.Before(in.CreatedAt) || !m.Before(in.Now) {
			continue
		}
		inMaint := false
		for _, w := range windows {
			if recurrence.Active(w, m) {
				inMaint = true
			}
		}
		if inMaint {
			r.Maintenance += time.Minute
			continue
		}
		r.Observed += time.Minute
		down := false
		for i, inc := range in.Incidents {
			if !m.Before(inc.Start) && (inc.End == nil || m.Before(*inc.End)) {
				down = true
				perIncident[i] += time.Minute
			}
		}
		if down {
			r.Downtime += time.Minute
		}
	}
	var sum time.Duration
	for _, d := range perIncident {
		if d > 0 {
			r.Incidents++
			sum += d
			r.Longest = max(r.Longest, d)
		}
	}
	if r.Incidents > 0 {
		r.MTTR = sum / time.Duration(r.Incidents)
	}
	r.Availability = availability(r.Downtime, r.Observed)
	return r
}

// history generates a check's incidents and windows over [from, to): minute-aligned incidents
// (some overlapping, one possibly open), and up to three windows in zones with daylight saving
// time.
func history(rng *rand.Rand, from, to time.Time) ([]Incident, []recurrence.Window) {
	span := int(to.Sub(from) / time.Minute)
	var incs []Incident
	for range rng.IntN(12) {
		s := from.Add(time.Duration(rng.IntN(span+600)-300) * time.Minute)
		var end *time.Time
		if rng.IntN(10) > 0 {
			e := s.Add(time.Duration(1+rng.IntN(3000)) * time.Minute)
			end = &e
		}
		incs = append(incs, Incident{Start: s, End: end})
	}
	zones := []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"}
	var ws []recurrence.Window
	for range rng.IntN(4) {
		loc, err := time.LoadLocation(zones[rng.IntN(len(zones))])
		if err != nil {
			panic(err)
		}
		start := from.Add(time.Duration(rng.IntN(span)-2000) * time.Minute).In(loc)
		var days []time.Weekday
		for d := range 7 {
			if rng.IntN(2) == 0 {
				days = append(days, time.Weekday(d))
			}
		}
		ws = append(ws, recurrence.Window{Start: start, DurationMinutes: 1 + rng.IntN(300), Location: loc, Days: days,
			Enabled: rng.IntN(6) > 0})
	}
	return incs, ws
}

// TestComputeMatchesBruteForce compares Compute with the minute-by-minute computation over
// generated histories whose periods cross month ends and the 2026 daylight-saving changes of
// Europe, the United States and Australia.
func TestComputeMatchesBruteForce(t *testing.T) {
	t.Parallel()
	periods := []Interval{
		{time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC)},     // US and EU spring forward, AU falls back, Mar→Apr
		{time.Date(2026, 10, 20, 7, 0, 0, 0, time.UTC), time.Date(2026, 11, 4, 13, 0, 0, 0, time.UTC)}, // EU and US fall back, Oct→Nov
		{time.Date(2026, 9, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)},   // AU springs forward
		{time.Date(2026, 1, 30, 22, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)},   // January, February
	}
	for i, p := range periods {
		for seed := range 25 {
			t.Run(fmt.Sprintf("period%d/seed%d", i, seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(i), uint64(seed)))
				incs, ws := history(rng, p.Start, p.End)
				span := p.End.Sub(p.Start)
				var maint []Interval
				for _, w := range ws {
					maint = append(maint, Occurrences(w, p.Start, p.End)...)
				}
				in := Input{From: p.Start, To: p.End, Incidents: incs, Maintenance: maint,
					CreatedAt: p.Start.Add(time.Duration(rng.IntN(3)-1) * span / 4).Truncate(time.Minute),
					Now:       p.End.Add(time.Duration(rng.IntN(3)-1) * span / 5).Truncate(time.Minute)}
				got, want := Compute(in), bruteForce(in, ws)
				if got != want {
					t.Errorf("Compute = %+v\nbrute force = %+v", got, want)
				}
			})
		}
	}
}

// TestTotal: the aggregate adds observed and down time, so availability weighs each check by
// its observed time.
func TestTotal(t *testing.T) {
	t.Parallel()
	a := Report{Observed: 100 * time.Minute, Downtime: 10 * time.Minute, Incidents: 2, MTTR: 5 * time.Minute, Longest: 6 * time.Minute}
	b := Report{Observed: 300 * time.Minute, Downtime: 2 * time.Minute, Incidents: 1, MTTR: 2 * time.Minute, Longest: 2 * time.Minute}
	got := Total([]Report{a, b})
	want := Report{Observed: 400 * time.Minute, Downtime: 12 * time.Minute, Incidents: 3, MTTR: 4 * time.Minute,
		Longest: 6 * time.Minute, Availability: 97}
	if got != want {
		t.Errorf("Total = %+v, want %+v", got, want)
	}
	if e := Total(nil); e.Availability != 100 || math.IsNaN(e.Availability) {
		t.Errorf("Total(nil) availability = %v, want 100", e.Availability)
	}
}
