package notifier_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
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
	e.run(notifier.Options{Backoff: []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond},
		Jitter: -1, PollInterval: 20 * time.Millisecond})
	down := e.emit("uptime.down", e.check, nil)
	waitFor(t, 5*time.Second, "the first attempt of uptime.down", func() bool { return len(rcv.requests()) >= 1 })
	up := e.emit("uptime.up", e.check, nil)
	waitFor(t, 10*time.Second, "both events delivered", func() bool { return len(rcv.successes()) >= 2 })
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
