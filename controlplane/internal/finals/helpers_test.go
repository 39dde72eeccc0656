package finals

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/ingest"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

var _ ingest.Sink = (*Sink)(nil)

// natsURL is the machine's NATS server, which these tests share: each uses subjects of its own.
const natsURL = "nats://127.0.0.1:4222"

// connect opens a connection to the machine's NATS, closed when the test ends; it fails the
// test when the server is not there.
func connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(natsURL, append([]nats.Option{nats.Name(t.Name())}, opts...)...)
	if err != nil {
		t.Fatalf("NATS at %s is required: %v", natsURL, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// prefix is a subject prefix of the test's own, so that parallel tests do not hear each other.
func prefix() string {
	return "test.finals." + strings.ReplaceAll(uuid.NewString(), "-", "") + "."
}

// checkIn returns a check id of shard k.
func checkIn(k int) uuid.UUID {
	for {
		if id := uuid.New(); shard.Of(id) == k {
			return id
		}
	}
}

// final is a final attempt of check, as ingest makes it.
func final(org, check uuid.UUID, passing bool) store.ResultRow {
	at := time.Now().UTC().Truncate(time.Millisecond)
	return store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org, CheckID: check, JobID: uuid.Must(uuid.NewV7()),
		Region: "cloud:us-east-1", AttemptNumber: 2, IsFinalAttempt: true, ScheduledAt: at.Add(-3 * time.Second),
		CheckedAt: at, Passing: passing, ResponseTimeMs: 123.25, BodyAvailability: "NONE"}
}

// heard keeps the messages published under a prefix.
type heard struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func listen(t testing.TB, nc *nats.Conn, prefix string) *heard {
	t.Helper()
	h := &heard{}
	sub, err := nc.Subscribe(prefix+">", func(m *nats.Msg) {
		h.mu.Lock()
		h.msgs = append(h.msgs, m)
		h.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *heard) snapshot() []*nats.Msg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*nats.Msg(nil), h.msgs...)
}

func (h *heard) count(n int) func() error {
	return func() error {
		if got := len(h.snapshot()); got < n {
			return fmt.Errorf("%d messages heard, want %d", got, n)
		}
		return nil
	}
}

// metric is the value of a counter or gauge of reg.
func metric(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	return 0
}
