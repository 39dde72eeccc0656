package notifier_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
)

// BenchmarkDelivery measures the deliveries per second one notifier (one replica, default
// options) sustains against a local receiver: b.N deliveries, ten webhooks per event, fan-out
// included.
//
//	go test ./internal/notifier/ -run '^$' -bench BenchmarkDelivery -benchtime 5000x
func BenchmarkDelivery(b *testing.B) {
	e := newEnv(b)
	rcv := newReceiver(b, nil)
	const hooks = 10
	for i := 0; i < hooks; i++ {
		e.newWebhook(fmt.Sprintf("%s/h%d", rcv.URL, i), []string{"uptime.down"}, e.check)
	}
	events := (b.N + hooks - 1) / hooks
	for i := 0; i < events; i++ {
		e.emit("uptime.down", e.check, nil)
	}
	b.ResetTimer()
	start := time.Now()
	stop := e.run(notifier.Options{})
	waitFor(b, 10*time.Minute, "every delivery", func() bool { return len(rcv.requests()) >= events*hooks })
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(events*hooks)/elapsed.Seconds(), "deliveries/s")
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
	e.run(notifier.Options{})
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := len(rcv.requests())
		at := time.Now()
		e.emit("uptime.down", e.check, nil)
		waitFor(b, time.Minute, "every webhook", func() bool { return len(rcv.requests()) >= before+hooks })
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
