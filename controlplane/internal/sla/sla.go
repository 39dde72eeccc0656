// Package sla computes availability reports (docs/detection.md "SLA reports") from a check's
// incident intervals and maintenance windows, never from raw results. It is pure: the store
// reads incidents, windows and daily rollups; this package does the interval arithmetic.
//
// Over a period [From, To):
//
//   - the observed time is the period clipped to when the check existed and to now
//     ([max(From, created), min(To, now))), minus every occurrence of the check's enabled
//     maintenance windows (excluded, and stated as MaintenanceMinutes);
//   - downtime is the union of the check's incidents (an open one lasts until now), clipped to
//     the observed time;
//   - availability = 1 − downtime / observed time, as a percentage rounded to four decimals
//     (100 when nothing was observed);
//   - an incident counts when it has downtime in the observed time; its outage is that
//     downtime; MTTR is the mean outage of the counted incidents and the longest outage their
//     maximum.
package sla

import (
	"math"
	"slices"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
)

// MaxRange is the longest period a report covers: 13 months (397 days, the longest 13
// consecutive months).
const MaxRange = 397 * 24 * time.Hour

// Interval is [Start, End).
type Interval struct{ Start, End time.Time }

// Input is what a check's report is computed from.
type Input struct {
	From, To  time.Time
	Now       time.Time
	CreatedAt time.Time
	// Incidents are the check's incidents overlapping the period; End is nil while one is open.
	Incidents []Incident
	// Maintenance are the occurrences of the check's maintenance windows (Occurrences) over
	// at least the period, in any order; a report of many checks computes each window's once.
	Maintenance []Interval
}

// Incident is one check incident.
type Incident struct {
	Start time.Time
	End   *time.Time
}

// Report is a check's availability over a period. Durations are exact; the JSON and CSV
// renderings give minutes.
type Report struct {
	Observed     time.Duration // the period's observed time (maintenance excluded)
	Maintenance  time.Duration // maintenance excluded from the period
	Downtime     time.Duration
	Incidents    int
	MTTR         time.Duration // 0 without incidents
	Longest      time.Duration
	Availability float64 // percent, four decimals
}

// Compute is the report of one check.
func Compute(in Input) Report {
	start, end := in.From, in.To
	if in.CreatedAt.After(start) {
		start = in.CreatedAt
	}
	if !in.Now.IsZero() && in.Now.Before(end) {
		end = in.Now
	}
	var r Report
	if !start.Before(end) {
		r.Availability = 100
		return r
	}
	maint := clip(in.Maintenance, start, end)
	r.Maintenance = total(maint)
	r.Observed = end.Sub(start) - r.Maintenance
	var outages []Interval
	for _, inc := range in.Incidents {
		iEnd := end
		if inc.End != nil && inc.End.Before(iEnd) {
			iEnd = *inc.End
		}
		iStart := inc.Start
		if iStart.Before(start) {
			iStart = start
		}
		if !iStart.Before(iEnd) {
			continue
		}
		d := Interval{iStart, iEnd}
		out := total(subtract([]Interval{d}, maint))
		if out <= 0 {
			continue
		}
		r.Incidents++
		r.Longest = max(r.Longest, out)
		outages = append(outages, d)
	}
	r.Downtime = total(subtract(union(outages), maint))
	if r.Incidents > 0 {
		var sum time.Duration
		for _, d := range outages {
			sum += total(subtract([]Interval{d}, maint))
		}
		r.MTTR = sum / time.Duration(r.Incidents)
	}
	r.Availability = availability(r.Downtime, r.Observed)
	return r
}

// Total is the aggregate of several checks' reports: their observed time, maintenance,
// downtime and incidents add up; availability is 1 − Σ downtime / Σ observed; MTTR is the mean
// outage over all their incidents, the longest outage the longest of any.
func Total(rs []Report) Report {
	var t Report
	var outage time.Duration
	for _, r := range rs {
		t.Observed += r.Observed
		t.Maintenance += r.Maintenance
		t.Downtime += r.Downtime
		t.Incidents += r.Incidents
		outage += r.MTTR * time.Duration(r.Incidents)
		t.Longest = max(t.Longest, r.Longest)
	}
	if t.Incidents > 0 {
		t.MTTR = outage / time.Duration(t.Incidents)
	}
	t.Availability = availability(t.Downtime, t.Observed)
	return t
}

func availability(down, observed time.Duration) float64 {
	if observed <= 0 {
		return 100
	}
	return math.Round((1-float64(down)/float64(observed))*100*1e4) / 1e4
}

// Occurrences are the occurrences of the window that overlap [start, end).
func Occurrences(w recurrence.Window, start, end time.Time) []Interval {
	occ := recurrence.Occurrences(w, start, end)
	out := make([]Interval, len(occ))
	for i, o := range occ {
		out[i] = Interval{o.Start, o.End}
	}
	return out
}

// clip is the intervals clipped to [start, end), merged.
func clip(in []Interval, start, end time.Time) []Interval {
	var out []Interval
	for _, iv := range in {
		s, e := later(iv.Start, start), earlier(iv.End, end)
		if s.Before(e) {
			out = append(out, Interval{s, e})
		}
	}
	return union(out)
}

// union merges overlapping or touching intervals, sorted by start.
func union(in []Interval) []Interval {
	if len(in) == 0 {
		return nil
	}
	s := slices.Clone(in)
	slices.SortFunc(s, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	out := []Interval{s[0]}
	for _, iv := range s[1:] {
		last := &out[len(out)-1]
		if !iv.Start.After(last.End) {
			if iv.End.After(last.End) {
				last.End = iv.End
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// subtract is a minus the merged, sorted intervals b.
func subtract(a, b []Interval) []Interval {
	var out []Interval
	for _, iv := range a {
		cur := iv.Start
		for _, x := range b {
			if !x.End.After(cur) || !x.Start.Before(iv.End) {
				continue
			}
			if x.Start.After(cur) {
				out = append(out, Interval{cur, x.Start})
			}
			if x.End.After(cur) {
				cur = x.End
			}
		}
		if cur.Before(iv.End) {
			out = append(out, Interval{cur, iv.End})
		}
	}
	return out
}

func total(ivs []Interval) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		d += iv.End.Sub(iv.Start)
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
