package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// TestPipelineTxRoundTrip writes what the evaluator writes in a pipeline transaction (a pending
// run, the check's state with NULL and sub-microsecond times, an incident, an alert, a verdict)
// and reads it back in the next one, as the evaluator would.
func TestPipelineTxRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "pipeline", "paid")
	if err != nil {
		t.Fatal(err)
	}
	regions := []string{"cloud:us-east-1", "cloud:eu-west-2"}
	checkID := storetest.Check(t, st, &storetest.CheckOpts{OrgID: org.ID, Name: "round trip", Spec: func(sp *check.Spec) {
		sp.TestRegions = regions
		sp.TimeoutMs, sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = new(5000), 30, 60
	}}).ID
	base := time.Date(2026, 3, 14, 23, 59, 30, 0, time.UTC)
	changed := base.Add(1234567 * time.Nanosecond) // stored as base + 1234µs
	run := store.Run{OrgID: org.ID, CheckID: checkID, JobID: uuid.Must(uuid.NewV7()), ScheduledAt: base,
		Deadline: base.Add(time.Minute), ExpectedRegions: regions, PassedRegions: []string{"cloud:us-east-1"},
		FailedRegions: []string{}, FirstResultAt: base.Add(time.Second)}
	var incident store.Incident
	result := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID, CheckID: checkID, JobID: run.JobID,
		Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: base, CheckedAt: base.Add(time.Second),
		Passing: false, ResponseTimeMs: 12.5, BodyAvailability: "NONE"}

	stats, err := st.IngestResults(ctx, []store.ResultRow{result, result}, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
		if len(checks) != 1 || checks[0].ID != checkID || checks[0].State != "PENDING" || len(finals) != 1 {
			t.Errorf("judge got checks %+v, finals %d", checks, len(finals))
		}
		if err := tx.SaveRuns(ctx, []store.Run{run}); err != nil {
			return err
		}
		var err error
		if incident, err = tx.OpenIncident(ctx, org.ID, checkID, changed); err != nil {
			return err
		}
		again, err := tx.OpenIncident(ctx, org.ID, checkID, base)
		if err != nil || again.ID != incident.ID {
			t.Errorf("second OpenIncident: %+v, %v; want the open one %s", again, err, incident.ID)
		}
		if err := tx.InsertOutbox(ctx, []store.OutboxEvent{{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID,
			Event:   event.UptimeDown{UptimeAlert: event.UptimeAlert{OccurredAt: changed, Incident: &event.CheckIncident{ID: incident.ID, CheckID: checkID, StartedAt: base}}},
			CheckID: &checkID, IncidentID: &incident.ID, AlertPriority: "HIGH", CreatedAt: changed}}); err != nil {
			return err
		}
		if err := tx.CountVerdicts(ctx, []store.Verdict{{OrgID: org.ID, CheckID: checkID, Day: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)},
			{OrgID: org.ID, CheckID: checkID, Day: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), Passing: true}}); err != nil {
			return err
		}
		return tx.UpdateCheckStates(ctx, []store.CheckState{{OrgID: org.ID, CheckID: checkID, State: "DOWN",
			StateChangedAt: &changed, FailingSince: &base, DownAlerted: true, CurrentIncidentID: &incident.ID, LastRunAt: &base}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Accepted) != 1 {
		t.Errorf("accepted %d rows, want 1", len(stats.Accepted))
	}
	if stats.Accepted = nil; !reflect.DeepEqual(stats, store.IngestStats{Received: 2, Stored: 1, Duplicates: 1}) {
		t.Errorf("stats %+v", stats)
	}

	judged, err := st.JudgeDueRuns(ctx, base.Add(time.Minute), 10, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
		if len(checks) != 1 || finals != nil {
			t.Fatalf("sweep got %d checks, finals %v", len(checks), finals)
		}
		c := checks[0]
		wantChanged := base.Add(1234 * time.Microsecond)
		if c.State != "DOWN" || c.StateChangedAt == nil || !c.StateChangedAt.Equal(wantChanged) || c.FailingSince == nil ||
			!c.FailingSince.Equal(base) || c.PassingSince != nil || c.LastAlertAt != nil || !c.DownAlerted ||
			c.CurrentIncidentID == nil || *c.CurrentIncidentID != incident.ID || c.LastRunAt == nil || !c.LastRunAt.Equal(base) {
			t.Errorf("check state read back: %+v", c)
		}
		if c.URL == nil || *c.URL != "https://example.com/" || !reflect.DeepEqual(c.TestRegions, regions) || c.TimeoutMs == nil ||
			*c.TimeoutMs != 5000 || c.ConfirmationPeriodSeconds != 30 || c.RecoveryPeriodSeconds != 60 || c.AlertPriority != "HIGH" {
			t.Errorf("check configuration read back: %+v", c)
		}
		runs, err := tx.PendingRuns(ctx, checks)
		if err != nil {
			return err
		}
		if len(runs) != 1 || !runs[0].ScheduledAt.Equal(run.ScheduledAt) || runs[0].JobID != run.JobID ||
			!reflect.DeepEqual(runs[0].PassedRegions, run.PassedRegions) || len(runs[0].FailedRegions) != 0 ||
			!reflect.DeepEqual(runs[0].ExpectedRegions, regions) {
			t.Errorf("pending runs read back: %+v", runs)
		}
		cur, ok, err := tx.CurrentIncident(ctx, org.ID, checkID)
		if err != nil || !ok || cur.ID != incident.ID {
			t.Errorf("current incident: %+v %v %v", cur, ok, err)
		}
		closed, ok, err := tx.CloseIncident(ctx, org.ID, checkID, base) // before it started: ends when it started
		if err != nil || !ok || closed.EndedAt == nil || !closed.EndedAt.Equal(closed.StartedAt) {
			t.Errorf("closed incident: %+v %v %v", closed, ok, err)
		}
		if _, ok, err := tx.CloseIncident(ctx, org.ID, checkID, base); ok || err != nil {
			t.Errorf("closing again: %v %v", ok, err)
		}
		if err := tx.DeleteRuns(ctx, runs); err != nil {
			return err
		}
		return tx.UpdateCheckStates(ctx, []store.CheckState{{OrgID: org.ID, CheckID: checkID, State: "UP"}})
	})
	if err != nil || judged != 1 {
		t.Fatalf("JudgeDueRuns: %d, %v", judged, err)
	}

	// A write the database refuses fails the whole batch: nothing of it is stored.
	late := result
	late.ID, late.JobID = uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	_, err = st.IngestResults(ctx, []store.ResultRow{late}, func(ctx context.Context, tx *store.PipelineTx, _ []*store.PipelineCheck, _ []store.ResultRow) error {
		return tx.InsertOutbox(ctx, []store.OutboxEvent{{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID,
			Event:   event.UptimeDown{UptimeAlert: event.UptimeAlert{OccurredAt: base}},
			CheckID: &checkID, AlertPriority: "URGENT", CreatedAt: base}})
	})
	if err == nil {
		t.Error("an outbox row with an invalid priority was accepted")
	}

	count := func(q string) (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, q, checkID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM check_runs WHERE check_id = $1`:                                            0,
		`SELECT count(*) FROM check_results WHERE check_id = $1`:                                         1,
		`SELECT count(*) FROM outbox WHERE check_id = $1 AND next_attempt_at = created_at`:               1,
		`SELECT runs FROM check_daily_stats WHERE check_id = $1 AND day = '2026-03-14'`:                  2,
		`SELECT failed_runs FROM check_daily_stats WHERE check_id = $1 AND day = '2026-03-14'`:           1,
		`SELECT count(*) FROM checks WHERE id = $1 AND state = 'UP' AND state_changed_at IS NULL`:        1,
		`SELECT count(*) FROM checks WHERE id = $1 AND current_incident_id IS NULL AND NOT down_alerted`: 1,
	} {
		if n := count(q); n != want {
			t.Errorf("%s: %d, want %d", q, n, want)
		}
	}
}

// TestUnchangedStateWritesOnlyProgress: a judged run that leaves a check's state as it was
// moves the check's progress (check_progress) and does not write the check's row; a
// transition writes it.
func TestUnchangedStateWritesOnlyProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "progress", "paid")
	if err != nil {
		t.Fatal(err)
	}
	checkID := storetest.Check(t, st, &storetest.CheckOpts{OrgID: org.ID, Name: "progress", Spec: func(sp *check.Spec) {
		sp.TestRegions = []string{"cloud:us-east-1"}
		sp.TimeoutMs, sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = new(5000), 0, 0
	}}).ID
	base := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	judgeRun := func(at time.Time, state store.CheckState) {
		t.Helper()
		row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID, CheckID: checkID, JobID: uuid.Must(uuid.NewV7()),
			Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at.Add(time.Second),
			Passing: true, BodyAvailability: "NONE"}
		state.OrgID, state.CheckID, state.LastRunAt = org.ID, checkID, &at
		if _, err := st.IngestResults(ctx, []store.ResultRow{row}, func(ctx context.Context, tx *store.PipelineTx, _ []*store.PipelineCheck, _ []store.ResultRow) error {
			return tx.UpdateCheckStates(ctx, []store.CheckState{state})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// xmin is the transaction that wrote the row's current version.
	rowVersion := func() (version string, lastRun time.Time) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT c.xmin::text, p.last_run_at FROM checks c JOIN check_progress p ON p.check_id = c.id
			WHERE c.id = $1`, checkID).Scan(&version, &lastRun); err != nil {
			t.Fatal(err)
		}
		return version, lastRun
	}
	up := store.CheckState{State: "UP", StateChangedAt: &base, PassingSince: &base}
	judgeRun(base, up)
	first, lastRun := rowVersion()
	if !lastRun.Equal(base) {
		t.Errorf("progress after the first run: %s, want %s", lastRun, base)
	}
	judgeRun(base.Add(time.Minute), up)
	second, lastRun := rowVersion()
	if second != first {
		t.Errorf("a run that changed no state rewrote the check's row (version %s → %s)", first, second)
	}
	if !lastRun.Equal(base.Add(time.Minute)) {
		t.Errorf("progress after the second run: %s, want %s", lastRun, base.Add(time.Minute))
	}
	changed := base.Add(2 * time.Minute)
	judgeRun(changed, store.CheckState{State: "VERIFYING", StateChangedAt: &changed, FailingSince: &changed, PassingSince: &base})
	third, _ := rowVersion()
	var state string
	if err := st.Pool().QueryRow(ctx, `SELECT state FROM checks WHERE id = $1`, checkID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if third == second || state != "VERIFYING" {
		t.Errorf("a transition was not written: version %s → %s, state %s", second, third, state)
	}
}

