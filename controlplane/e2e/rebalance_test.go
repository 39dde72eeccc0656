package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// rebalanceAge is the replicas' VANTAGE_GRPC_MAX_CONNECTION_AGE in TestAgentsRebalance: the
// bound on how long an agent stays on the replica it moved to.
const rebalanceAge = 10 * time.Second

// TestAgentsRebalance: four agents of one region reach two control-plane replicas through one
// address, a TCP load balancer (as a Kubernetes Service is). One replica is killed and its
// agents move to the other. Once it is back, within the connection age (plus gRPC's 10 %
// jitter and slack) every agent has been sent GOAWAY, handed its stream over and reconnected
// through the load balancer, and both replicas hold agents again. A check runs every 2 s in
// the region meanwhile: from the restart on, every run is stored, and none twice.
func TestAgentsRebalance(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStackWith(t, map[string]string{"VANTAGE_GRPC_MAX_CONNECTION_AGE": rebalanceAge.String()})
	cp1, cp2 := s.cp, &controlPlane{s: s, name: "controlplane-b"}
	cp2.start(t)
	lb := newTCPBalancer(t, cp1.grpcAddr, cp2.grpcAddr)

	const region = "cloud:eu-west-2"
	agents := make([]*agent, 4)
	for i := range agents {
		agents[i] = s.startAgentWith(t, fmt.Sprintf("agent-lb-%d", i+1),
			map[string]string{"VANTAGE_BROWSER_PATH": "none", "VANTAGE_CONTROLPLANE_ADDR": lb.addr}, region)
	}
	id := s.createCheck(t, "/v1/checks", map[string]any{
		"name": "e2e rebalance", "url": target.URL, "test_regions": []string{region}, "timeout": 3000,
	})
	s.setInterval(t, id, fastInterval)

	streams := func() (int, int, error) {
		a, err := cp1.metric("vantage_ingest_streams")
		if err != nil {
			return 0, 0, err
		}
		b, err := cp2.metric("vantage_ingest_streams")
		return int(a), int(b), err
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		a, b, err := streams()
		if err == nil && (a == 0 || b == 0 || a+b != len(agents)) {
			err = fmt.Errorf("streams on the replicas: %d and %d, want %d spread over both (round robin)", a, b, len(agents))
		}
		return err
	})

	cp1.kill(t)
	testwait.Eventually(t, 30*time.Second, func() error {
		if b, err := cp2.metric("vantage_ingest_streams"); err != nil || int(b) != len(agents) {
			return fmt.Errorf("streams on the surviving replica: %v (%v), want all %d", b, err, len(agents))
		}
		return nil
	})
	handoversBefore, herr := sumMetric(agents, "vantage_agent_uplink_handovers_total")

	cp1.start(t)
	restarted := time.Now()
	bound := rebalanceAge*11/10 + slack
	testwait.Eventually(t, bound, func() error {
		a, b, err := streams()
		if err == nil && (a == 0 || b == 0 || a+b != len(agents)) {
			err = fmt.Errorf("streams on the replicas %s after the restart: %d and %d, want %d spread over both",
				time.Since(restarted).Round(time.Second), a, b, len(agents))
		}
		return err
	})
	a, b, _ := streams()
	t.Logf("agents spread again %s after the replica returned: %d and %d streams", time.Since(restarted).Round(time.Second), a, b)

	// Another round of handovers, then every run due since the restart must be stored once.
	time.Sleep(rebalanceAge)
	handovers, err := sumMetric(agents, "vantage_agent_uplink_handovers_total")
	if err = errors.Join(herr, err); err != nil {
		t.Error(err)
	} else if n := handovers - handoversBefore; n < float64(len(agents)) {
		t.Errorf("%v handovers since the restart, want at least one per agent (%d)", n, len(agents))
	}
	until := time.Now().Add(-6 * time.Second) // runs due later may still be under way
	assertEveryRunStored(t, s, id, restarted.Add(fastInterval*time.Second), until)
	if dups := s.duplicateResults(t, id); len(dups) > 0 {
		t.Errorf("results stored more than once: %v", dups)
	}
}

// assertEveryRunStored fails t unless the check's final results from from to until are one
// per run, every fastInterval: no run in between went missing.
func assertEveryRunStored(t *testing.T, s *stack, id uuid.UUID, from, until time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := s.db.Query(ctx, `SELECT DISTINCT job_id FROM check_results WHERE check_id = $1 AND is_final_attempt ORDER BY 1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var due []time.Time // a job id is a UUIDv7 of its run's due time
	for rows.Next() {
		var job uuid.UUID
		if err := rows.Scan(&job); err != nil {
			t.Fatal(err)
		}
		sec, nsec := job.Time().UnixTime()
		if at := time.Unix(sec, nsec); !at.Before(from) && !at.After(until) {
			due = append(due, at)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := int(until.Sub(from)/(fastInterval*time.Second)) - 1; len(due) < want {
		t.Errorf("%d runs stored between %s and %s, want at least %d (one every %ds)", len(due), from.Format(time.TimeOnly),
			until.Format(time.TimeOnly), want, fastInterval)
	}
	for i := 1; i < len(due); i++ {
		if gap := due[i].Sub(due[i-1]); gap > fastInterval*time.Second+time.Second {
			t.Errorf("no run stored between %s and %s: runs lost", due[i-1].Format(time.TimeOnly), due[i].Format(time.TimeOnly))
		}
	}
}

// sumMetric is the sum of the named metric over agents.
func sumMetric(agents []*agent, name string) (float64, error) {
	var sum float64
	for _, a := range agents {
		v, err := a.metric(name)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// tcpBalancer is what agents meet of a Kubernetes Service: one address, each new connection
// forwarded to the next backend in turn that accepts it (round robin, passing over dead ones).
// It knows nothing of gRPC: GOAWAY and everything else pass through as bytes.
type tcpBalancer struct {
	addr     string
	backends []string
	next     atomic.Uint64

	mu    sync.Mutex
	conns map[net.Conn]bool // open, to close at the end; nil once closed
}

func newTCPBalancer(t *testing.T, backends ...string) *tcpBalancer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &tcpBalancer{addr: l.Addr().String(), backends: backends, conns: map[net.Conn]bool{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.forward(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		b.mu.Lock()
		for c := range b.conns {
			_ = c.Close()
		}
		b.conns = nil
		b.mu.Unlock()
		wg.Wait()
	})
	return b
}

// forward pipes c to a backend until either side ends, then closes both.
func (b *tcpBalancer) forward(c net.Conn) {
	if !b.track(c) {
		_ = c.Close()
		return
	}
	defer b.close(c)
	first := b.next.Add(1)
	var up net.Conn
	for i := range uint64(len(b.backends)) {
		var err error
		if up, err = net.DialTimeout("tcp", b.backends[(first+i)%uint64(len(b.backends))], time.Second); err == nil {
			break
		}
	}
	if up == nil {
		return
	}
	if !b.track(up) {
		_ = up.Close()
		return
	}
	defer b.close(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// track records c as open; false once the balancer has closed (Cleanup ran).
func (b *tcpBalancer) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil {
		return false
	}
	b.conns[c] = true
	return true
}

func (b *tcpBalancer) close(c net.Conn) {
	_ = c.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, c)
}
