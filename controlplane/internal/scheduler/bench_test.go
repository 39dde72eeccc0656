package scheduler

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// BenchmarkScheduler is the scheduler's load test: 100,000 uptime checks at 30s intervals in 3
// regions (10,000 jobs/s), inserted into a real PostgreSQL and loaded by the real scheduler,
// publishing to a real JetStream (an in-process nats-server with file storage, reached over
// loopback TCP). It runs once whatever b.N is:
//
//	go test ./internal/scheduler/ -run '^$' -bench BenchmarkScheduler -benchtime 1x -timeout 10m
//
// After a warm-up it measures a window (30s: every check runs once, and the one replica resyncs all
// checks from the database twice) and then reads every job back from the stream: lateness is the time JetStream stored a job minus its scheduled_at,
// the publish rate is jobs due in the window over its length. VANTAGE_BENCH_CHECKS and
// VANTAGE_BENCH_WINDOW (a duration) scale it down.
func BenchmarkScheduler(b *testing.B) {
	checks := envInt(b, "VANTAGE_BENCH_CHECKS", 100_000)
	window := envDuration(b, "VANTAGE_BENCH_WINDOW", 30*time.Second)
	const interval = 30 // seconds
	regions := []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-southeast-2"}

	e := setup(b)
	ctx := context.Background()
	start := time.Now()
	e.exec(b, `INSERT INTO checks (id, org_id, kind, name, test_interval, timeout_ms, test_regions, alert_priority,
			confirmation_period_seconds, recovery_period_seconds, spec)
		SELECT gen_random_uuid(), $1, 'UPTIME', 'bench ' || i, $2, 10000, $3, 'HIGH', 60, 180,
			jsonb_build_object('url', 'https://service-' || i || '.example.test/health', 'method', 'GET',
				'headers', '{"Accept": "application/json"}'::jsonb, 'verify_ssl', true, 'follow_redirects', true,
				'assertions', '[{"type": "TEXT_BODY", "property": "", "comparison": "CONTAINS", "expected": "ok"}]'::jsonb)
		FROM generate_series(1, $4) AS i`, e.orgID, interval, regions, checks)
	b.Logf("inserted %d checks in %v", checks, time.Since(start))

	reg := prometheus.NewRegistry()
	// Resync every 15s so that full reloads of every check happen inside the window. Nothing
	// drains the queues, which would otherwise be judged behind and shed.
	s, err := New(Config{ResyncInterval: 15 * time.Second, NoShedding: true}, Deps{Store: e.st, NATS: e.nc, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start = time.Now()
	go func() { done <- s.Run(runCtx) }()
	testwait.Eventually(b, time.Minute, func() error {
		return atLeast(checks, "scheduled checks", int(gauge(reg, "vantage_scheduler_scheduled_checks")))
	})
	loaded := time.Since(start)
	b.Logf("the replica loaded %d checks in %v", checks, loaded)

	// Warm up for a few seconds, then measure whole seconds of due times.
	from := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	to := from.Add(window)
	b.ResetTimer()
	time.Sleep(time.Until(to) + 2*time.Second) // the window, and acks of its last runs
	b.StopTimer()
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}

	var lateness []time.Duration
	for _, r := range regions {
		lateness = append(lateness, readBack(b, e.js, r, from, to)...)
	}
	expected := float64(checks*len(regions)) * window.Seconds() / interval
	b.Logf("window %v..%v: %d jobs due, expected %.0f", from.Format(time.TimeOnly), to.Format(time.TimeOnly), len(lateness), expected)
	if len(lateness) == 0 {
		b.Fatal("no jobs in the window")
	}
	slices.Sort(lateness)
	q := func(p float64) float64 {
		return float64(lateness[int(p*float64(len(lateness)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lateness))/window.Seconds(), "jobs/s")
	b.ReportMetric(float64(len(lateness))/expected*100, "%_of_due_jobs")
	b.ReportMetric(q(0.50), "p50_lateness_ms")
	b.ReportMetric(q(0.99), "p99_lateness_ms")
	b.ReportMetric(q(1), "max_lateness_ms")
	b.ReportMetric(loaded.Seconds(), "load_s")
	b.ReportMetric(counter(reg, "vantage_scheduler_load_errors_total"), "load_errors")
	for _, name := range []string{"vantage_scheduler_publish_errors_total", "vantage_scheduler_jobs_skipped_total", "vantage_scheduler_jobs_duplicate_total"} {
		if v := counter(reg, name); v != 0 {
			b.Errorf("%s = %v, want 0", name, v)
		}
	}
}

// readBack drains region's consumer and returns the lateness (stored − scheduled_at) of the
// jobs due in [from, to).
func readBack(b *testing.B, js jetstream.JetStream, region string, from, to time.Time) []time.Duration {
	ctx := context.Background()
	cons, err := js.Consumer(ctx, wire.JobStream, wire.ConsumerName(region))
	if err != nil {
		b.Fatal(err)
	}
	var out []time.Duration
	for {
		batch, err := cons.FetchNoWait(10000)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			j, err := wire.DecodeJob(m.Data())
			if err != nil {
				b.Fatal(err)
			}
			md, err := m.Metadata()
			if err != nil {
				b.Fatal(err)
			}
			if due := time.UnixMilli(j.ScheduledAtUnixMs); !due.Before(from) && due.Before(to) {
				out = append(out, md.Timestamp.Sub(due))
			}
			_ = m.Ack()
		}
		if batch.Error() != nil {
			b.Fatal(batch.Error())
		}
		if n == 0 {
			return out
		}
	}
}

func gauge(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

func envInt(b *testing.B, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	if s := os.Getenv(name); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return d
	}
	return def
}
