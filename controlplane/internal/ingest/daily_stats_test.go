package ingest

import (
	"testing"
	"time"
)

// TestStatusPageDailyStats checks that every judged run is added to its check's daily counters
// (check_daily_stats, by the UTC day of the run) in the judging transaction: the status page's
// uptime bars read them.
func TestStatusPageDailyStats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 20, recovery: 20})
	a := h.connect("a1", "cloud:us-east-1")
	day1 := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	h.run(a, checkID, day1, true, "UP")
	h.run(a, checkID, day1.Add(10*time.Second), false, "VERIFYING")
	h.run(a, checkID, day1.Add(20*time.Second), true, "UP")
	h.run(a, checkID, day1.Add(70*time.Second), false, "VERIFYING") // 2026-03-02

	stats := func(day string) (runs, failed int) {
		t.Helper()
		runs = h.count(`SELECT coalesce(sum(runs), 0) FROM check_daily_stats WHERE check_id = $1 AND day = $2::date`, checkID, day)
		failed = h.count(`SELECT coalesce(sum(failed_runs), 0) FROM check_daily_stats WHERE check_id = $1 AND day = $2::date`, checkID, day)
		return runs, failed
	}
	if r, f := stats("2026-03-01"); r != 3 || f != 1 {
		t.Fatalf("2026-03-01: %d runs, %d failed; want 3 and 1", r, f)
	}
	if r, f := stats("2026-03-02"); r != 1 || f != 1 {
		t.Fatalf("2026-03-02: %d runs, %d failed; want 1 and 1", r, f)
	}
	if n := h.count(`SELECT count(*) FROM check_daily_stats WHERE org_id = $1`, h.org); n != 2 {
		t.Fatalf("%d counter rows, want 2", n)
	}
}
