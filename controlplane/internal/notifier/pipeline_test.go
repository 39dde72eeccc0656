package notifier_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestTransitionReachesWebhook drives the real evaluator: a check goes DOWN and recovers, and
// the receiver gets exactly one signed uptime.down within a second of the transition's commit,
// then exactly one uptime.up.
func TestTransitionReachesWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.st.Pool().Exec(ctx, `UPDATE checks SET state = 'UP', muted = false WHERE id = $1`, e.check); err != nil {
		t.Fatal(err)
	}
	muted := e.newCheck("muted", nil, nil)
	if _, err := e.st.Pool().Exec(ctx, `UPDATE checks SET state = 'UP', muted = true WHERE id = $1`, muted); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, nil)
	_, secret := e.newWebhook(rcv.URL, []string{"uptime.down", "uptime.up"}, e.check, muted)
	ev, err := evaluator.New(evaluator.Config{}, evaluator.Deps{Store: e.st})
	if err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{})

	runAt := time.Now().Add(-time.Hour).Truncate(time.Second)
	report := func(check uuid.UUID, passing bool) {
		t.Helper()
		runAt = runAt.Add(time.Minute)
		row := store.ResultRow{ID: uuid.New(), OrgID: e.org, CheckID: check, JobID: uuid.New(), Region: "cloud:eu-west-2",
			AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: runAt, CheckedAt: runAt, Passing: passing,
			ResponseTimeMs: 12, BodyAvailability: "AVAILABLE"}
		if _, err := ev.IngestBatch(ctx, []store.ResultRow{row}); err != nil {
			t.Fatal(err)
		}
	}
	state := func(check uuid.UUID) string {
		var s string
		if err := e.st.Pool().QueryRow(ctx, `SELECT state FROM checks WHERE id = $1`, check).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	until := func(check uuid.UUID, passing bool, want string) time.Time {
		t.Helper()
		for i := 0; i < 5; i++ {
			report(check, passing)
			if state(check) == want {
				return time.Now()
			}
		}
		t.Fatalf("check never reached %s", want)
		return time.Time{}
	}

	until(muted, false, "DOWN") // muted: no outbox row, nothing sent
	downAt := until(e.check, false, "DOWN")
	testwait.Eventually(t, time.Second, testwait.Holds("uptime.down within a second of the transition", func() bool { return len(rcv.requests()) >= 1 }))
	t.Logf("uptime.down arrived %s after the transition committed", rcv.requests()[0].At.Sub(downAt))
	upAt := until(e.check, true, "UP")
	testwait.Eventually(t, time.Second, testwait.Holds("uptime.up within a second of the transition", func() bool { return len(rcv.requests()) >= 2 }))
	t.Logf("uptime.up arrived %s after the transition committed", rcv.requests()[1].At.Sub(upAt))
	until(muted, true, "UP")
	time.Sleep(500 * time.Millisecond)

	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want exactly uptime.down and uptime.up", len(got))
	}
	for i, want := range []string{"uptime.down", "uptime.up"} {
		verifySignature(t, secret, got[i])
		var doc struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				Check    map[string]any `json:"check"`
				Incident map[string]any `json:"incident"`
			} `json:"data"`
		}
		if err := json.Unmarshal(got[i].Body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Type != want || doc.ID != got[i].ID || doc.Data.Check["id"] != e.check.String() || doc.Data.Incident["check_id"] != e.check.String() {
			t.Fatalf("request %d: %s", i, got[i].Body)
		}
	}
}
