package notifier_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

func TestNotifierDeliversSignedEventsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	both := []string{"uptime.down", "uptime.up"}
	assoc, assocSecret := e.newWebhook(rcv.URL+"/assoc", both, e.check)
	listed, listedSecret := e.newWebhook(rcv.URL+"/listed", []string{"uptime.down"}) // only named in webhook_alerts
	unrelated := e.newCheck("other", nil, nil)
	e.newWebhook(rcv.URL+"/unassociated", both, unrelated)                // another check's
	e.newWebhook(rcv.URL+"/unsubscribed", []string{"uptime.up"}, e.check) // not subscribed to uptime.down
	secrets := map[string]string{"/assoc": assocSecret, "/listed": listedSecret}

	e.runWith(notifier.Config{}, notifier.Deps{RenderCheck: func(c store.Check) any {
		return map[string]any{"id": c.ID.String(), "name": c.Spec.Name, "status": c.State, "rendered": true}
	}})
	start := time.Now()
	down := e.emit("uptime.down", e.check, map[string][]string{"webhook_alerts": {listed.String(), "not-an-id"}})
	testwait.Eventually(t, time.Second, testwait.Holds("uptime.down at both webhooks within a second", func() bool { return len(rcv.requests()) >= 2 }))
	t.Logf("uptime.down arrived after %s", time.Since(start))
	time.Sleep(300 * time.Millisecond) // anything more would be a duplicate or a misroute
	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("want exactly one delivery per subscribed webhook, got %d: %+v", len(got), got)
	}
	paths := map[string]bool{}
	for _, g := range got {
		paths[g.Path] = true
		verifySignature(t, secrets[g.Path], g)
		if g.ID != down.String() {
			t.Fatalf("webhook-id %s, want the event id %s", g.ID, down)
		}
		var doc map[string]any
		if err := json.Unmarshal(g.Body, &doc); err != nil {
			t.Fatal(err)
		}
		data := doc["data"].(map[string]any)
		chk, inc := data["check"].(map[string]any), data["incident"].(map[string]any)
		if doc["id"] != down.String() || doc["type"] != "uptime.down" || doc["alert_priority"] != "HIGH" || doc["reminder"] != false ||
			chk["id"] != e.check.String() || chk["rendered"] != true || inc["check_id"] != e.check.String() || inc["ended_at"] != nil {
			t.Fatalf("document %s", g.Body)
		}
		if s, _ := doc["occurred_at"].(string); len(s) != len("2026-01-02T15:04:05.000Z") {
			t.Fatalf("occurred_at %q", s)
		}
	}
	if !paths["/assoc"] || !paths["/listed"] {
		t.Fatalf("routed to %v", paths)
	}

	up := e.emit("uptime.up", e.check, nil)
	testwait.Eventually(t, time.Second, testwait.Holds("uptime.up", func() bool { return len(rcv.requests()) >= 4 }))
	time.Sleep(300 * time.Millisecond)
	var ups []string
	for _, g := range rcv.requests()[2:] {
		if g.ID != up.String() {
			t.Fatalf("unexpected request %+v", g)
		}
		ups = append(ups, g.Path)
	}
	if len(ups) != 2 || !strings.Contains(strings.Join(ups, ","), "/assoc") || !strings.Contains(strings.Join(ups, ","), "/unsubscribed") {
		t.Fatalf("uptime.up went to %v, want /assoc and /unsubscribed once each", ups)
	}

	ds, total, err := e.st.ListDeliveries(context.Background(), e.org, assoc, 10, 0)
	if err != nil || total != 2 || ds[0].Status != store.DeliveryDelivered || len(ds[0].Attempts) != 1 || *ds[0].Attempts[0].StatusCode != 200 {
		t.Fatalf("delivery log: %+v %d %v", ds, total, err)
	}
}

func TestNotifierRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, func(n int) int {
		if n <= 3 {
			return 500
		}
		return 200
	})
	hook, secret := e.newWebhook(rcv.URL+"/flaky", []string{"uptime.down"}, e.check)
	e.run(notifier.Config{Backoff: fastRetries, Jitter: -1})
	ev := e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 5*time.Second, testwait.Holds("a successful delivery", func() bool { return len(rcv.successes()) == 1 }))
	time.Sleep(300 * time.Millisecond)
	got := rcv.requests()
	if len(got) != 4 || len(rcv.successes()) != 1 {
		t.Fatalf("want 3 failures and 1 success, got %d requests", len(got))
	}
	for _, g := range got {
		verifySignature(t, secret, g)
		if g.ID != ev.String() || string(g.Body) != string(got[0].Body) {
			t.Fatal("every attempt must carry the same event id and document")
		}
	}
	ds, _, err := e.st.ListDeliveries(context.Background(), e.org, hook, 10, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v %v", ds, err)
	}
	d := ds[0]
	if d.Status != store.DeliveryDelivered || d.AttemptCount != 4 || d.DeliveredAt == nil || len(d.Attempts) != 4 {
		t.Fatalf("delivery %+v", d)
	}
	for i, a := range d.Attempts {
		want := map[bool]int{true: 500, false: 200}[i < 3]
		if a.Number != i+1 || a.StatusCode == nil || *a.StatusCode != want || (want == 500) != (a.Error != nil) || a.LatencyMs <= 0 {
			t.Fatalf("attempt %d: %+v", i+1, a)
		}
	}
}

func TestNotifierGivesUpAndResends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	healthy := false
	rcv := newReceiver(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		return map[bool]int{true: 204, false: 503}[healthy]
	})
	hook, _ := e.newWebhook(rcv.URL, []string{"uptime.down"}, e.check)
	e.run(notifier.Config{Backoff: fastRetries[:2], Jitter: -1})
	e.emit("uptime.down", e.check, nil)
	var d store.Delivery
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the delivery to fail", func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
		if len(ds) == 1 {
			d = ds[0]
		}
		return d.Status == store.DeliveryFailed
	}))
	if d.AttemptCount != 3 || *d.LastStatusCode != 503 || !strings.Contains(*d.LastError, "HTTP 503") {
		t.Fatalf("failed delivery %+v", d)
	}
	mu.Lock()
	healthy = true
	mu.Unlock()
	if _, err := e.st.ResendDelivery(context.Background(), store.SystemActor, e.org, hook, d.ID); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the re-sent delivery", func() bool { return len(rcv.successes()) == 1 }))
}

func TestNotifierReplicasNeverDoubleDeliver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	const hooks, events = 5, 40
	for i := 0; i < hooks; i++ {
		e.newWebhook(fmt.Sprintf("%s/h%d", rcv.URL, i), []string{"uptime.down"}, e.check)
	}
	cfg := notifier.Config{Workers: 3, Batch: 4, FanoutBatch: 3, PollInterval: 10 * time.Millisecond}
	e.run(cfg)
	e.run(cfg)
	for i := 0; i < events; i++ {
		e.emit("uptime.down", e.check, nil)
	}
	testwait.Eventually(t, 10*time.Second, testwait.Holds("every delivery", func() bool { return len(rcv.requests()) >= hooks*events }))
	time.Sleep(300 * time.Millisecond)
	seen := map[string]int{}
	for _, g := range rcv.requests() {
		seen[g.Path+" "+g.ID]++
	}
	if len(seen) != hooks*events || len(rcv.requests()) != hooks*events {
		t.Fatalf("%d requests for %d distinct (webhook, event) pairs, want %d of each", len(rcv.requests()), len(seen), hooks*events)
	}
}

func TestNotifierRestartMidRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	healthy := false
	rcv := newReceiver(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		return map[bool]int{true: 200, false: 500}[healthy]
	})
	hook, secret := e.newWebhook(rcv.URL, []string{"uptime.down"}, e.check)
	retry := []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
	stop := e.run(notifier.Config{Backoff: retry, Jitter: -1})
	ev := e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("a failed attempt", func() bool { return len(rcv.requests()) >= 1 }))
	stop() // the control plane goes away between two attempts
	mu.Lock()
	healthy = true
	mu.Unlock()
	e.run(notifier.Config{Backoff: retry, Jitter: -1})
	testwait.Eventually(t, 3*time.Second, testwait.Holds("delivery by the new notifier", func() bool { return len(rcv.successes()) >= 1 }))
	time.Sleep(500 * time.Millisecond)
	if s := rcv.successes(); len(s) != 1 || s[0].ID != ev.String() {
		t.Fatalf("successes %+v", s)
	}
	verifySignature(t, secret, rcv.successes()[0])
	ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 10, 0)
	if len(ds) != 1 || ds[0].Status != store.DeliveryDelivered {
		t.Fatalf("deliveries %+v", ds)
	}
}

func TestNotifierRecoversAbandonedClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	hook, _ := e.newWebhook(rcv.URL, []string{"uptime.down"}, e.check)
	e.emit("uptime.down", e.check, nil)
	// A replica fans the event out, claims the delivery and dies before sending it.
	if _, err := e.st.DispatchOutbox(context.Background(), 10, time.Second, func(ctx context.Context, ev store.PendingEvent) (store.Fanout, error) {
		return store.Fanout{Body: []byte(`{"id":"` + ev.ID.String() + `"}`), ResourceKind: "check", ResourceID: *ev.CheckID}, nil
	}); err != nil {
		t.Fatal(err)
	}
	claimed, err := e.st.ClaimDeliveries(context.Background(), 10, 400*time.Millisecond)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	e.run(notifier.Config{PollInterval: 20 * time.Millisecond})
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the claim was not respected: %d requests during the lease", n)
	}
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the abandoned delivery", func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 10, 0)
		return len(ds) == 1 && ds[0].Status == store.DeliveryDelivered
	}))
	ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 10, 0)
	if len(rcv.requests()) != 1 || ds[0].AttemptCount != 2 || len(ds[0].Attempts) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
}

func TestNotifierResolvesURLVariablesAtDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	ctx := context.Background()
	v, err := e.st.CreateEnvVar(ctx, store.SystemActor, e.org, store.NewEnvVar{Name: "HOOK_TOKEN", Type: "secret", Value: "first"})
	if err != nil {
		t.Fatal(err)
	}
	e.newWebhook(rcv.URL+"/in/{{HOOK_TOKEN}}", []string{"uptime.down"}, e.check)
	newValue := "second"
	if _, err := e.st.UpdateEnvVar(ctx, store.SystemActor, e.org, v.ID, store.EnvVarPatch{Value: &newValue}); err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{})
	e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the delivery", func() bool { return len(rcv.requests()) == 1 }))
	if p := rcv.requests()[0].Path; p != "/in/second" {
		t.Fatalf("path %q, want the value at delivery time", p)
	}

	// A variable that disappears makes the attempt fail, without the URL in the error.
	hook, _ := e.newWebhook("http://{{HOOK_HOST}}/x", []string{"uptime.up"}, e.check)
	e.emit("uptime.up", e.check, nil)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the failed attempt", func() bool {
		ds, _, _ := e.st.ListDeliveries(ctx, e.org, hook, 1, 0)
		return len(ds) == 1 && len(ds[0].Attempts) == 1
	}))
	ds, _, _ := e.st.ListDeliveries(ctx, e.org, hook, 1, 0)
	if msg := *ds[0].Attempts[0].Error; !strings.Contains(msg, "{{HOOK_HOST}}, which is not defined") || ds[0].Status != store.DeliveryPending {
		t.Fatalf("attempt %+v", ds[0])
	}
}

func TestNotifierDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	target := newReceiver(t, nil)
	redirect := newReceiver(t, func(int) int { return 307 })
	hook, _ := e.newWebhook(redirect.URL, []string{"uptime.down"}, e.check)
	e.run(notifier.Config{Backoff: []time.Duration{time.Hour}})
	e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the attempt", func() bool { return len(redirect.requests()) == 1 }))
	time.Sleep(100 * time.Millisecond)
	if len(target.requests()) != 0 {
		t.Fatal("a redirect was followed")
	}
	ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
	if len(ds) != 1 || ds[0].Status != store.DeliveryPending || *ds[0].LastStatusCode != 307 {
		t.Fatalf("deliveries %+v", ds)
	}
}

func TestSignMatchesStandardWebhooks(t *testing.T) {
	t.Parallel()
	// The example of the Standard Webhooks specification.
	got, err := notifier.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
		[]byte(`{"test": 2432232314}`))
	if err != nil || got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("Sign = %q, %v", got, err)
	}
	_ = uuid.Nil
}

func TestNotifierWebhookDeletedMidAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var once sync.Once
	inFlight := make(chan struct{})
	rcv := newReceiver(t, nil)
	slow := newReceiver(t, func(int) int {
		once.Do(func() { close(inFlight) })
		time.Sleep(300 * time.Millisecond)
		return 200
	})
	kept, _ := e.newWebhook(rcv.URL, []string{"uptime.down"}, e.check)
	gone, _ := e.newWebhook(slow.URL, []string{"uptime.down"}, e.check)
	e.run(notifier.Config{Workers: 1})
	e.emit("uptime.down", e.check, nil)
	<-inFlight
	if err := e.st.DeleteWebhook(context.Background(), store.SystemActor, e.org, gone); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the other webhook's delivery to be recorded", func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, kept, 1, 0)
		return len(ds) == 1 && ds[0].Status == store.DeliveryDelivered
	}))
}

// TestNotifierRoutesHeartbeatAndStatusPageEvents routes the other producers' events by the
// resource their payload names (heartbeat/monitor.go, store/statuspages_incidents.go).
func TestNotifierRoutesHeartbeatAndStatusPageEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	hb, page, otherPage := uuid.New(), uuid.New(), uuid.New()
	if _, err := e.st.Pool().Exec(ctx, `INSERT INTO heartbeats (id, org_id, name, grace_period, report_period) VALUES ($1, $2, 'nightly', 300, 3600)`, hb, e.org); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uuid.UUID{page, otherPage} {
		if _, err := e.st.Pool().Exec(ctx, `INSERT INTO status_pages (id, org_id, name, subdomain) VALUES ($1, $2, 'Status', $3)`,
			id, e.org, "s"+id.String()[:8]); err != nil {
			t.Fatal(err)
		}
	}
	rcv := newReceiver(t, nil)
	create := func(path string, events []string, a store.WebhookAssociations) {
		if _, err := e.st.CreateWebhook(ctx, store.SystemActor, e.org, store.NewWebhook{URL: rcv.URL + path, Events: events,
			Secret: newSecret(), WebhookAssociations: a}); err != nil {
			t.Fatal(err)
		}
	}
	create("/hb", []string{"heartbeat.down"}, store.WebhookAssociations{HeartbeatIDs: []uuid.UUID{hb}})
	create("/page", []string{"status_page.incident.started"}, store.WebhookAssociations{StatusPageIDs: []uuid.UUID{page}})
	create("/other-page", []string{"status_page.incident.started"}, store.WebhookAssociations{StatusPageIDs: []uuid.UUID{otherPage}})
	insert := func(event string, resource uuid.UUID, payload string) uuid.UUID {
		id := uuid.Must(uuid.NewV7())
		if _, err := e.st.Pool().Exec(ctx, `INSERT INTO outbox (id, org_id, event_type, check_id, alert_priority, payload, created_at, next_attempt_at)
			VALUES ($1, $2, $3, $4, 'LOW', $5, now(), now())`, id, e.org, event, resource, payload); err != nil {
			t.Fatal(err)
		}
		return id
	}
	e.run(notifier.Config{})
	hbEvent := insert("heartbeat.down", hb, `{"event":"heartbeat.down","reminder":false,"occurred_at":"2026-11-21T10:00:00.123456Z",
		"heartbeat":{"id":"`+hb.String()+`","name":"nightly","status":"DOWN","alerts":{"user_alerts":[],"webhook_alerts":[]}}}`)
	pageEvent := insert("status_page.incident.started", uuid.Nil, `{"event":"status_page.incident.started","occurred_at":"2026-11-21T10:00:00.000Z",
		"status_page":{"id":"`+page.String()+`","name":"Status"},"incident":{"id":"`+uuid.NewString()+`","title":"Outage"}}`)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("both events", func() bool { return len(rcv.requests()) >= 2 }))
	time.Sleep(300 * time.Millisecond)
	got := map[string]map[string]any{}
	for _, g := range rcv.requests() {
		var doc map[string]any
		_ = json.Unmarshal(g.Body, &doc)
		got[g.Path] = doc
	}
	if len(rcv.requests()) != 2 || got["/hb"]["id"] != hbEvent.String() || got["/page"]["id"] != pageEvent.String() {
		t.Fatalf("requests %v", got)
	}
	if d := got["/hb"]["data"].(map[string]any); d["heartbeat"].(map[string]any)["name"] != "nightly" || got["/hb"]["occurred_at"] != "2026-11-21T10:00:00.123Z" {
		t.Fatalf("heartbeat document %v", got["/hb"])
	}
	if d := got["/page"]["data"].(map[string]any); d["incident"].(map[string]any)["title"] != "Outage" || d["status_page"].(map[string]any)["name"] != "Status" {
		t.Fatalf("status page document %v", got["/page"])
	}
}

func TestNotifierDeniesPrivateTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	hook, _ := e.newWebhook(rcv.URL, []string{"uptime.down"}, e.check)
	e.run(notifier.Config{DenyPrivateTargets: true, Backoff: []time.Duration{time.Hour}})
	e.emit("uptime.down", e.check, nil)
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the refused attempt", func() bool {
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
		return len(ds) == 1 && ds[0].LastError != nil
	}))
	ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
	if len(rcv.requests()) != 0 || !strings.Contains(*ds[0].LastError, "does not allow") || strings.Contains(*ds[0].LastError, rcv.URL) {
		t.Fatalf("requests %d, error %q", len(rcv.requests()), *ds[0].LastError)
	}
}

// TestNotifierDeniesSpecialPurposeForms sends webhooks to addresses the notifier's own policy
// once let through (this-network 0/8, NAT64 and 6to4 spellings of loopback, SIIT): with private
// targets denied, each is refused at connect time by the shared outbound policy.
func TestNotifierDeniesSpecialPurposeForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	urls := []string{"http://0.1.2.3:9/", "http://[64:ff9b::7f00:1]:9/", "http://[2002:7f00:1::1]:9/",
		"http://[::ffff:0:7f00:1]:9/", "http://[64:ff9b:1::a00:1]:9/", "http://198.18.0.1:9/"}
	var hooks []uuid.UUID
	for _, u := range urls {
		hook, _ := e.newWebhook(u, []string{"uptime.down"}, e.check)
		hooks = append(hooks, hook)
	}
	e.run(notifier.Config{DenyPrivateTargets: true, Backoff: []time.Duration{time.Hour}})
	e.emit("uptime.down", e.check, nil)
	for i, hook := range hooks {
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the attempt to "+urls[i], func() bool {
			ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
			return len(ds) == 1 && ds[0].LastError != nil
		}))
		ds, _, _ := e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
		if !strings.Contains(*ds[0].LastError, "does not allow") {
			t.Errorf("%s: error %q, want the policy's refusal", urls[i], *ds[0].LastError)
		}
	}
}
