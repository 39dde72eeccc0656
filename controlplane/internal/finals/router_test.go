package finals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// judge is a Judge that records what it is asked, and every call that breaks the Router's
// promises: finals of a shard before its Take returned or after its Give.
type judge struct {
	mu         sync.Mutex
	owned      map[int]bool // Take returned, Give not called since
	takes      map[int]int  // Takes that returned nil, per shard
	takeCalls  int
	gives      [][]int
	judged     map[uuid.UUID]int // final id → times judged
	judgeCalls int
	wrong      []string

	takeGate  chan struct{} // non-nil: Take waits for it to close
	takeFails int           // Takes that fail before any succeeds
	judgeFail int           // Judges that fail before any succeeds
	hold      chan struct{} // non-nil: Judge waits for it to close
	inFlight  int           // Judge calls under way
}

func newJudge() *judge {
	return &judge{owned: map[int]bool{}, takes: map[int]int{}, judged: map[uuid.UUID]int{}}
}

func (j *judge) Take(ctx context.Context, shards []int) error {
	j.mu.Lock()
	j.takeCalls++
	gate, fail := j.takeGate, j.takeFails > 0
	if fail {
		j.takeFails--
	}
	j.mu.Unlock()
	if fail {
		return errors.New("database away")
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, k := range shards {
		j.owned[k] = true
		j.takes[k]++
	}
	return nil
}

func (j *judge) Give(shards []int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inFlight > 0 {
		j.wrong = append(j.wrong, fmt.Sprintf("Give(%v) while %d judgments are under way", shards, j.inFlight))
	}
	j.gives = append(j.gives, shards)
	for _, k := range shards {
		delete(j.owned, k)
	}
}

func (j *judge) Judge(ctx context.Context, finals []store.ResultRow) error {
	j.mu.Lock()
	j.judgeCalls++
	for _, f := range finals {
		if k := shard.Of(f.CheckID); !j.owned[k] {
			j.wrong = append(j.wrong, fmt.Sprintf("final of shard %d judged while the shard is not taken", k))
		}
	}
	if j.judgeFail > 0 {
		j.judgeFail--
		j.mu.Unlock()
		return errors.New("judge failed")
	}
	for _, f := range finals {
		j.judged[f.ID]++
	}
	hold := j.hold
	j.hold = nil
	j.inFlight++
	j.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}
	j.mu.Lock()
	j.inFlight--
	j.mu.Unlock()
	return nil
}

func (j *judge) takesOf(k int) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.takes[k]
}

func (j *judge) judgedOnce(rows []store.ResultRow) func() error {
	return func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, r := range rows {
			if j.judged[r.ID] == 0 {
				return fmt.Errorf("final %s of shard %d not judged", r.ID, shard.Of(r.CheckID))
			}
		}
		return nil
	}
}

func (j *judge) check(t *testing.T) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, w := range j.wrong {
		t.Error(w)
	}
}

// routed is a running Router of its own connection and prefix, and a publisher of the same.
type routed struct {
	r   *Router
	nc  *nats.Conn
	reg *prometheus.Registry
	pub *Publisher
}

