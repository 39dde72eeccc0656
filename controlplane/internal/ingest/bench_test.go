package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// BenchmarkIngest measures results stored per second end to end: agents stream final attempts
// over real gRPC streams; the control plane de-duplicates, COPYs them into the partitioned
// results table, judges every run (3 regions each) and acks. The clock stops when the last ack
// arrives. Run with a fixed count, e.g.
//
//	go test -run '^$' -bench Ingest -benchtime 100000x ./internal/ingest/
func BenchmarkIngest(b *testing.B) {
	const (
		checks           = 1000
		streamsPerRegion = 2
	)
	regions := []string{"cloud:us-east-1", "cloud:eu-west-1", "cloud:ap-southeast-1"}
	h := newHarness(b, harnessOptions{batcher: BatcherConfig{FlushInterval: 25 * time.Millisecond}})
	ctx := context.Background()
	m, err := NewMaintainer(MaintainerConfig{}, MaintainerDeps{Store: h.st, Now: h.clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Maintain(ctx); err != nil {
		b.Fatal(err)
	}
	ids := make([]uuid.UUID, checks)
	for i := range ids {
		ids[i] = uuid.New()
	}
	h.exec(`INSERT INTO checks (id, org_id, kind, name, test_interval, timeout_ms, test_regions, alert_priority,
			confirmation_period_seconds, recovery_period_seconds, reminder_alert_interval_minutes, spec)
		SELECT id, $2, 'UPTIME', 'bench', 60, 5000, $3, 'HIGH', 60, 60, -1, '{"url": "https://example.com/", "method": "GET"}'
		FROM unnest($1::uuid[]) AS id`, ids, h.org, regions)

	// Results: run k of check c is one job with one final attempt per region; about 2% fail.
	// Runs follow each other closely, so that every result is on time and none is checked
	// in the future when the clock stands at the last of them (ingest's bounds).
	type stream struct {
		agent   *agent
		results []*vantagev1.CheckResult
	}
	var streams []*stream
	for _, r := range regions {
		for i := range streamsPerRegion {
			streams = append(streams, &stream{agent: h.connect("bench-"+r+"-"+string(rune('a'+i)), r)})
		}
	}
	t0 := h.clock.Now()
	last := t0 // the latest run's due time
	total := 0
	for k := 0; total < b.N; k++ {
		for c, id := range ids {
			job := uuid.New()
			at := t0.Add(time.Duration(k)*10*time.Millisecond + time.Duration(c)*time.Millisecond)
			if at.After(last) {
				last = at
			}
			for ri, region := range regions {
				if total == b.N {
					break
				}
				passing := (k*7+c*13+ri)%50 != 0
				s := streams[ri*streamsPerRegion+c%streamsPerRegion]
				r := h.result(id, job, region, passing, at)
				h.sign(r) // as the scheduler signed its job
				s.results = append(s.results, r)
				total++
			}
		}
	}

	h.clock.Set(last.Add(time.Second))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, len(streams))
	for _, s := range streams {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i, r := range s.results {
				if err := s.agent.stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Result{
					Result: &vantagev1.ResultEnvelope{Seq: uint64(i + 1), Result: r}}}); err != nil {
					errs <- err.Error()
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range s.results {
				msg, err := s.agent.stream.Recv()
				if err != nil {
					errs <- err.Error()
					return
				}
				if ack := msg.GetAck(); !ack.GetStored() {
					errs <- "not stored: " + ack.GetError()
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for e := range errs {
		b.Fatal(e)
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != b.N {
		b.Fatalf("%d results stored, want %d", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "results/s")
}
