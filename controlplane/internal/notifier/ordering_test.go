package notifier_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// An uptime.up raised while the uptime.down before it waits for a retry must not overtake it:
// the receiver sees down, then up, each once (issue 13, item 15).
func TestNotifierKeepsAlertsInOrderPerCheckAndTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 { // the first two attempts (of uptime.down) fail
			return 503
		}
		return 200
	})
	e.newWebhook(rcv.URL+"/ordered", []string{"uptime.down", "uptime.up"}, e.check)
	e.run(notifier.Config{Backoff: []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond},
		Jitter: -1, PollInterval: 20 * time.Millisecond})
	down := e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the first attempt of uptime.down", func() bool { return len(rcv.requests()) >= 1 }))
	up := e.emit("uptime.up", e.check, nil)
	testwait.Eventually(t, 10*time.Second, testwait.Holds("both events delivered", func() bool { return len(rcv.successes()) >= 2 }))
	time.Sleep(300 * time.Millisecond)
	var order []string
	for _, g := range rcv.requests() {
		var doc struct{ Type string }
		_ = json.Unmarshal(g.Body, &doc)
		order = append(order, doc.Type)
	}
	want := []string{"uptime.down", "uptime.down", "uptime.down", "uptime.up"}
	if len(order) != len(want) {
		t.Fatalf("requests %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("requests %v, want %v (down %s, up %s)", order, want, down, up)
		}
	}
}

// An event whose fan-out waits for a retry holds back the later events of its check: the
// uptime.up is not sent before the uptime.down it follows has been fanned out and delivered.
func TestNotifierHoldsAlertsBehindAPostponedFanout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	e.newWebhook(rcv.URL+"/ordered", []string{"uptime.down", "uptime.up"}, e.check)
	down := e.emit("uptime.down", e.check, nil)
	// As after a failed fan-out: postponed, not dispatched.
	if _, err := e.st.Pool().Exec(context.Background(), `UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour'
		WHERE id = $1`, down); err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{PollInterval: 20 * time.Millisecond})
	e.emit("uptime.up", e.check, nil)
	time.Sleep(time.Second)
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("%d requests while the earlier uptime.down waits for its fan-out", n)
	}
	if _, err := e.st.Pool().Exec(context.Background(), `UPDATE outbox SET next_attempt_at = now() WHERE id = $1`, down); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 5*time.Second, testwait.Holds("both events", func() bool { return len(rcv.requests()) >= 2 }))
	var order []string
	for _, g := range rcv.requests() {
		var doc struct{ Type string }
		_ = json.Unmarshal(g.Body, &doc)
		order = append(order, doc.Type)
	}
	if len(order) != 2 || order[0] != "uptime.down" || order[1] != "uptime.up" {
		t.Fatalf("order %v", order)
	}
}