func startRouter(t testing.TB, cfg RouterConfig, j Judge, nc *nats.Conn) *routed {
	t.Helper()
	cfg.SubjectPrefix = prefix()
	if cfg.RetryMin == 0 {
		cfg.RetryMin, cfg.RetryMax = 10*time.Millisecond, 50*time.Millisecond
	}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	r, err := NewRouter(cfg, RouterDeps{NATS: nc, Judge: j, Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(PublisherConfig{SubjectPrefix: cfg.SubjectPrefix}, PublisherDeps{NATS: connect(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the router did not stop within 10s")
		}
	})
	return &routed{r: r, nc: nc, reg: reg, pub: pub}
}

// take tells the router of shards taken and waits until the server knows its subscriptions.
func (rt *routed) take(t testing.TB, shards ...int) {
	t.Helper()
	rt.r.ShardsTaken(shards)
	if err := rt.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// publish publishes n finals of each of shards, and returns them.
func (rt *routed) publish(t *testing.T, n int, shards ...int) []store.ResultRow {
	t.Helper()
	var rows []store.ResultRow
	org := uuid.New()
	for _, k := range shards {
		for range n {
			rows = append(rows, final(org, checkIn(k), true))
		}
	}
	if err := rt.pub.Publish(rows); err != nil {
		t.Fatal(err)
	}
	if err := rt.pub.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Finals published while a shard is being taken (its first Take failed, the second is under
// way) wait in the subscription, and reach the judge once Take returned, never before.
func TestTheRouterDeliversAShardsFinalsOnlyAfterItsTake(t *testing.T) {
	t.Parallel()
	j := newJudge()
	j.takeGate, j.takeFails = make(chan struct{}), 1
	rt := startRouter(t, RouterConfig{}, j, connect(t))
	rt.take(t, 3, 200)
	testwait.Eventually(t, 5*time.Second, func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.takeCalls < 2 {
			return fmt.Errorf("%d Take calls, want the failed one and another", j.takeCalls)
		}
		return nil
	})
	rows := rt.publish(t, 5, 3, 200)
	time.Sleep(300 * time.Millisecond) // time enough to deliver them, were Take not under way
	j.mu.Lock()
	early := j.judgeCalls
	j.mu.Unlock()
	if early != 0 {
		t.Errorf("%d Judge calls while Take was under way", early)
	}
	close(j.takeGate)
	testwait.Eventually(t, 5*time.Second, j.judgedOnce(rows))
	j.check(t)
	if got := metric(rt.reg, "vantage_finals_received_total"); got != 10 {
		t.Errorf("vantage_finals_received_total %v, want 10", got)
	}
	testwait.Eventually(t, 5*time.Second, func() error {
		if got := metric(rt.reg, "vantage_finals_queued"); got != 0 {
			return fmt.Errorf("vantage_finals_queued %v after every final was judged", got)
		}
		return nil
	})
}

// ShardsGiven waits for the batch the judge holds, and once it returned none of the shard's
// finals reach the judge — not those that waited meanwhile, not those published after —
// while the other shard's still do; and the judge was told to give it up after its last
// judgment of it ended.
func TestTheRouterDeliversNothingOfAShardGiven(t *testing.T) {
	t.Parallel()
	j := newJudge()
	rt := startRouter(t, RouterConfig{}, j, connect(t))
	rt.take(t, 10, 11)
	testwait.Eventually(t, 5*time.Second, func() error {
		if j.takesOf(10) == 0 || j.takesOf(11) == 0 {
			return errors.New("not taken yet")
		}
		return nil
	})

	release := make(chan struct{})
	j.mu.Lock()
	j.hold = release
	j.mu.Unlock()
	held := rt.publish(t, 2, 10, 11)
	testwait.Eventually(t, 5*time.Second, func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.inFlight == 0 {
			return errors.New("no judgment under way")
		}
		return nil
	})
	waiting := rt.publish(t, 2, 10, 11) // queued behind the judgment under way
	testwait.Eventually(t, 5*time.Second, func() error {
		if got := metric(rt.reg, "vantage_finals_received_total"); got < 8 {
			return fmt.Errorf("%v finals received, want 8", got)
		}
		return nil
	})
	given := make(chan struct{})
	go func() { rt.r.ShardsGiven([]int{10}); close(given) }()
	select {
	case <-given:
		t.Fatal("ShardsGiven returned while a judgment of the shard was under way")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	<-given
	after := rt.publish(t, 2, 10, 11)

	testwait.Eventually(t, 5*time.Second, j.judgedOnce(slices.Concat(held, waiting[2:], after[2:])))
	time.Sleep(100 * time.Millisecond) // what else would be judged is now
	j.check(t)
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.gives) != 1 || len(j.gives[0]) != 1 || j.gives[0][0] != 10 {
		t.Errorf("Give calls %v, want one of shard 10", j.gives)
	}
	for _, r := range slices.Concat(waiting[:2], after[:2]) {
		if j.judged[r.ID] != 0 {
			t.Errorf("final %s of shard 10, not judged when it was given, was judged after", r.ID)
		}
	}
}

// A shard given while it is being taken ends its Take: ShardsGiven does not wait for a
// recovery nobody needs any more, the judge is told to give it up, and it is not taken again.
func TestTheRouterEndsTheTakeOfAShardGiven(t *testing.T) {
	t.Parallel()
	j := newJudge()
	j.takeGate = make(chan struct{}) // never opens: only the end of its context ends Take
	rt := startRouter(t, RouterConfig{}, j, connect(t))
	rt.take(t, 5)
	testwait.Eventually(t, 5*time.Second, func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.takeCalls == 0 {
			return errors.New("Take not called yet")
		}
		return nil
	})
	given := make(chan struct{})
	go func() { rt.r.ShardsGiven([]int{5}); close(given) }()
	select {
	case <-given:
	case <-time.After(5 * time.Second):
		t.Fatal("ShardsGiven waits for the Take of the shard it gives")
	}
	rows := rt.publish(t, 1, 5)
	time.Sleep(200 * time.Millisecond) // a retry of the Take, or a delivery, would be now
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.takeCalls != 1 || len(j.gives) != 1 || j.judged[rows[0].ID] != 0 {
		t.Errorf("after the shard was given: %d Take calls (want 1), Give calls %v (want [[5]]), judged %d",
			j.takeCalls, j.gives, len(j.judged))
	}
}

// A subscription that overflows while its shard is taken (the pending limit is one message)
// drops finals; the router takes the shard again (a re-sync), then delivers what follows.
func TestTheRouterResyncsAShardThatDroppedFinals(t *testing.T) {
	t.Parallel()
	j := newJudge()
	j.takeGate = make(chan struct{})
	rt := startRouter(t, RouterConfig{PendingMsgs: 1, PollInterval: 20 * time.Millisecond}, j, connect(t))
	rt.take(t, 42)
	for range 20 {
		rt.publish(t, 1, 42)
	}
	close(j.takeGate)
	testwait.Eventually(t, 5*time.Second, func() error {
		if n := j.takesOf(42); n < 2 {
			return fmt.Errorf("shard 42 taken %d times, want a re-sync after its drops", n)
		}
		return nil
	})
	if got := metric(rt.reg, "vantage_finals_resyncs_total"); got < 1 {
		t.Errorf("vantage_finals_resyncs_total %v, want at least 1", got)
	}
	rows := rt.publish(t, 1, 42)
	testwait.Eventually(t, 5*time.Second, j.judgedOnce(rows))
	j.check(t)
}

// When the connection to NATS is cut and comes back, whatever was published meanwhile is
// gone: the router re-syncs every shard, and delivers again over the new connection.
func TestTheRouterResyncsEveryShardAfterAReconnect(t *testing.T) {
	t.Parallel()
	px := newProxy(t)
	nc := connect(t, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1), nats.SetCustomDialer(px))
	j := newJudge()
	rt := startRouter(t, RouterConfig{PollInterval: 20 * time.Millisecond}, j, nc)
	rt.take(t, 1, 2)
	rows := rt.publish(t, 2, 1, 2)
	testwait.Eventually(t, 5*time.Second, j.judgedOnce(rows))
	if j.takesOf(1) != 1 || j.takesOf(2) != 1 {
		t.Fatalf("taken %d and %d times before any loss, want once", j.takesOf(1), j.takesOf(2))
	}

	px.cut()
	testwait.Eventually(t, 5*time.Second, func() error {
		if nc.Stats().Reconnects == 0 || !nc.IsConnected() {
			return errors.New("not reconnected yet")
		}
		if j.takesOf(1) < 2 || j.takesOf(2) < 2 {
			return fmt.Errorf("taken %d and %d times, want a re-sync of both after the reconnect", j.takesOf(1), j.takesOf(2))
		}
		return nil
	})
	if err := nc.Flush(); err != nil { // the subscriptions are the server's again
		t.Fatal(err)
	}
	rows = rt.publish(t, 2, 1, 2)
	testwait.Eventually(t, 5*time.Second, j.judgedOnce(rows))
	j.check(t)
}

// A Judge that fails is asked again with the same finals, until it takes them.
func TestTheRouterRetriesAFailedJudgment(t *testing.T) {
	t.Parallel()
	j := newJudge()
	j.judgeFail = 2
	rt := startRouter(t, RouterConfig{}, j, connect(t))
	rt.take(t, 9)
	testwait.Eventually(t, 5*time.Second, func() error {
		if j.takesOf(9) == 0 {
			return errors.New("not taken yet")
		}
		return nil
	})
	rows := rt.publish(t, 4, 9)
	testwait.Eventually(t, 5*time.Second, j.judgedOnce(rows))
	j.check(t)
	j.mu.Lock()
	calls := j.judgeCalls
	j.mu.Unlock()
	if calls != 3 {
		t.Errorf("%d Judge calls, want 2 failed and 1 that took all 4 finals", calls)
	}
	if got := metric(rt.reg, "vantage_finals_judge_errors_total"); got != 2 {
		t.Errorf("vantage_finals_judge_errors_total %v, want 2", got)
	}
	if got := metric(rt.reg, "vantage_finals_judged_batches_total"); got != 1 {
		t.Errorf("vantage_finals_judged_batches_total %v, want 1", got)
	}
}

// proxy is a TCP relay to the machine's NATS whose connections the test can cut, as a network
// would.
type proxy struct {
	t     *testing.T
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", "127.0.0.1:4222")
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

// Dial makes the proxy a nats.CustomDialer: every connection goes through it.
func (p *proxy) Dial(network, _ string) (net.Conn, error) {
	return net.Dial(network, p.ln.Addr().String())
}

// cut closes every connection relayed so far.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
