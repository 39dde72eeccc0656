package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/check"
)

// BenchmarkShedRun compares what a run costs the scheduler when it is shed — the rotation, the
// skipped row kept and written with the others in one statement per 1,000 — with publishing
// it to a real JetStream and taking its ack, the scheduler's part of a run that is not shed
// (the ceiling; agents, ingest and the result's rows come on top of it). Per run, one region:
//
//	go test ./controlplane/internal/scheduler/ -run '^$' -bench BenchmarkShedRun -benchtime 20000x
func BenchmarkShedRun(b *testing.B) {
	e := setup(b)
	id := e.addCheck(b, testCheck{Kind: check.TCP, Interval: 10, TCPHost: ptr("db.example.test"), TCPPort: ptr(5432)})
	cs, err := e.st.SchedulableChecksByID(context.Background(), []uuid.UUID{id})
	if err != nil || len(cs) != 1 {
		b.Fatalf("load check: %v (%d)", err, len(cs))
	}
	p, err := buildPlan(cs[0], nil)
	if err != nil {
		b.Fatal(err)
	}
	region := p.regions[0]
	base := time.Now().UnixMilli()

	b.Run("published", func(b *testing.B) {
		m, err := newMetrics(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		js, err := jetstream.New(e.nc, jetstream.WithPublishAsyncMaxPending(8192))
		if err != nil {
			b.Fatal(err)
		}
		pub := newPublisher(js, 8192, stallWait, m, time.Now, slog.New(slog.DiscardHandler))
		done := make(chan struct{})
		go func() { pub.collect(); close(done) }()
		b.ResetTimer()
		for i := range b.N {
			due := base + int64(i)*10_000
			for !pub.publish(p, p.regions, due, due+10_000, false, false, nil) {
				time.Sleep(time.Millisecond) // every in-flight slot taken: let acks come in
			}
		}
		<-pub.barrier()
		b.StopTimer()
		pub.drain(drainTimeout)
		<-done
	})

	b.Run("shed", func(b *testing.B) {
		m, err := newMetrics(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		s := &Scheduler{m: m, store: e.st}
		behind := newBacklogs()
		behind[region].Store(true)
		rot := newRotation()
		en := &entry{plan: p, release: noTime}
		ctx := context.Background()
		b.ResetTimer()
		for i := range b.N {
			due := base + int64(i)*10_000
			en.next = due
			// Every run is shed: the rotation forgets the previous shed, as a published
			// run in between would.
			delete(rot.shedAt, runKey{p.id, region})
			_, shed := s.split(en, behind, rot)
			if len(shed) != 1 {
				b.Fatalf("run %d not shed", i)
			}
			s.settleRun(en, due, shed, rot)
			if (i+1)%1000 == 0 || i == b.N-1 {
				if _, err := s.store.RecordSkippedRuns(ctx, s.skips.take()); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
