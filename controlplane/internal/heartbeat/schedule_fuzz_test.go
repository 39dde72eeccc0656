package heartbeat

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseCron parses arbitrary cron expressions and time zones: an error or a schedule,
// never a panic, and a schedule it accepts always fires after any instant it is asked about.
func FuzzParseCron(f *testing.F) {
	for _, s := range []struct{ expr, tz string }{
		{"0 * * * *", ""}, {"30 2 * * *", "Europe/Berlin"}, {"@daily", "America/New_York"}, {"*/5 9-17 * * MON-FRI", "UTC"},
		{"0 0 31 2 *", ""}, {"CRON_TZ=UTC 0 * * * *", ""}, {"@every 1h", ""}, {"61 * * * *", ""}, {"* * * * * *", ""},
		{"0 0 29 2 *", "Pacific/Apia"}, {"", ""}, {"0 * * * *", "Local"}, {"0 * * * *", "../../etc/passwd"},
	} {
		f.Add(s.expr, s.tz, int64(0))
	}
	// The property: for any accepted expression and any instant within ±100 years of 2000,
	// Next is the earliest firing strictly after that instant — later than it, on a whole
	// minute, and with no firing in between (Next from any earlier point up to it gives the
	// same time). Next may find nothing (zero) only for a schedule that restricts the day of
	// the month (Feb 29, the 31st), whose firings can lie beyond cron's search horizon; any
	// other schedule fires at least once a year, so a zero there — or a Next that always
	// answers zero — fails.
	f.Fuzz(func(t *testing.T, expr, tz string, at int64) {
		s, err := ParseCron(expr, tz)
		if err != nil {
			return
		}
		base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		after := base.Add(time.Duration(at%(100*365*24)) * time.Hour)
		next := s.Next(after)
		if next.IsZero() {
			if !restrictsDayOfMonth(expr) {
				t.Fatalf("ParseCron(%q, %q).Next(%s) found no firing, but the schedule fires every year", expr, tz, after)
			}
			return
		}
		if !next.After(after) {
			t.Fatalf("ParseCron(%q, %q).Next(%s) = %s, not after it", expr, tz, after, next)
		}
		if next.Second() != 0 || next.Nanosecond() != 0 {
			t.Fatalf("ParseCron(%q, %q).Next(%s) = %s, not on a whole minute", expr, tz, after, next)
		}
		for _, from := range []time.Time{next.Add(-time.Nanosecond), after.Add(next.Sub(after) / 2)} {
			if got := s.Next(from); !got.Equal(next) {
				t.Fatalf("ParseCron(%q, %q): Next(%s) = %s but Next(%s) = %s: %s is not the earliest firing",
					expr, tz, after, next, from, got, next)
			}
		}
	})
}

// restrictsDayOfMonth reports whether a five-field expression names days of the month (its
// third field is not * or ?); the macros (@daily, @monthly, …) fire at least once a year.
func restrictsDayOfMonth(expr string) bool {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return false
	}
	return fields[2] != "*" && fields[2] != "?"
}
