package certwatch

import (
	"slices"
	"testing"
	"time"
)

// TestDecide walks the thresholds of one certificate: what each sighting announces and
// records, given what was announced before.
func TestDecide(t *testing.T) {
	t.Parallel()
	notAfter := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	def := []int{14, 7, 1}
	cases := []struct {
		name       string
		left       time.Duration
		thresholds []int
		sent       []int
		announce   int // -1: nothing
		record     []int
	}{
		{"far from expiry", 30 * day, def, nil, -1, nil},
		{"just outside 14 days", 14*day + time.Second, def, nil, -1, nil},
		{"exactly 14 days", 14 * day, def, nil, 14, []int{14}},
		{"10 days", 10 * day, def, nil, 14, []int{14}},
		{"10 days, 14 already sent", 10 * day, def, []int{14}, -1, nil},
		{"6 days, 14 sent", 6 * day, def, []int{14}, 7, []int{7}},
		{"first seen 3 days out: the tightest only", 3 * day, def, nil, 7, []int{14, 7}},
		{"first seen 12 hours out", 12 * time.Hour, def, nil, 1, []int{14, 7, 1}},
		{"12 hours, everything sent", 12 * time.Hour, def, []int{14, 7, 1}, -1, nil},
		{"expired", -time.Hour, def, []int{14, 7, 1}, 0, []int{0}},
		{"expired, never warned", -3 * day, def, nil, 0, []int{0}},
		{"expired, already said", -time.Hour, def, []int{14, 7, 1, 0}, -1, nil},
		{"alerts off", -time.Hour, []int{}, nil, -1, nil},
		{"alerts off before expiry", 2 * day, nil, nil, -1, nil},
		{"a wider threshold added after a tighter one was sent", 5 * day, []int{30, 7}, []int{7}, -1, []int{30}},
		{"unordered thresholds", 20 * day, []int{7, 30, 21}, nil, 21, []int{30, 21}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(notAfter, notAfter.Add(-tc.left), tc.thresholds, tc.sent)
			got := -1
			if d.Announces {
				got = d.Announce
			}
			if got != tc.announce || !slices.Equal(d.Record, tc.record) {
				t.Errorf("announce %d, record %v; want %d, %v", got, d.Record, tc.announce, tc.record)
			}
			if d.Announces && !slices.Contains(d.Record, d.Announce) {
				t.Errorf("announces %d without recording it", d.Announce)
			}
		})
	}
}

func TestDaysLeft(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left time.Duration
		want int
	}{{10*24*time.Hour + time.Hour, 10}, {23 * time.Hour, 0}, {-time.Hour, -1}, {-49 * time.Hour, -3}} {
		if got := DaysLeft(at.Add(tc.left), at); got != tc.want {
			t.Errorf("DaysLeft(%s) = %d, want %d", tc.left, got, tc.want)
		}
	}
}
