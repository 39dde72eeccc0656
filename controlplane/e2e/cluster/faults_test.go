//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fault is one fault's record: when it started, when it was healed (the link back, the
// process restarted), the regions whose runs it may cost, and the measured recoveries.
type fault struct {
	name    string
	regions []string
	inject  time.Time
	heal    time.Time
	// flowing is inject → a run scheduled after inject stored from every region of every
	// check while the fault lasts (0: not measured, the fault stops the flow by design).
	flowing time.Duration
	// ready is heal → every process answers its health check (heal is when the link came
	// back or the process was started again).
	ready time.Duration
	// recovered is heal → every process ready and a run scheduled after heal stored from
	// every region of every check.
	recovered time.Duration
	end       time.Time // heal + recovered: the end of the window its lost runs may fall in
	note      string
}

func TestCluster(t *testing.T) {
	c := newCluster(t)
	c.createChecks(t)
	began := time.Now()
	// Every check ran once from every region: the steady state the faults start from.
	if _, err := waitFor(3*interval, time.Second, func() error { return c.fresh(began.Add(-interval), regions) }); err != nil {
		t.Fatalf("first runs: %v", err)
	}
	c.start = time.Now()
	for _, ck := range c.checks {
		if st, err := c.status(ck.id); err != nil || st != "UP" {
			t.Fatalf("check %s is %q (%v) after its first runs, want UP", ck.name, st, err)
		}
	}
	t.Logf("steady: every check UP from every region %s after creation", c.start.Sub(began).Round(time.Second))
	time.Sleep(interval)

	var faults []*fault
	run := func(f *fault, do func(f *fault)) {
		t.Logf("fault %q: start", f.name)
		do(f)
		if _, err := waitFor(4*time.Minute, 200*time.Millisecond, c.allReady); err != nil {
			t.Fatalf("fault %q: processes not ready again: %v", f.name, err)
		}
		f.ready = time.Since(f.heal)
		if _, err := waitFor(4*time.Minute, time.Second, func() error {
			if err := c.allReady(); err != nil {
				return err
			}
			return c.fresh(f.heal, regions)
		}); err != nil {
			t.Fatalf("fault %q: no recovery: %v", f.name, err)
		}
		f.recovered = time.Since(f.heal)
		f.end = time.Now()
		faults = append(faults, f)
		c.assertSoFar(t, f)
		t.Logf("fault %q: ready %s and recovered %s after healing (%s)", f.name, f.ready.Round(100*time.Millisecond),
			f.recovered.Round(time.Second), f.note)
	}

	// 1. A region's host cut off from NATS and the control planes for 2 minutes: longer than
	// VANTAGE_REGION_UNSERVED_GRACE, so agent.region_unserved and agent.region_served go out.
	cut := &fault{name: "region eu-west-2 cut off for 2m", regions: []string{"cloud:eu-west-2"}}
	run(cut, func(f *fault) {
		h := c.agents[1].h
		f.inject = time.Now()
		h.cut(t)
		// The other regions keep running meanwhile.
		others := []string{regions[0], regions[2]}
		d, err := waitFor(2*time.Minute, time.Second, func() error { return c.fresh(f.inject, others) })
		if err != nil {
			t.Fatalf("other regions during the cut: %v", err)
		}
		f.note = fmt.Sprintf("other regions' runs after the cut stored within %s", d.Round(time.Second))
		time.Sleep(time.Until(f.inject.Add(2 * time.Minute)))
		h.restore(t)
		f.heal = time.Now()
	})
	if err := c.regionEventsOnce(regions[1], time.Minute); err != nil {
		t.Fatalf("after %q: %v", cut.name, err)
	}
	cut.note += fmt.Sprintf("; agent.region_unserved delivered %s after the cut, agent.region_served %s after healing",
		c.recv.firstAt("agent.region_unserved", regions[1]).Sub(cut.inject).Round(time.Second),
		c.recv.firstAt("agent.region_served", regions[1]).Sub(cut.heal).Round(time.Second))

	// 2. One NATS member (not the stream leader) killed and restarted, during a target outage:
	// the outage check goes DOWN and UP again, alerted once each.
	run(&fault{name: "NATS member killed and restarted, target outage meanwhile", regions: regions}, func(f *fault) {
		leader, err := c.streamLeader()
		if err != nil {
			t.Fatal(err)
		}
		var victim *natsNode
		for _, n := range c.nats {
			if n != leader {
				victim = n
				break
			}
		}
		outage := c.checks[2]
		f.inject = time.Now()
		c.target.outage.Store(true)
		if err := victim.p.stop(syscall.SIGKILL, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		down, err := waitFor(3*interval, 500*time.Millisecond, func() error { return c.wantStatus(outage.id, "DOWN") })
		if err != nil {
			t.Fatalf("the outage was not detected: %v", err)
		}
		if f.flowing, err = c.flowing(f); err != nil {
			t.Fatalf("runs with member %s down: %v", victim.name, err)
		}
		f.heal = time.Now()
		victim.start(t, c)
		victim.waitHealthy(t, 2*time.Minute)
		c.target.outage.Store(false)
		up, err := waitFor(3*interval, 500*time.Millisecond, func() error { return c.wantStatus(outage.id, "UP") })
		if err != nil {
			t.Fatalf("the end of the outage was not detected: %v", err)
		}
		f.note = fmt.Sprintf("killed %s (stream leader %s); outage DOWN %s after it began, UP %s after it ended",
			victim.name, leader.name, down.Round(time.Second), up.Round(time.Second))
	})

	// 3. The NATS member holding the job stream's leader killed, then restarted.
	run(&fault{name: "NATS stream leader killed and restarted", regions: regions}, func(f *fault) {
		leader, err := c.streamLeader()
		if err != nil {
			t.Fatal(err)
		}
		f.inject = time.Now()
		if err := leader.p.stop(syscall.SIGKILL, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if f.flowing, err = c.flowing(f); err != nil {
			t.Fatalf("runs without the stream leader %s: %v", leader.name, err)
		}
		next, err := c.streamLeader()
		if err != nil {
			t.Fatalf("after killing %s: %v", leader.name, err)
		}
		f.heal = time.Now()
		leader.start(t, c)
		leader.waitHealthy(t, 2*time.Minute)
		f.note = fmt.Sprintf("killed %s, new stream leader %s", leader.name, next.name)
	})

	// 4. The control plane owning the most scheduler shards killed with SIGKILL, restarted as
	// its supervisor would. The other two own all its shards within 5 s; its agents move to
	// another replica, and back within VANTAGE_GRPC_MAX_CONNECTION_AGE.
	killed := &fault{name: "control plane owning the most shards SIGKILLed", regions: regions}
	run(killed, func(f *fault) {
		victim, err := c.shardsShared()
		if err != nil {
			t.Fatal(err)
		}
		f.inject = time.Now()
		if err := victim.p.stop(syscall.SIGKILL, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		moved, err := waitFor(5*time.Second, 100*time.Millisecond, func() error {
			_, err := c.shardsShared()
			return err
		})
		if err != nil {
			t.Fatalf("the shards of %s did not move: %v", victim.name, err)
		}
		if f.flowing, err = c.flowing(f); err != nil {
			t.Fatalf("runs without %s: %v", victim.name, err)
		}
		f.heal = time.Now()
		victim.start(t, c)
		victim.waitReady(t, 2*time.Minute)
		back, err := waitFor(30*time.Second, 200*time.Millisecond, func() error {
			owned, err := c.shardOwners()
			if err != nil {
				return err
			}
			if owned[victim] == 0 {
				return fmt.Errorf("%s owns no shard yet", victim.name)
			}
			_, err = c.shardsShared()
			return err
		})
		if err != nil {
			t.Fatalf("after restarting %s: %v", victim.name, err)
		}
		f.note = fmt.Sprintf("killed %s; its shards owned by the others %s after the kill, shared by three again %s after the restart",
			victim.name, moved.Round(10*time.Millisecond), back.Round(10*time.Millisecond))
	})
	spread, where, err := c.agentsSpread(killed.heal, connectionAge*11/10+20*time.Second)
	if err != nil {
		t.Fatalf("after %q: %v", killed.name, err)
	}
	// First looked at once the fault recovered: an upper bound.
	killed.note += fmt.Sprintf("; agents on every replica again by %s after the restart (%s)", spread.Round(time.Second), where)

	// 5. PostgreSQL restarted (fast shutdown, 10 s down).
	run(&fault{name: "PostgreSQL restarted", regions: regions}, func(f *fault) {
		f.inject = time.Now()
		c.pg.stop(t)
		time.Sleep(10 * time.Second)
		f.heal = time.Now()
		c.pg.start(t, c)
		f.note = "down 10s"
	})

	// A last stretch without faults, then the whole record.
	time.Sleep(2 * interval)
	c.report(t, faults)
}

// flowing waits until every check has stored a run scheduled after the fault began from every
// region, and returns how long after it began that was.
func (c *cluster) flowing(f *fault) (time.Duration, error) {
	_, err := waitFor(2*time.Minute, time.Second, func() error { return c.fresh(f.inject, regions) })
	return time.Since(f.inject), err
}

// wantStatus is nil when the check's status is want.
func (c *cluster) wantStatus(id, want string) error {
	st, err := c.status(id)
	if err != nil {
		return err
	}
	if st != want {
		return fmt.Errorf("status %s, want %s", st, want)
	}
	return nil
}

// assertSoFar checks what must hold after every fault: no process exited on its own, no false
// DOWN, no result stored twice.
func (c *cluster) assertSoFar(t *testing.T, f *fault) {
	t.Helper()
	if exits := c.procs.unexpectedExits(); len(exits) > 0 {
		t.Fatalf("after %q: processes exited on their own: %s", f.name, strings.Join(exits, "; "))
	}
	for _, ck := range c.checks[:2] {
		if n := c.count(t, `SELECT count(*) FROM check_incidents WHERE check_id = $1`, ck.id); n != 0 {
			t.Fatalf("after %q: check %s (its target always up) has %d incidents: a false DOWN", f.name, ck.name, n)
		}
		if d, _ := c.recv.count("uptime.down", ck.id); d != 0 {
			t.Fatalf("after %q: check %s (its target always up): %d uptime.down delivered: a false DOWN", f.name, ck.name, d)
		}
	}
	if dups := c.duplicates(t); len(dups) > 0 {
		t.Fatalf("after %q: results stored more than once: %s", f.name, strings.Join(dups, "; "))
	}
}

func (c *cluster) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := c.db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// duplicates lists results stored twice: the same attempt of a job in a region, or two final
// attempts of one job in a region.
func (c *cluster) duplicates(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT job_id::text, region, attempt_number::text, count(*) FROM check_results GROUP BY 1, 2, 3 HAVING count(*) > 1
		UNION ALL SELECT job_id::text, region, 'final', count(*) FROM check_results WHERE is_final_attempt GROUP BY 1, 2 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var job, region, attempt string
		var n int
		if err := rows.Scan(&job, &region, &attempt, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("job %s %s attempt %s ×%d", job, region, attempt, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// slot is one run a check should have had from a region.
type slot struct {
	check, region string
	due           time.Time
}

// runs returns, per check and region, the runs expected from c.start to until (the check's
// schedule: every interval from its first run) and which of them were stored.
func (c *cluster) runs(t *testing.T, until time.Time) (expected []slot, stored map[slot]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT DISTINCT check_id::text, region, job_id::text FROM check_results WHERE is_final_attempt`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored = map[slot]bool{}
	first := map[string]time.Time{}
	for rows.Next() {
		var s slot
		var job string
		if err := rows.Scan(&s.check, &s.region, &job); err != nil {
			t.Fatal(err)
		}
		if s.due, err = dueOf(job); err != nil {
			t.Fatal(err)
		}
		s.due = s.due.Truncate(time.Millisecond)
		stored[s] = true
		if f, ok := first[s.check]; !ok || s.due.Before(f) {
			first[s.check] = s.due
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.checks {
		for due := first[ck.id]; !due.After(until); due = due.Add(interval) {
			if due.Before(c.start) {
				continue
			}
			for _, r := range regions {
				expected = append(expected, slot{check: ck.id, region: r, due: due})
			}
		}
	}
	return expected, stored
}

// report prints the figures and makes the final assertions.
func (c *cluster) report(t *testing.T, faults []*fault) {
	t.Helper()
	if err := c.allReady(); err != nil {
		t.Errorf("at the end: %v", err)
	}
	// Every agent is listed once, across the replicas, and every region served.
	var where string
	if _, err := waitFor(2*time.Minute, time.Second, func() error {
		var err error
		where, _, err = c.fleet()
		return err
	}); err != nil {
		t.Error(err)
	}
	// The one cut outlasted the grace; no other fault left a region without an agent for long.
	if err := c.regionEventsOnce(regions[1], 0); err != nil {
		t.Error(err)
	}
	// Runs due in the last minute may still be under way.
	until := time.Now().Add(-time.Minute)
	expected, stored := c.runs(t, until)
	type tally struct{ expected, stored int }
	perFault := make([]tally, len(faults))
	var outside tally
	var lostOutside []string
	for _, s := range expected {
		got := stored[s]
		in := -1
		for i, f := range faults {
			// A fault's window: from a run before it was injected to its recovery.
			if slices.Contains(f.regions, s.region) && !s.due.Before(f.inject.Add(-interval)) && !s.due.After(f.end) {
				in = i
				break
			}
		}
		tl := &outside
		if in >= 0 {
			tl = &perFault[in]
		}
		tl.expected++
		if got {
			tl.stored++
		} else if in < 0 {
			lostOutside = append(lostOutside, fmt.Sprintf("%s %s due %s", c.name(s.check), s.region, s.due.Format(time.TimeOnly)))
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n=== make test-cluster: %d checks × %d regions every %s, %s of faults ===\n", len(c.checks), len(regions), interval, time.Since(c.start).Round(time.Second))
	fmt.Fprintf(&b, "%-58s %8s %8s %10s %9s %5s\n", "fault", "flowing", "ready", "recovered", "runs", "lost")
	for i, f := range faults {
		flowing := "-"
		if f.flowing > 0 {
			flowing = f.flowing.Round(time.Second).String()
		}
		fmt.Fprintf(&b, "%-58s %8s %8s %10s %4d/%-4d %5d  %s\n", f.name, flowing, f.ready.Round(100*time.Millisecond), f.recovered.Round(time.Second),
			perFault[i].stored, perFault[i].expected,
			perFault[i].expected-perFault[i].stored, f.note)
	}
	fmt.Fprintf(&b, "%-58s %8s %8s %10s %4d/%-4d %5d\n", "outside the faults' windows", "", "", "", outside.stored, outside.expected, outside.expected-outside.stored)
	total := tally{outside.expected, outside.stored}
	for _, p := range perFault {
		total.expected += p.expected
		total.stored += p.stored
	}
	fmt.Fprintf(&b, "runs stored / expected in all: %d / %d\n", total.stored, total.expected)
	fmt.Fprintf(&b, "webhook deliveries by type: %v\n", c.recv.byType())
	fmt.Fprintf(&b, "agents (GET /v1/agents): %s\n", where)
	for _, ck := range c.checks {
		dd, de := c.recv.count("uptime.down", ck.id)
		ud, ue := c.recv.count("uptime.up", ck.id)
		fmt.Fprintf(&b, "check %-9s uptime.down %d delivered (%d events), uptime.up %d delivered (%d events), incidents %d\n",
			ck.name, dd, de, ud, ue, c.count(t, `SELECT count(*) FROM check_incidents WHERE check_id = $1`, ck.id))
	}
	fmt.Println(b.String())

	if len(lostOutside) > 0 {
		t.Errorf("%d runs lost outside every fault's window: %s", len(lostOutside), strings.Join(lostOutside, "; "))
	}
	if exits := c.procs.unexpectedExits(); len(exits) > 0 {
		t.Errorf("processes exited on their own: %s", strings.Join(exits, "; "))
	}
	if dups := c.duplicates(t); len(dups) > 0 {
		t.Errorf("results stored more than once: %s", strings.Join(dups, "; "))
	}
	for _, ck := range c.checks {
		dd, de := c.recv.count("uptime.down", ck.id)
		ud, ue := c.recv.count("uptime.up", ck.id)
		incidents := c.count(t, `SELECT count(*) FROM check_incidents WHERE check_id = $1`, ck.id)
		want := 0
		if ck.outage {
			want = 1
		}
		if de != want || ue != want || incidents != want {
			t.Errorf("check %s: uptime.down %d events, uptime.up %d events, %d incidents; want %d each", ck.name, de, ue, incidents, want)
		}
		if dd != de || ud != ue {
			t.Logf("check %s: an event was delivered more than once (at least once delivery): down %d/%d, up %d/%d", ck.name, dd, de, ud, ue)
		}
		if st, err := c.status(ck.id); err != nil || st != "UP" {
			t.Errorf("check %s is %q (%v) at the end, want UP", ck.name, st, err)
		}
	}
}

// fleet reads GET /v1/agents: where each agent is connected ("agent→replica, …") and how many
// agents each replica holds, or an error unless every agent is listed once and every region
// has exactly one agent.
func (c *cluster) fleet() (string, map[string]int, error) {
	var out struct {
		Agents []struct {
			ID      string   `json:"id"`
			Regions []string `json:"regions"`
			Replica string   `json:"replica"`
		} `json:"agents"`
		Regions []struct {
			Region string `json:"region"`
			Agents int    `json:"agents"`
		} `json:"regions"`
	}
	if err := c.call(http.MethodGet, "/v1/agents", nil, &out); err != nil {
		return "", nil, err
	}
	var parts []string
	perReplica := map[string]int{}
	for _, a := range out.Agents {
		parts = append(parts, fmt.Sprintf("%s→%s", a.ID, a.Replica))
		perReplica[a.Replica]++
	}
	where := strings.Join(parts, ", ")
	for _, r := range out.Regions {
		if slices.Contains(regions, r.Region) && r.Agents != 1 {
			return where, nil, fmt.Errorf("GET /v1/agents: region %s has %d agents, want 1 (%s)", r.Region, r.Agents, where)
		}
	}
	if len(out.Agents) != len(regions) {
		return where, nil, fmt.Errorf("GET /v1/agents: %d agents, want %d (%s)", len(out.Agents), len(regions), where)
	}
	return where, perReplica, nil
}

// agentsSpread waits until every control plane holds at least one agent stream (as GET
// /v1/agents shows), within of since, and returns how long after since that was and where the
// agents are.
func (c *cluster) agentsSpread(since time.Time, within time.Duration) (time.Duration, string, error) {
	var where string
	_, err := waitFor(time.Until(since.Add(within)), time.Second, func() error {
		var perReplica map[string]int
		var err error
		if where, perReplica, err = c.fleet(); err != nil {
			return err
		}
		for _, cp := range c.cps {
			if perReplica[cp.name] == 0 {
				return fmt.Errorf("no agent on %s (%s)", cp.name, where)
			}
		}
		return nil
	})
	if err != nil {
		return 0, where, fmt.Errorf("agents not spread over the replicas within %s of %s: %w", within, since.Format(time.TimeOnly), err)
	}
	return time.Since(since), where, nil
}

// regionEventsOnce waits up to within until region's agent.region_unserved and
// agent.region_served have each been delivered as exactly one event, and no other region's
// have.
func (c *cluster) regionEventsOnce(region string, within time.Duration) error {
	_, err := waitFor(within, time.Second, func() error {
		for _, typ := range []string{"agent.region_unserved", "agent.region_served"} {
			deliveries, events := c.recv.count(typ, region)
			if events != 1 {
				return fmt.Errorf("%s for %s: %d events (%d deliveries), want 1", typ, region, events, deliveries)
			}
			if all := c.recv.byType()[typ]; all != deliveries {
				return fmt.Errorf("%s: %d deliveries, %d of them for %s: another region was reported unserved", typ, all, deliveries, region)
			}
		}
		return nil
	})
	return err
}

func (c *cluster) name(id string) string {
	for _, ck := range c.checks {
		if ck.id == id {
			return ck.name
		}
	}
	return id
}
