package e2e

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// TestAgentKilledUnderLoad: 1,000 checks run every 10s on one agent, against a target that
// answers in 200ms. The agent is killed (SIGKILL) in the middle of a window while probes are in
// flight, and a new agent process for the region (same agent id) starts a few seconds later, as
// an operator's restart would. Every run due in the window — from two intervals before the kill
// to two after — is either stored (its final attempt) or recorded as skipped with a reason:
// none vanishes, and none counts twice. The killed agent's jobs are redelivered after AckWait,
// past their deadline, and reported EXPIRED; jobs queued while no agent served the region reach
// the new agent late, and those it does not run are reported SHED. The skips show in the
// control plane's vantage_runs_skipped_total and in each check's skipped_runs_24h.
func TestAgentKilledUnderLoad(t *testing.T) {
	parallel(t)
	const (
		region   = "cloud:eu-central-1"
		checks   = 1000
		interval = 10 * time.Second
		answerIn = 200 * time.Millisecond
		agentID  = "agent-killed"
	)
	var answering atomic.Int64 // requests the target is answering now
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answering.Add(1)
		defer answering.Add(-1)
		select {
		case <-time.After(answerIn):
			_, _ = w.Write([]byte("ok"))
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(target.Close)

	s := newStack(t)
	first := s.startAgent(t, agentID, region)
	began := time.Now()
	ids := s.createChecks(t, "/v1/checks", checks, 16, func(i int) map[string]any {
		return map[string]any{
			"name": fmt.Sprintf("e2e killed agent %d", i), "url": target.URL + "/", "test_regions": []string{region},
			"timeout": 5000, "confirmation_period_seconds": 0, "recovery_period_seconds": 0, "reminder_alert_interval_minutes": -1,
		}
	})
	changed := time.Now()
	t.Logf("created %d checks in %s", checks, changed.Sub(began).Round(time.Millisecond))
	s.setIntervals(t, ids, int(interval/time.Second))

	// A changed interval moves a check to its new grid from the change on: once every check
	// has run on it, the window's due times are those rungrid computes.
	testwait.Eventually(t, 2*interval+slack, func() error {
		onGrid := map[uuid.UUID]bool{}
		for k := range s.storedRuns(t, ids, changed, time.Now().Add(time.Hour)) {
			if at := time.UnixMilli(k.due); onRunGrid(k.check, interval, at) {
				onGrid[k.check] = true
			}
		}
		if len(onGrid) < checks {
			return fmt.Errorf("%d of %d checks have run on their %s grid since it was set", len(onGrid), checks, interval)
		}
		return nil
	})
	// Runs are due on whole milliseconds: the window's ends are too, or a run due in the
	// window's last sub-millisecond is stored in it but not on the grid counted below.
	t0 := time.Now().Truncate(time.Millisecond)
	t.Logf("every check on its %s grid %s after the change", interval, t0.Sub(changed).Round(time.Millisecond))

	// The kill: two intervals into the window, while the agent has probes in flight.
	time.Sleep(time.Until(t0.Add(2 * interval)))
	var inFlight float64
	testwait.Eventually(t, interval, func() error {
		if n := answering.Load(); n < 5 {
			return fmt.Errorf("the target is answering %d requests, want at least 5 in flight at the kill", n)
		}
		n, err := first.metric("vantage_agent_jobs_in_flight")
		inFlight = n
		return err
	})
	probing := answering.Load()
	first.kill(t)
	killed := time.Now()
	t1 := killed.Add(2 * interval).Truncate(time.Millisecond)
	t.Logf("killed %s with %d probes answering and %.0f jobs held", agentID, probing, inFlight)

	time.Sleep(3 * time.Second) // the operator's restart
	s.startAgentWith(t, agentID+"-restarted", map[string]string{"VANTAGE_BROWSER_PATH": "none", "VANTAGE_AGENT_ID": agentID}, region)
	t.Logf("%s serves %s again %s after the kill", agentID, region, time.Since(killed).Round(time.Millisecond))

	due := map[runKey]bool{}
	for _, id := range ids {
		for at, ok := rungrid.LastDue(id, interval, time.Time{}, t1.Add(-time.Millisecond)); ok && !at.Before(t0); at = at.Add(-interval) {
			due[runKey{id, at.UnixMilli()}] = true
		}
	}
	// The killed agent's jobs come back after AckWait; every job in the window has its
	// deadline (due + interval) by t1 + interval.
	settled := t1.Add(interval)
	if back := killed.Add(wire.JobAckWait); back.After(settled) {
		settled = back
	}
	var (
		stored  map[runKey]bool
		skipped map[runKey]string
	)
	testwait.Eventually(t, time.Until(settled)+2*slack, func() error {
		stored = s.storedRuns(t, ids, t0, t1)
		skipped = s.skippedRuns(t, ids, region, t0, t1)
		var vanished []runKey
		for k := range due {
			if !stored[k] && skipped[k] == "" {
				vanished = append(vanished, k)
			}
		}
		if len(vanished) > 0 {
			return fmt.Errorf("%d of %d runs due in [%s, %s) vanished (%d stored, %d skipped so far), e.g. %s",
				len(vanished), len(due), clock(t0), clock(t1), len(stored), len(skipped), examples(vanished, 5))
		}
		return nil
	})

	reasons := map[string]int{}
	var twice, offGrid []runKey
	for k, reason := range skipped {
		reasons[reason]++
		if stored[k] {
			twice = append(twice, k)
		}
		if !due[k] {
			offGrid = append(offGrid, k)
		}
	}
	for k := range stored {
		if !due[k] {
			offGrid = append(offGrid, k)
		}
	}
	t.Logf("%d runs due in [%s, %s): %d stored, %d skipped %v; all accounted for %s after the kill",
		len(due), clock(t0), clock(t1), len(stored), len(skipped), reasons, time.Since(killed).Round(time.Millisecond))
	if len(twice) > 0 {
		t.Errorf("%d runs both stored and recorded as skipped, e.g. %s", len(twice), examples(twice, 5))
	}
	if len(offGrid) > 0 {
		t.Errorf("%d runs stored or skipped in the window that are not due on their check's grid, e.g. %s", len(offGrid), examples(offGrid, 5))
	}
	if reasons[store.SkipExpired] == 0 {
		t.Fatalf("no run skipped as %s, though %d probes were in flight at the kill: the killed agent's jobs did not come back", store.SkipExpired, probing)
	}

	// The skips are visible: in the control plane's counter, and on each check.
	if n, err := s.cp.metric("vantage_runs_skipped_total"); err != nil || n < float64(len(skipped)) {
		t.Errorf("vantage_runs_skipped_total = %v (%v), want at least the %d skips of the window", n, err, len(skipped))
	}
	inWindow := map[uuid.UUID]int{}
	for k := range skipped {
		inWindow[k.check]++
	}
	shown := s.skippedRuns24h(t)
	var hidden []string
	for id, n := range inWindow {
		if shown[id] < n {
			hidden = append(hidden, fmt.Sprintf("%s shows %d, %d in the window", id, shown[id], n))
		}
	}
	if len(hidden) > 0 {
		slices.Sort(hidden)
		t.Errorf("%d of the %d checks with skipped runs show fewer in skipped_runs_24h: %s", len(hidden), len(inWindow), strings.Join(hidden[:min(5, len(hidden))], "; "))
	}
}

// runKey is one run of a check: its due time in Unix milliseconds.
type runKey struct {
	check uuid.UUID
	due   int64
}

func (k runKey) String() string {
	return fmt.Sprintf("check %s due %s", k.check, clock(time.UnixMilli(k.due)))
}

// onRunGrid reports whether at is a due time of the check's regular schedule.
func onRunGrid(id uuid.UUID, interval time.Duration, at time.Time) bool {
	last, ok := rungrid.LastDue(id, interval, time.Time{}, at)
	return ok && last.Equal(at)
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// examples names up to n of runs, earliest first.
func examples(runs []runKey, n int) string {
	slices.SortFunc(runs, func(a, b runKey) int {
		return cmp.Or(cmp.Compare(a.due, b.due), strings.Compare(a.check.String(), b.check.String()))
	})
	parts := make([]string, 0, n)
	for _, k := range runs[:min(n, len(runs))] {
		parts = append(parts, k.String())
	}
	return strings.Join(parts, "; ")
}

// storedRuns are the runs of checks ids due in [from, to) whose final attempt is stored; a
// run's due time is in its de-duplication key.
func (s *stack) storedRuns(t *testing.T, ids []uuid.UUID, from, to time.Time) map[runKey]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := s.db.Query(ctx, `SELECT DISTINCT r.check_id, d.scheduled_at FROM check_results r
		JOIN ingest_dedupe d ON d.job_id = r.job_id AND d.region = r.region AND d.attempt_number = r.attempt_number AND d.is_final
		WHERE r.check_id = ANY($1) AND r.is_final_attempt AND d.scheduled_at >= $2 AND d.scheduled_at < $3`, ids, from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[runKey]bool{}
	for rows.Next() {
		var (
			id uuid.UUID
			at time.Time
		)
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		out[runKey{id, at.UnixMilli()}] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// skippedRuns are the runs of checks ids in region due in [from, to) recorded as skipped, with
// their reasons.
func (s *stack) skippedRuns(t *testing.T, ids []uuid.UUID, region string, from, to time.Time) map[runKey]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := s.db.Query(ctx, `SELECT check_id, scheduled_at, reason FROM skipped_runs
		WHERE check_id = ANY($1) AND region = $2 AND scheduled_at >= $3 AND scheduled_at < $4`, ids, region, from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[runKey]string{}
	for rows.Next() {
		var (
			id     uuid.UUID
			at     time.Time
			reason string
		)
		if err := rows.Scan(&id, &at, &reason); err != nil {
			t.Fatal(err)
		}
		out[runKey{id, at.UnixMilli()}] = reason
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// skippedRuns24h is every check's skipped_runs_24h, from the check list of the API.
func (s *stack) skippedRuns24h(t *testing.T) map[uuid.UUID]int {
	t.Helper()
	out := map[uuid.UUID]int{}
	for page := 1; ; page++ {
		var items []struct {
			ID      uuid.UUID `json:"id"`
			Skipped int       `json:"skipped_runs_24h"`
		}
		s.mustCall(t, http.MethodGet, fmt.Sprintf("/v1/checks?per_page=100&page=%d", page), nil, &items)
		for _, it := range items {
			out[it.ID] = it.Skipped
		}
		if len(items) < 100 {
			return out
		}
	}
}
