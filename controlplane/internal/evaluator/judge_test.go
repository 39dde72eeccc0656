package evaluator

import (
	"testing"
	"time"
)

// TestVerdictDay: a verdict counts in the UTC date of its run's scheduled time, whatever the
// zone of the time it is given.
func TestVerdictDay(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("UTC+9", 9*3600)
	for _, tc := range []struct {
		name      string
		scheduled time.Time
		want      time.Time
	}{
		{"midday UTC", time.Date(2026, 3, 14, 12, 30, 0, 0, time.UTC), time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)},
		{"last nanosecond of the day", time.Date(2026, 3, 14, 23, 59, 59, 999999999, time.UTC), time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)},
		{"midnight", time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)},
		{"local date ahead of UTC", time.Date(2026, 3, 15, 8, 0, 0, 0, tokyo), time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := verdictDay(tc.scheduled); !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("verdictDay(%v) = %v, want %v", tc.scheduled, got, tc.want)
			}
		})
	}
}
