package recurrence

import (
	"testing"
	"time"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestActive(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	berlin := mustLoc(t, "Europe/Berlin")
	at := func(loc *time.Location, y int, m time.Month, d, hh, mm int) time.Time {
		return time.Date(y, m, d, hh, mm, 0, 0, loc)
	}
	// 2026-01-05 is a Monday.
	weekday := Window{Start: at(ny, 2026, 1, 5, 9, 0), DurationMinutes: 60, Location: ny,
		Days: []time.Weekday{time.Monday, time.Wednesday}, Enabled: true}
	overnight := Window{Start: at(ny, 2026, 1, 5, 23, 0), DurationMinutes: 120, Location: ny,
		Days: []time.Weekday{time.Friday}, Enabled: true}
	// 2026-03-08: New York springs forward at 02:00 → 03:00; 2026-11-01 falls back at 02:00 → 01:00.
	dstNY := Window{Start: at(ny, 2026, 1, 4, 1, 30), DurationMinutes: 60, Location: ny,
		Days: []time.Weekday{time.Sunday}, Enabled: true}
	gap := Window{Start: at(ny, 2026, 1, 4, 2, 30), DurationMinutes: 30, Location: ny,
		Days: []time.Weekday{time.Sunday}, Enabled: true}
	// 2026-03-29: Berlin springs forward at 02:00 → 03:00.
	dstBerlin := Window{Start: at(berlin, 2026, 1, 1, 9, 0), DurationMinutes: 30, Location: berlin,
		Days: []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}, Enabled: true}
	disabled := weekday
	disabled.Enabled = false

	cases := []struct {
		name string
		w    Window
		now  time.Time
		want bool
	}{
		{"start is inclusive", weekday, at(ny, 2026, 1, 5, 9, 0), true},
		{"inside", weekday, at(ny, 2026, 1, 5, 9, 59), true},
		{"end is exclusive", weekday, at(ny, 2026, 1, 5, 10, 0), false},
		{"before start time", weekday, at(ny, 2026, 1, 5, 8, 59), false},
		{"other listed weekday", weekday, at(ny, 2026, 1, 7, 9, 30), true},
		{"unlisted weekday", weekday, at(ny, 2026, 1, 6, 9, 30), false},
		{"same instant in UTC", weekday, time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC), true},
		{"before the start date", weekday, at(ny, 2025, 12, 29, 9, 30), false},
		{"disabled", disabled, at(ny, 2026, 1, 5, 9, 30), false},
		{"crossing midnight, before midnight", overnight, at(ny, 2026, 1, 9, 23, 30), true},
		{"crossing midnight, after midnight (Saturday)", overnight, at(ny, 2026, 1, 10, 0, 59), true},
		{"crossing midnight, ended", overnight, at(ny, 2026, 1, 10, 1, 0), false},
		{"crossing midnight, Saturday night is not a start day", overnight, at(ny, 2026, 1, 10, 23, 30), false},
		{"DST: same wall clock before the change", dstNY, at(ny, 2026, 3, 1, 1, 45), true},
		{"DST: spring forward, 01:30 EST + 60 real minutes ends 03:30 EDT", dstNY, time.Date(2026, 3, 8, 7, 15, 0, 0, time.UTC), true},
		{"DST: spring forward, 03:30 EDT is the end", dstNY, at(ny, 2026, 3, 8, 3, 30), false},
		{"DST: same wall clock after the change", dstNY, at(ny, 2026, 3, 15, 1, 45), true},
		{"DST: UTC hour shifted after the change", dstNY, time.Date(2026, 3, 15, 6, 45, 0, 0, time.UTC), false},
		{"DST: nonexistent 02:30 moves to 03:30", gap, at(ny, 2026, 3, 8, 3, 45), true},
		{"DST: nonexistent 02:30, before it", gap, at(ny, 2026, 3, 8, 3, 15), false},
		{"DST: fall back uses the first 01:30", dstNY, time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC), true},
		{"DST: Berlin 09:00 CET", dstBerlin, time.Date(2026, 3, 28, 8, 15, 0, 0, time.UTC), true},
		{"DST: Berlin 09:00 CEST", dstBerlin, time.Date(2026, 3, 29, 7, 15, 0, 0, time.UTC), true},
		{"DST: Berlin 09:00 CEST, an hour later in UTC is outside", dstBerlin, time.Date(2026, 3, 29, 8, 15, 0, 0, time.UTC), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Active(tc.w, tc.now); got != tc.want {
				t.Fatalf("Active at %s = %v, want %v", tc.now.In(tc.w.Location), got, tc.want)
			}
		})
	}
}

func TestLongWindowSpansDays(t *testing.T) {
	t.Parallel()
	w := Window{Start: time.Date(2026, 1, 5, 22, 0, 0, 0, time.UTC), DurationMinutes: 3 * 24 * 60, Location: time.UTC,
		Days: []time.Weekday{time.Monday}, Enabled: true}
	for _, c := range []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2026, 1, 8, 21, 59, 0, 0, time.UTC), true},
		{time.Date(2026, 1, 8, 22, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 1, 12, 21, 59, 0, 0, time.UTC), false},
		{time.Date(2026, 1, 14, 12, 0, 0, 0, time.UTC), true},
	} {
		if got := Active(w, c.now); got != c.want {
			t.Errorf("Active at %s = %v, want %v", c.now, got, c.want)
		}
	}
}

func TestParseWeekday(t *testing.T) {
	t.Parallel()
	for i := time.Sunday; i <= time.Saturday; i++ {
		d, err := ParseWeekday(WeekdayName(i))
		if err != nil || d != i {
			t.Fatalf("round trip of %v: %v %v", i, d, err)
		}
	}
	if _, err := ParseWeekday("monday"); err == nil {
		t.Fatal("lower-case day accepted")
	}
}
