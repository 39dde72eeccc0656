package notifier_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// BenchmarkDelivery measures the deliveries per second one notifier (one replica, default
// options) sustains against a local receiver: b.N deliveries, ten webhooks per event, fan-out
// included; the events come from 50 checks ("50 checks"), or all from one ("1 check"), whose
// alerts reach each webhook one after another, since they are delivered in order.
//
//	go test ./internal/notifier/ -run '^$' -bench BenchmarkDelivery -benchtime 5000x
func BenchmarkDelivery(b *testing.B) {
	for _, n := range []int{50, 1} {
		b.Run(fmt.Sprintf("%d checks", n), func(b *testing.B) {
			e := newEnv(b)
			rcv := newReceiver(b, nil)
			checks := []uuid.UUID{e.check}
			for len(checks) < n {
				checks = append(checks, e.newCheck(fmt.Sprintf("c%d", len(checks)), nil, nil))
			}
			const hooks = 10
			for i := 0; i < hooks; i++ {
				e.newWebhook(fmt.Sprintf("%s/h%d", rcv.URL, i), []string{"uptime.down"}, checks...)
			}
			events := (b.N + hooks - 1) / hooks
			for i := 0; i < events; i++ {
				e.emit("uptime.down", checks[i%n], nil)
			}
			b.ResetTimer()
			start := time.Now()
			stop := e.run(notifier.Config{})
			testwait.Eventually(b, 10*time.Minute, testwait.Holds("every delivery", func() bool { return len(rcv.requests()) >= events*hooks }))
			elapsed := time.Since(start)
			b.StopTimer()
			stop()
			b.ReportMetric(float64(events*hooks)/elapsed.Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkLatency1000Webhooks measures the time from an outbox insert (a status transition
// committing) to each webhook's request arriving, with 1,000 webhooks subscribed to one check.
//
//	go test ./internal/notifier/ -run '^$' -bench BenchmarkLatency1000Webhooks -benchtime 5x
func BenchmarkLatency1000Webhooks(b *testing.B) {
	e := newEnv(b)
	rcv := newReceiver(b, nil)
	const hooks = 1000
	for i := 0; i < hooks; i++ {
		e.newWebhook(fmt.Sprintf("%s/h%d", rcv.URL, i), []string{"uptime.down"}, e.check)
	}
	e.run(notifier.Config{})
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := len(rcv.requests())
		at := time.Now()
		e.emit("uptime.down", e.check, nil)
		testwait.Eventually(b, time.Minute, testwait.Holds("every webhook", func() bool { return len(rcv.requests()) >= before+hooks }))
		for _, g := range rcv.requests()[before:] {
			lat = append(lat, g.At.Sub(at))
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(pct(0), "first_ms")
}

// BenchmarkIntegrationAlertLatency measures the time from a check's DOWN transition (the
// evaluator's commit) to the Slack message arriving at a local fake, over 60 alerts one after
// another, with its ceiling measured in the same run: a bare Go client POSTing the same fake.
// (It was a test with a wall-clock bound; the figure is a benchmark's, and the tests hold the
// properties: every alert delivered, in order.)
//
//	go test ./controlplane/internal/notifier/ -run '^$' -bench BenchmarkIntegrationAlertLatency -benchtime 1x
func BenchmarkIntegrationAlertLatency(b *testing.B) {
	t := b
	e := newEnv(t)
	fake := providerCaseOf(t, integration.Slack).fake(t)
	id := e.newIntegration(integration.Slack, integration.Settings{"webhook_url": fake.URL + "/services/T000/B000/XXXX"})
	const alerts = 60
	checks := make([]uuid.UUID, alerts)
	for i := range checks {
		checks[i] = e.newCheck(fmt.Sprintf("c%d", i), nil, nil)
		e.alertTo(checks[i], integration.Slack, id)
	}
	d := newDriver(t, e)
	e.run(notifier.Config{})
	lat := make([]time.Duration, 0, alerts)
	for i, c := range checks {
		at := d.until(c, false, "DOWN")
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the message", func() bool { return len(fake.requests()) >= i+1 }))
		lat = append(lat, fake.requests()[i].At.Sub(at))
	}
	if bad := fake.refused(); len(bad) > 0 {
		t.Fatalf("refused: %v", bad)
	}
	bare := make([]time.Duration, 0, alerts)
	for i := 0; i < alerts; i++ {
		start := time.Now()
		resp, err := http.Post(fake.URL+"/services/T000/B000/XXXX", "application/json",
			strings.NewReader(`{"text":"UP","blocks":[{"type":"header","text":{"type":"plain_text","text":"UP"}},{"type":"divider"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		bare = append(bare, time.Since(start))
	}
	p := func(ds []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p(lat, .5)), "p50_ms")
	b.ReportMetric(ms(p(lat, .99)), "p99_ms")
	b.ReportMetric(ms(p(bare, .99)), "ceiling_p99_ms")
	b.ReportMetric(float64(p(lat, .99))/float64(max(p(bare, .99), time.Microsecond)), "p99_vs_ceiling")
}
