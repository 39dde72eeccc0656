// Package recurrence is the model of a maintenance window's schedule (api/openapi/maintenance-windows.yaml): a window
// recurs on some weekdays, starting each time at the time of day of its start date in its own
// time zone, and lasts a number of minutes. It is pure — no I/O, no clock of its own — and a
// leaf: the store answers "is this check in maintenance at t" with it, the API validates with
// it.
package recurrence

import (
	"fmt"
	"strings"
	"time"
)

// MaxDurationMinutes is the longest window: one week. A longer one would always be active.
const MaxDurationMinutes = 7 * 24 * 60

// Window is one recurring maintenance window.
type Window struct {
	// Start is the first occurrence's start. Its wall-clock time of day in Location is the daily
	// start; no occurrence starts on a calendar day (in Location) before Start's.
	Start time.Time
	// DurationMinutes is the length of each occurrence in elapsed minutes (1..MaxDurationMinutes).
	DurationMinutes int
	// Location is the window's IANA time zone.
	Location *time.Location
	// Days are the weekdays on which an occurrence starts (an occurrence crossing midnight
	// belongs to the day it started on).
	Days []time.Weekday
	// Enabled is false for a DISABLED window, which is never active.
	Enabled bool
}

// Active reports whether now falls inside an occurrence of w: start ≤ now < start + duration.
//
// Daylight saving time: each occurrence starts at the start's wall-clock time on its own day
// (so 02:00 stays 02:00 local across a change); a start time that does not exist on a day
// (spring forward) is normalized the way time.Date does, i.e. moved forward by the gap. The
// duration is elapsed time, so a 60-minute window is 60 real minutes even across a change.
func Active(w Window, now time.Time) bool {
	_, ok := Current(w, now)
	return ok
}

// Current returns the occurrence of w that contains now, as its [start, end) bounds' end; ok is
// false when none does.
func Current(w Window, now time.Time) (end time.Time, ok bool) {
	if !w.Enabled || w.DurationMinutes <= 0 || w.Location == nil || len(w.Days) == 0 || now.Before(w.Start) {
		return time.Time{}, false
	}
	loc := w.Location
	first := w.Start.In(loc)
	firstDay := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
	dur := time.Duration(w.DurationMinutes) * time.Minute
	local := now.In(loc)
	// Occurrences that started up to ⌈duration/day⌉+1 days before today can still be running.
	back := w.DurationMinutes/(24*60) + 2
	for i := 0; i <= back; i++ {
		y, m, d := local.Date()
		day := time.Date(y, m, d-i, 0, 0, 0, 0, time.UTC) // calendar arithmetic without zones
		if day.Before(firstDay) || !hasDay(w.Days, day.Weekday()) {
			continue
		}
		start := wallClock(day, first.Hour(), first.Minute(), first.Second(), loc)
		if end := start.Add(dur); !now.Before(start) && now.Before(end) {
			return end, true
		}
	}
	return time.Time{}, false
}

// wallClock is hh:mm:ss local time on the calendar day day (given in UTC) in loc. A time that
// does not exist that day (a spring-forward gap) is read with the UTC offset in force before the
// gap, so it lands as far after the gap's end as it was after its start (02:30 → 03:30).
func wallClock(day time.Time, hh, mm, ss int, loc *time.Location) time.Time {
	t := time.Date(day.Year(), day.Month(), day.Day(), hh, mm, ss, 0, loc)
	if t.Hour() == hh && t.Minute() == mm && t.Second() == ss {
		return t
	}
	_, before := t.Add(-6 * time.Hour).Zone()
	return time.Date(day.Year(), day.Month(), day.Day(), hh, mm, ss, 0, time.UTC).Add(-time.Duration(before) * time.Second).In(loc)
}

func hasDay(days []time.Weekday, d time.Weekday) bool {
	for _, x := range days {
		if x == d {
			return true
		}
	}
	return false
}

// weekdayNames are the API's day names, SUNDAY first (time.Weekday order).
var weekdayNames = [7]string{"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}

// ParseWeekday reads an API day name (SUNDAY..SATURDAY).
func ParseWeekday(s string) (time.Weekday, error) {
	for i, n := range weekdayNames {
		if n == s {
			return time.Weekday(i), nil
		}
	}
	return 0, fmt.Errorf("must be one of %s", strings.Join(weekdayNames[:], ", "))
}

// WeekdayName is the API's name of d.
func WeekdayName(d time.Weekday) string { return weekdayNames[d%7] }