// TestIngestDoesNotBlockCheckChanges: while ingest judges a check (its check_progress row
// locked), a change of the check's configuration through the API goes through at once.
func TestIngestDoesNotBlockCheckChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "no wait", "paid")
	if err != nil {
		t.Fatal(err)
	}
	checkID := storetest.Check(t, st, &storetest.CheckOpts{OrgID: org.ID, Name: "judged", Spec: func(sp *check.Spec) {
		sp.TestRegions = []string{"cloud:us-east-1"}
		sp.TimeoutMs, sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = new(5000), 0, 0
	}}).ID
	at := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID, CheckID: checkID, JobID: uuid.Must(uuid.NewV7()),
		Region: "cloud:us-east-1", AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at, Passing: true, BodyAvailability: "NONE"}
	judging, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := st.IngestResults(ctx, []store.ResultRow{row}, func(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, _ []store.ResultRow) error {
			if len(checks) != 1 {
				t.Errorf("judge got %d checks", len(checks))
			}
			close(judging)
			<-release
			return tx.UpdateCheckStates(ctx, []store.CheckState{{OrgID: org.ID, CheckID: checkID, State: "UP", StateChangedAt: &at, LastRunAt: &at}})
		})
		done <- err
	}()
	<-judging
	change, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = st.Pool().Exec(change, `UPDATE checks SET name = 'renamed', paused = true WHERE id = $1`, checkID)
	cancel()
	close(release)
	if err != nil {
		t.Fatalf("changing a check while ingest judged it: %v (it waited for ingest)", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var name, state string
	var lastRun time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT c.name, c.state, p.last_run_at FROM checks c JOIN check_progress p ON p.check_id = c.id WHERE c.id = $1`,
		checkID).Scan(&name, &state, &lastRun); err != nil {
		t.Fatal(err)
	}
	if name != "renamed" || state != "UP" || !lastRun.Equal(at) {
		t.Errorf("after both: name %q, state %s, last run %s; want both writes kept", name, state, lastRun)
	}
}

// TestUnlockedIngestAddsToOneRollup: without a judge (the shard owner judges) ingest does not
// lock the checks, and batches of one check and region may be stored at once on several
// replicas. saveRollups relies on the check_regions upsert before it to serialize them (each
// would otherwise find its hour's rollup missing and insert it): every batch must commit and
// each hour's row count every result.
func TestUnlockedIngestAddsToOneRollup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "rollups", "paid")
	if err != nil {
		t.Fatal(err)
	}
	checkID := storetest.Check(t, st, &storetest.CheckOpts{OrgID: org.ID, Name: "rollup race"}).ID
	const hours, batches = 20, 8
	first := time.Now().UTC().Truncate(time.Hour).Add(-hours * time.Hour)
	for h := range hours {
		hour := first.Add(time.Duration(h) * time.Hour)
		errs := make(chan error, batches)
		start := make(chan struct{})
		for i := range batches {
			go func() {
				<-start
				at := hour.Add(time.Duration(i) * time.Second)
				_, err := st.IngestResults(ctx, []store.ResultRow{{ID: uuid.Must(uuid.NewV7()), OrgID: org.ID, CheckID: checkID,
					JobID: uuid.Must(uuid.NewV7()), Region: "cloud:eu-west-2", AttemptNumber: 1, IsFinalAttempt: true,
					ScheduledAt: at, CheckedAt: at, Passing: i%2 == 0, ResponseTimeMs: float64(10 + i), BodyAvailability: "NONE"}}, nil)
				errs <- err
			}()
		}
		close(start)
		for range batches {
			if err := <-errs; err != nil {
				t.Errorf("hour %d: a batch failed: %v", h, err)
			}
		}
	}
	rows, err := st.Pool().Query(ctx, `SELECT runs, failed, (SELECT sum(x) FROM unnest(latency_hist) AS x)::int
		FROM check_rollups WHERE check_id = $1 AND region = 'cloud:eu-west-2' ORDER BY bucket_start`, checkID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var runs, failed, passing int
		if err := rows.Scan(&runs, &failed, &passing); err != nil {
			t.Fatal(err)
		}
		if runs != batches || failed != batches/2 || passing != batches/2 {
			t.Errorf("hour %d: rollup counts runs %d, failed %d, passing latencies %d; want %d, %d, %d",
				n, runs, failed, passing, batches, batches/2, batches/2)
		}
		n++
	}
	if n != hours {
		t.Errorf("%d rollup rows, want %d", n, hours)
	}
}
