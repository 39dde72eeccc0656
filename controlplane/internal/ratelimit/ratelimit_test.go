package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newShared is a replica's limiter on st, with its metrics in reg (a private one when nil).
func newShared(t testing.TB, st ratelimit.Store, reg prometheus.Registerer) *ratelimit.Shared {
	t.Helper()
	l, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st, Now: func() time.Time { return t0 }, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestBucket steps one replica's buckets through time: the token bucket of x/time/rate.
func TestBucket(t *testing.T) {
	t.Parallel()
	l := newShared(t, storetest.New(t), nil)
	rule := ratelimit.Rule{Name: "test", Every: time.Second, Burst: 2}
	now := t0
	steps := []struct {
		name    string
		advance time.Duration
		key     string
		wait    time.Duration
	}{
		{"burst 1", 0, "a", 0},
		{"burst 2", 0, "a", 0},
		{"over the burst", 0, "a", time.Second},
		{"refused events take nothing", 0, "a", time.Second},
		{"another key", 0, "b", 0},
		{"half refilled", 500 * time.Millisecond, "a", 500 * time.Millisecond},
		{"refilled", 500 * time.Millisecond, "a", 0},
		{"empty again", 0, "a", time.Second},
		{"a long idle bucket is full", time.Hour, "a", 0},
		{"and holds the burst only", 0, "a", 0},
		{"then refuses", 0, "a", time.Second},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		got, err := l.Reserve(context.Background(), rule, s.key, now)
		if err != nil || got != s.wait {
			t.Fatalf("%s: wait %v (%v), want %v", s.name, got, err, s.wait)
		}
	}
	// Another rule's bucket of the same key is its own.
	if got, err := l.Reserve(context.Background(), ratelimit.Rule{Name: "other", Every: time.Second, Burst: 1}, "a", now); err != nil || got != 0 {
		t.Fatalf("another rule: wait %v (%v)", got, err)
	}
}

// TestReplicasShareBuckets is the property the package exists for: two replicas (two limiters
// on one database) taking turns, and then racing, allow the burst once in all, not once each.
func TestReplicasShareBuckets(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	a, b := newShared(t, st, nil), newShared(t, st, nil)
	rule := ratelimit.Rule{Name: "test", Every: time.Minute, Burst: 10}

	allowed := 0
	for i := range 40 {
		l := []*ratelimit.Shared{a, b}[i%2]
		wait, err := l.Reserve(context.Background(), rule, "turns", t0)
		if err != nil {
			t.Fatal(err)
		}
		if wait == 0 {
			allowed++
		}
	}
	if allowed != rule.Burst {
		t.Fatalf("taking turns: %d allowed, want %d", allowed, rule.Burst)
	}

	var raced atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			l := []*ratelimit.Shared{a, b}[i%2]
			wait, err := l.Reserve(context.Background(), rule, "race", t0)
			if err != nil {
				t.Error(err)
			}
			if wait == 0 {
				raced.Add(1)
			}
		})
	}
	wg.Wait()
	if raced.Load() != int64(rule.Burst) {
		t.Fatalf("racing: %d allowed, want %d", raced.Load(), rule.Burst)
	}
	// A refusal seen by one replica holds on the other, and the refill is shared too.
	if wait, _ := b.Reserve(context.Background(), rule, "turns", t0.Add(30*time.Second)); wait != 30*time.Second {
		t.Fatalf("b half a minute later: wait %v, want 30s", wait)
	}
	if wait, _ := a.Reserve(context.Background(), rule, "turns", t0.Add(time.Minute)); wait != 0 {
		t.Fatalf("a a minute later: wait %v, want 0", wait)
	}
	if wait, _ := b.Reserve(context.Background(), rule, "turns", t0.Add(time.Minute)); wait != time.Minute {
		t.Fatalf("b after a took the refilled token: wait %v, want 1m", wait)
	}
}

