package finals

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// benchFinals are n finals of one shard's check, as one batch publishes them.
func benchFinals(n int) []store.ResultRow {
	org, check := uuid.New(), checkIn(17)
	rows := make([]store.ResultRow, n)
	for i := range rows {
		rows[i] = final(org, check, i%3 != 0)
	}
	return rows
}

// BenchmarkEncodeDecode: the wire form of a message of 100 finals, each way; bytes/final is
// its size.
func BenchmarkEncodeDecode(b *testing.B) {
	rows := benchFinals(100)
	data, err := Encode(rows)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		data, _ := Encode(rows)
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data))/100, "bytes/final")
}

// countJudge counts the finals it is handed, and does nothing else.
type countJudge struct{ n atomic.Int64 }

func (j *countJudge) Take(context.Context, []int) error { return nil }
func (j *countJudge) Give([]int)                        {}
func (j *countJudge) Judge(_ context.Context, finals []store.ResultRow) error {
	j.n.Add(int64(len(finals)))
	return nil
}

// BenchmarkRouter: messages of 100 finals from a publisher through the machine's NATS and the
// router to a judge that only counts them (one op = one message). The ceiling, in the same
// run, is the same messages to a bare subscription that only counts them: compare the ns/op.
func BenchmarkRouter(b *testing.B) {
	data, err := Encode(benchFinals(100))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("router", func(b *testing.B) {
		j := &countJudge{}
		// No pending limits: the publisher outruns any subscriber, and a drop would re-sync.
		rt := startRouter(b, RouterConfig{PendingMsgs: -1, PendingBytes: -1}, j, connect(b))
		rt.take(b, 17)
		testwait.Eventually(b, 5*time.Second, func() error {
			if metric(rt.reg, "vantage_finals_queued") != 0 {
				return fmt.Errorf("queue not empty")
			}
			return nil
		})
		pub := connect(b)
		time.Sleep(100 * time.Millisecond) // the first Take
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		benchPublish(b, pub, Subject(rt.r.cfg.SubjectPrefix, 17), data, b.N)
		testwait.Eventually(b, time.Minute, func() error {
			if n := j.n.Load(); n < int64(100*b.N) {
				return fmt.Errorf("%d of %d finals judged", n, 100*b.N)
			}
			return nil
		})
	})
	b.Run("bare-nats", func(b *testing.B) {
		var n atomic.Int64
		nc := connect(b)
		subject := prefix() + "17"
		sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
			if _, err := Decode(m.Data); err == nil {
				n.Add(1)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := sub.SetPendingLimits(-1, -1); err != nil {
			b.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			b.Fatal(err)
		}
		pub := connect(b)
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		benchPublish(b, pub, subject, data, b.N)
		testwait.Eventually(b, time.Minute, func() error {
			if got := n.Load(); got < int64(b.N) {
				return fmt.Errorf("%d of %d messages", got, b.N)
			}
			return nil
		})
	})
}

func benchPublish(b *testing.B, nc *nats.Conn, subject string, data []byte, n int) {
	for range n {
		if err := nc.Publish(subject, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
}
