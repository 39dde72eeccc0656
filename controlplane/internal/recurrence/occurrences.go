package recurrence

import "time"

// Occurrence is one occurrence of a window: [Start, End).
type Occurrence struct{ Start, End time.Time }

// Occurrences returns the occurrences of w that overlap [from, to), in order, unclipped: the
// intervals Active is true in (SLA reports exclude them). Occurrences follow Current's rules
// for daylight saving time.
func Occurrences(w Window, from, to time.Time) []Occurrence {
	if !w.Enabled || w.DurationMinutes <= 0 || w.Location == nil || len(w.Days) == 0 || !from.Before(to) {
		return nil
	}
	loc := w.Location
	first := w.Start.In(loc)
	firstDay := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
	dur := time.Duration(w.DurationMinutes) * time.Minute
	// From the day an occurrence overlapping from could have started, to the last day of to.
	f := from.Add(-dur).In(loc)
	day := time.Date(f.Year(), f.Month(), f.Day()-1, 0, 0, 0, 0, time.UTC)
	l := to.In(loc)
	last := time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, time.UTC)
	var out []Occurrence
	for ; !day.After(last); day = day.AddDate(0, 0, 1) {
		if day.Before(firstDay) || !hasDay(w.Days, day.Weekday()) {
			continue
		}
		start := wallClock(day, first.Hour(), first.Minute(), first.Second(), loc)
		end := start.Add(dur)
		if start.Before(to) && end.After(from) && !start.Before(w.Start) {
			out = append(out, Occurrence{start, end})
		}
	}
	return out
}
