package scheduler

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestPhaseSpreadsChecksOfOneInterval(t *testing.T) {
	t.Parallel()
	const n, buckets = 30000, 30
	interval := 30 * time.Second
	counts := make([]int, buckets)
	for range n {
		id := uuid.Must(uuid.NewV7()) // consecutive v7 ids share their leading bits
		ph := phase(id, interval)
		if ph < 0 || ph >= interval.Milliseconds() {
			t.Fatalf("phase %d outside [0, %d)", ph, interval.Milliseconds())
		}
		if again := phase(id, interval); again != ph {
			t.Fatalf("phase not deterministic: %d then %d", ph, again)
		}
		counts[ph/(interval.Milliseconds()/buckets)]++
	}
	mean := n / buckets
	for i, c := range counts {
		if c < mean*8/10 || c > mean*12/10 {
			t.Errorf("second %d of the interval has %d first runs, want %d ± 20%%: %v", i, c, mean, counts)
		}
	}
}

func TestGrid(t *testing.T) {
	t.Parallel()
	g := grid{base: 7, step: 10, min: noTime}
	c := confirmGrid(1000, 20*time.Millisecond) // points 1020, 1040, ...
	cases := []struct {
		name string
		got  int64
		want int64
	}{
		{"after a point is the next point", g.after(17), 27},
		{"after a time between points", g.after(20), 27},
		{"after a negative time", g.after(-5), -3},
		{"first due without history is the next point from now", g.firstDue(noTime, 20), 27},
		{"a point exactly now is due now", g.firstDue(noTime, 17), 17},
		{"a missed point is due (late)", g.firstDue(5, 20), 17},
		{"of several missed points, the newest only", g.firstDue(5, 35), 27},
		{"a point already done is not due again", g.firstDue(17, 20), 27},
		{"confirmation grid starts one cadence after its anchor", c.after(0), 1020},
		{"confirmation grid steps by the cadence", c.after(1020), 1040},
		{"confirmation catch-up from an old anchor", c.firstDue(noTime, 1100), 1100},
		{"no confirmation point before the first one", c.atOrBefore(1010), noTime},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestConfirmCadence(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name                    string
		interval, period, floor time.Duration
		want                    time.Duration
	}{
		{"defaults: 60s interval, 60s confirmation", 60 * s, 60 * s, 10 * s, 20 * s},
		{"recovery 180s on a 60s interval runs at the interval", 60 * s, 180 * s, 10 * s, 60 * s},
		{"never slower than the interval", 30 * s, 600 * s, 10 * s, 30 * s},
		{"short period hits the floor", 300 * s, 15 * s, 10 * s, 10 * s},
		{"period 0 (DOWN at once) still has the floor", 300 * s, 0, 10 * s, 10 * s},
		{"an interval under the floor wins", 2 * s, 60 * s, 10 * s, 2 * s},
	}
	for _, tc := range cases {
		if got := confirmCadence(tc.interval, tc.period, tc.floor); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJobDeadline(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name             string
		spacing, timeout time.Duration
		attempts         uint32
		want             time.Duration
	}{
		{"30s interval, 10s timeout, 2 attempts: the next run", 30 * s, 10 * s, 2, 30 * s},
		{"1h interval: the attempt budget", time.Hour, 10 * s, 2, 30 * s},
		{"browser, one 60s attempt", 10 * time.Minute, 60 * s, 1, 70 * s},
		{"1s interval", s, 10 * s, 2, s},
	}
	for _, tc := range cases {
		if got := jobDeadline(1_000_000, tc.spacing, tc.timeout, tc.attempts) - 1_000_000; got != tc.want.Milliseconds() {
			t.Errorf("%s: got %dms, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJobIDIsADeterministicUUIDv7(t *testing.T) {
	t.Parallel()
	check := uuid.Must(uuid.NewV7())
	due := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	id := jobID(check, due)
	if id.Version() != 7 || id.Variant() != uuid.RFC4122 {
		t.Fatalf("job id %s: version %d variant %v, want 7 RFC 4122", id, id.Version(), id.Variant())
	}
	if sec, nsec := id.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != due {
		t.Errorf("job id timestamp %v, want the due time %v", time.Unix(sec, nsec).UTC(), time.UnixMilli(due).UTC())
	}
	if jobID(check, due) != id {
		t.Error("same check and due time gave another id")
	}
	if jobID(check, due+1) == id || jobID(uuid.Must(uuid.NewV7()), due) == id {
		t.Error("another run got the same id")
	}
}
