package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestShardOwnersJudgeAcrossReplicas: two control planes with VANTAGE_JUDGE=owner share the
// 256 shards, and the only agent reports to the first. The finals of the second's shards
// cross over NATS to it and it judges them: every check comes UP, and the second replica
// judged finals although no agent stream reached it. The second is then killed: the first
// takes its shards over, recovering their state from PostgreSQL, and judges every check
// through an outage and its recovery with one incident and one alert of each kind per check.
func TestShardOwnersJudgeAcrossReplicas(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStackWith(t, map[string]string{"VANTAGE_JUDGE": "owner"})
	cp1, cp2 := s.cp, &controlPlane{s: s, name: "controlplane-b"}
	cp2.start(t)

	owned := func(c *controlPlane) int {
		n, err := c.metric("vantage_scheduler_owned_shards")
		if err != nil {
			return -1
		}
		return int(n)
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		if a, b := owned(cp1), owned(cp2); a <= 0 || b <= 0 || a+b != 256 {
			return fmt.Errorf("shards owned: %d and %d, want 256 shared by both", a, b)
		}
		return nil
	})

	const region = "cloud:eu-west-2"
	s.startAgent(t, "agent-owner", region)
	const confirm, recovery = 2, 2
	// Sixteen checks: with the shards shared, the chance that all land on one replica is
	// 2 × 2^-16.
	ids := s.createChecks(t, "/v1/checks", 16, 4, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("e2e owner %d", i), "url": target.URL, "test_regions": []string{region},
			"timeout": 3000, "confirmation_period_seconds": confirm, "recovery_period_seconds": recovery,
			"reminder_alert_interval_minutes": -1}
	})
	s.setIntervals(t, ids, fastInterval)
	waitAll(t, s, ids, "UP", 30*time.Second)

	if n, err := cp2.metric("vantage_ingest_streams"); err != nil || n != 0 {
		t.Fatalf("agent streams on the second replica: %v (%v), want 0: the test needs finals to cross", n, err)
	}
	for _, c := range []*controlPlane{cp1, cp2} {
		if n, err := c.metric("vantage_finals_received_total"); err != nil || n == 0 {
			t.Fatalf("%s received %v finals (%v): both owners must judge their shards", c.name, n, err)
		}
	}

	recoveredBefore, err := cp1.metric("vantage_evaluator_owner_recoveries_total")
	if err != nil {
		t.Fatal(err)
	}
	theirs := owned(cp2)
	cp2.kill(t)
	killed := time.Now()
	testwait.Eventually(t, 30*time.Second, func() error {
		if a := owned(cp1); a != 256 {
			return fmt.Errorf("shards owned by the survivor: %d, want 256", a)
		}
		return nil
	})
	t.Logf("the survivor owned every shard %s after the kill", time.Since(killed).Round(time.Millisecond))

	target.healthy.Store(false)
	waitAll(t, s, ids, "DOWN", fastInterval*time.Second+confirm*time.Second+slack)
	target.healthy.Store(true)
	waitAll(t, s, ids, "UP", fastInterval*time.Second+recovery*time.Second+slack)

	for _, id := range ids {
		if inc := s.incidents(t, "uptime", id); len(inc) != 1 || inc[0].EndedAt == nil {
			t.Errorf("check %s: incidents %+v, want one, closed", id, inc)
		}
		for _, ev := range []string{"uptime.down", "uptime.up"} {
			if got := s.outbox(t, id, ev); got != 1 {
				t.Errorf("check %s: %d %s outbox rows, want 1", id, got, ev)
			}
		}
	}
	if n, err := cp1.metric("vantage_evaluator_owner_recoveries_total"); err != nil || n < recoveredBefore+float64(theirs) {
		t.Errorf("shards recovered by the survivor: %v (%v), want at least the %d of the killed replica more than %v",
			n, err, theirs, recoveredBefore)
	}
}

// waitAll waits until every check's status is want.
func waitAll(t *testing.T, s *stack, ids []uuid.UUID, want string, within time.Duration) {
	t.Helper()
	testwait.Eventually(t, within, func() error {
		for _, id := range ids {
			st, err := s.status(id)
			if err != nil {
				return err
			}
			if st != want {
				return fmt.Errorf("check %s is %s, want %s", id, st, want)
			}
		}
		return nil
	})
}
