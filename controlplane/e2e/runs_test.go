package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
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
	testwait.Eventually(t, 4*interval*time.Second+30*time.Second, func() error {
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
	t.Logf("down %s, the restarted replica loaded the checks of its shards %s later", lead.Sub(down).Round(time.Millisecond), time.Since(lead).Round(time.Millisecond))

	// Wait until every check has run on its regular rhythm after the take-over, so that the
	// catch-up run's result is in too.
	testwait.Eventually(t, 3*interval*time.Second+30*time.Second, func() error {
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

// TestOverloadSkipsAreAccounted: demand twice the agent's capacity (one probe slot, a target
// that answers in 400ms, ten checks every 2s). Every run due in the measured window is either
// stored or recorded as skipped with its reason — none vanishes —, the skips show per check
// in the API (skipped_runs_24h), and they are spread over the checks (the agent sheds late
// jobs in rotation): no check goes more than two intervals without a run.
func TestOverloadSkipsAreAccounted(t *testing.T) {
	parallel(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(400 * time.Millisecond)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(slow.Close)
	s := newStack(t)
	const region = "cloud:ap-south-1"
	const interval = 2 * time.Second
	s.startAgentWith(t, "agent-small", map[string]string{"VANTAGE_AGENT_CONCURRENCY": "1", "VANTAGE_BROWSER_PATH": "none"}, region)
	ids := make([]uuid.UUID, 10)
	for i := range ids {
		ids[i] = s.createCheck(t, "/v1/checks", map[string]any{
			"name": fmt.Sprintf("e2e overload %d", i), "url": slow.URL + "/", "test_regions": []string{region},
			"timeout": 1000, "confirmation_period_seconds": 0, "recovery_period_seconds": 0, "reminder_alert_interval_minutes": -1,
		})
		s.setInterval(t, ids[i], int(interval/time.Second))
	}
	time.Sleep(2 * interval) // every check on its 2s rhythm
	t0 := time.Now()
	time.Sleep(10 * time.Second)
	t1 := time.Now()
	for _, id := range ids {
		s.exec(t, `UPDATE checks SET paused = true WHERE id = $1`, id)
		if err := scheduler.Notify(s.nc, id); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs still queued expire within their deadline (the spacing, 2s) and are reported.
	due := 0
	for _, id := range ids {
		for at, ok := rungrid.LastDue(id, interval, time.Time{}, t1.Add(-time.Millisecond)); ok && !at.Before(t0); at = at.Add(-interval) {
			due++
		}
	}
	var stored, skipped int
	testwait.Eventually(t, 30*time.Second, func() error {
		stored = s.count(t, `SELECT count(DISTINCT (r.job_id, r.region)) FROM check_results r
			JOIN ingest_dedupe d ON d.job_id = r.job_id AND d.region = r.region AND d.attempt_number = r.attempt_number
			WHERE r.check_id = ANY($1) AND d.scheduled_at >= $2 AND d.scheduled_at < $3`, ids, t0, t1)
		skipped = s.count(t, `SELECT count(*) FROM skipped_runs WHERE check_id = ANY($1) AND scheduled_at >= $2 AND scheduled_at < $3`, ids, t0, t1)
		if stored+skipped < due {
			return fmt.Errorf("%d runs due in the window, %d stored and %d skipped", due, stored, skipped)
		}
		return nil
	})
	t.Logf("%d runs due in %s: %d stored, %d skipped", due, t1.Sub(t0).Round(time.Millisecond), stored, skipped)
	if stored+skipped != due {
		t.Errorf("%d runs due, %d stored + %d skipped: a run is counted twice", due, stored, skipped)
	}
	if skipped == 0 {
		t.Fatal("no run skipped at twice the capacity")
	}
	reasons := map[string]int{}
	rows, err := s.db.Query(context.Background(), `SELECT reason, count(*) FROM skipped_runs
		WHERE check_id = ANY($1) AND scheduled_at >= $2 AND scheduled_at < $3 GROUP BY 1`, ids, t0, t1)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			reason string
			n      int
		)
		if err := rows.Scan(&reason, &n); err != nil {
			t.Fatal(err)
		}
		reasons[reason] = n
	}
	rows.Close()
	t.Logf("skipped by reason: %v", reasons)
	if reasons[store.SkipShed] == 0 {
		t.Errorf("no run shed (reason %s) at twice the capacity", store.SkipShed)
	}
	// How long checks went without a run, window edges included: with late jobs shed in
	// rotation, a check loses at most every other run.
	worst := time.Duration(0)
	for _, id := range ids {
		last := t0
		rows, err := s.db.Query(context.Background(), `SELECT DISTINCT d.scheduled_at FROM check_results r
			JOIN ingest_dedupe d ON d.job_id = r.job_id AND d.region = r.region
			WHERE r.check_id = $1 AND d.scheduled_at >= $2 AND d.scheduled_at < $3 ORDER BY 1`, id, t0, t1)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var at time.Time
			if err := rows.Scan(&at); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, at.Sub(last))
			last = at
		}
		rows.Close()
		worst = max(worst, t1.Sub(last))
	}
	t.Logf("longest a check went without a stored run in the window: %s (%.1f intervals)", worst.Round(time.Millisecond), float64(worst)/float64(interval))
	if worst > 2*interval {
		t.Errorf("a check went %s without a run, want at most two intervals (%s)", worst.Round(time.Millisecond), 2*interval)
	}
	shown := 0
	for _, id := range ids {
		var c struct {
			Skipped int `json:"skipped_runs_24h"`
		}
		s.mustCall(t, http.MethodGet, "/v1/checks/"+id.String(), nil, &c)
		shown += c.Skipped
	}
	if shown < skipped {
		t.Errorf("the checks show %d skipped runs, %d recorded in the window", shown, skipped)
	}
}