// TestSweepForgetsFullBuckets: rows of buckets full for over a minute are deleted, the others
// kept, and no decision changes.
func TestSweepForgetsFullBuckets(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	l := newShared(t, st, nil) // its clock reads t0
	rule := ratelimit.Rule{Name: "test", Every: time.Second, Burst: 1}
	ctx := context.Background()
	for key, at := range map[string]time.Time{"old": t0.Add(-time.Hour), "recent": t0.Add(-30 * time.Second), "busy": t0} {
		if _, err := l.Reserve(ctx, rule, key, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := st.SweepRateLimits(ctx, t0.Add(time.Hour)) // what the sweep left
	if err != nil || n != 2 {
		t.Fatalf("rows left after the sweep: %d (%v), want 2 (recent, busy)", n, err)
	}
}

// TestStoreDown: when PostgreSQL does not answer (a frozen server), a FailOpen limit allows
// and a FailClosed one refuses with the store's error, both within the limiter's timeout; both
// are counted.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	pg := storetest.NewServer(t)
	st, err := store.Open(context.Background(), pg.NewDatabase(), storetest.NewKeyring(t))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	l, err := ratelimit.New(ratelimit.Config{Timeout: 200 * time.Millisecond}, ratelimit.Deps{Store: st, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	pg.Freeze()
	defer func() { pg.Thaw(); st.Close() }()
	open := ratelimit.Rule{Name: "open", Every: time.Second, Burst: 1, OnError: ratelimit.FailOpen}
	closed := ratelimit.Rule{Name: "closed", Every: time.Second, Burst: 1, OnError: ratelimit.FailClosed}
	start := time.Now()
	if wait, err := l.Reserve(context.Background(), open, "k", t0); wait != 0 || err != nil {
		t.Fatalf("fail open: wait %v, err %v", wait, err)
	}
	if _, err := l.Reserve(context.Background(), closed, "k", t0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("fail closed: err %v, want store.ErrUnavailable", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("two decisions took %s with a timeout of 200ms each", took)
	}
	want := `
# HELP vantage_ratelimit_decisions_total Rate-limit decisions by limit and result (allowed, limited, error_allowed, error_refused).
# TYPE vantage_ratelimit_decisions_total counter
vantage_ratelimit_decisions_total{limit="closed",result="error_refused"} 1
vantage_ratelimit_decisions_total{limit="open",result="error_allowed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vantage_ratelimit_decisions_total"); err != nil {
		t.Fatal(err)
	}
}

// TestRuleValidated: a rule without a rate or a burst is an error, never a silent pass.
func TestRuleValidated(t *testing.T) {
	t.Parallel()
	l := newShared(t, storetest.New(t), nil)
	for _, r := range []ratelimit.Rule{{Name: "no rate", Burst: 1}, {Name: "no burst", Every: time.Second}} {
		if _, err := l.Reserve(context.Background(), r, "k", t0); err == nil {
			t.Errorf("%s: no error", r.Name)
		}
	}
}

// BenchmarkReserve measures one allowed decision against PostgreSQL (postgres) beside its
// ceiling, the in-memory token bucket per key the limiter replaced (x/time/rate behind a
// mutex), in the same run: compare ns/op of the sub-benchmarks. Keys rotate over 1,000 so
// that every decision is allowed. postgres-refused is a client hammering a limited key: after
// the first refusal it is answered from the replica's memory.
func BenchmarkReserve(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("org-%d", i)
	}
	rule := ratelimit.Rule{Name: "bench", Every: time.Nanosecond, Burst: 1 << 30}
	b.Run("memory", func(b *testing.B) {
		m := newMemoryBuckets(rule)
		i := 0
		for b.Loop() {
			m.reserve(keys[i%len(keys)], time.Now())
			i++
		}
	})
	b.Run("postgres", func(b *testing.B) {
		l := newShared(b, storetest.New(b), nil)
		ctx := context.Background()
		i := 0
		for b.Loop() {
			if _, err := l.Reserve(ctx, rule, keys[i%len(keys)], time.Now()); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("postgres-refused", func(b *testing.B) {
		l := newShared(b, storetest.New(b), nil)
		ctx := context.Background()
		limited := ratelimit.Rule{Name: "bench", Every: time.Hour, Burst: 1}
		for b.Loop() {
			if _, err := l.Reserve(ctx, limited, "hammered", time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// memoryBuckets is the benchmark's ceiling: a token bucket per key in this process's memory.
type memoryBuckets struct {
	rule ratelimit.Rule
	mu   sync.Mutex
	m    map[string]*rate.Limiter
}

func newMemoryBuckets(rule ratelimit.Rule) *memoryBuckets {
	return &memoryBuckets{rule: rule, m: map[string]*rate.Limiter{}}
}

func (m *memoryBuckets) reserve(key string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.m[key]
	if l == nil {
		l = rate.NewLimiter(rate.Every(m.rule.Every), m.rule.Burst)
		m.m[key] = l
	}
	return l.AllowN(now, 1)
}
