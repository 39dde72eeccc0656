package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestCatchUpAfterDowntime: the control plane is down for more than three intervals of its
// checks; when it is back, each check runs its newest missed run once — not every missed run
// (a burst), and not none — and then its regular rhythm. Nothing is written per run: the
// scheduler resumes from its recorded progress.
func TestCatchUpAfterDowntime(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	const region = "cloud:us-east-2"
	const interval = 4 // seconds
	ag := s.startAgent(t, "agent-catchup", region)
	ids := make([]uuid.UUID, 12)
	for i := range ids {
		ids[i] = s.createCheck(t, "/v1/checks", map[string]any{
			"name":         fmt.Sprintf("e2e catch-up %d", i),
			"url":          target.URL,
			"test_regions": []string{region},
			// The catch-up run's deadline is its release plus the attempts' budget (2 × timeout
			// + 10s): the agent reconnects with back-off after the control plane's downtime
			// (up to ~15s seen on a loaded machine) and must still find the run current.
			"timeout": 8000,
		})
		s.setInterval(t, ids[i], interval)
	}
	runsBetween := func(id uuid.UUID, from, to time.Time) []time.Time {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A run's due time is in its de-duplication keys (check_results has the job id).
		rows, err := s.db.Query(ctx, `SELECT DISTINCT d.scheduled_at FROM check_results r
			JOIN ingest_dedupe d ON d.job_id = r.job_id AND d.region = r.region AND d.attempt_number = r.attempt_number
			WHERE r.check_id = $1 AND d.scheduled_at > $2 AND d.scheduled_at <= $3 ORDER BY 1`, id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []time.Time
		for rows.Next() {
			var at time.Time
			if err := rows.Scan(&at); err != nil {
				t.Fatal(err)
			}
			out = append(out, at)
		}
		return out
	}
	far := time.Now().Add(time.Hour)
	checkFor(t, 4*interval*time.Second+30*time.Second, 200*time.Millisecond, func() error {
		for _, id := range ids {
			if n := len(runsBetween(id, time.Time{}, far)); n < 1 {
				return fmt.Errorf("check %s has %d runs before the downtime", id, n)
			}
		}
		return nil
	})

	s.cp.stop(t)
	down := time.Now()
	time.Sleep(3*interval*time.Second + 1500*time.Millisecond) // three whole intervals missed
	s.cp.start(t)
	ag.waitReady(t)
	led := s.cp.p.waitLog(t, "scheduler loaded checks", 30*time.Second)
	lead, err := time.Parse(time.RFC3339Nano, fmt.Sprint(led["time"]))
	if err != nil {
		t.Fatalf("time of %v: %v", led, err)
	}
	t.Logf("down %s, new leader loaded its checks %s later", lead.Sub(down).Round(time.Millisecond), time.Since(lead).Round(time.Millisecond))

	// Wait until every check has run on its regular rhythm after the take-over, so that the
	// catch-up run's result is in too.
	checkFor(t, 3*interval*time.Second+30*time.Second, 200*time.Millisecond, func() error {
		for _, id := range ids {
			if n := len(runsBetween(id, lead, far)); n < 1 {
				return fmt.Errorf("check %s has no regular run after the take-over", id)
			}
		}
		return nil
	})
	for _, id := range ids {
		missed := runsBetween(id, down, lead)
		if len(missed) != 1 {
			t.Errorf("check %s ran %d of the runs due while the control plane was down (%v), want exactly one catch-up run", id, len(missed), missed)
			continue
		}
		if age := lead.Sub(missed[0]); age > interval*time.Second {
			t.Errorf("check %s caught up the run due %s before the take-over, not the newest one", id, age)
		}
	}
}
