package scheduler

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
)

// testPlan is a plan with what the schedule reads.
func testPlan(id uuid.UUID, interval time.Duration) *plan {
	return &plan{id: id, interval: interval, regions: []string{"cloud:us-east-1"}, state: "UP",
		anchor: noTime, lastQueued: noTime, timeout: 10 * time.Second, attempts: 2}
}

func with(p *plan, change func(*plan)) *plan {
	c := *p
	change(&c)
	return &c
}

// runsUntil steps the schedule through time from..to in steps of tick, handling due runs like
// the loop does, and returns every (check, due) handled.
func runsUntil(s *schedule, from, to, tick int64) map[uuid.UUID][]int64 {
	out := map[uuid.UUID][]int64{}
	for now := from; now <= to; now += tick {
		for e := s.peek(); e != nil && e.next <= now; e = s.peek() {
			out[e.plan.id] = append(out[e.plan.id], e.next)
			s.advance(e, now)
		}
	}
	return out
}

const t0 = int64(1_800_000_000_000) // a Unix ms timestamp, 30s-aligned

func allShards() shard.Set {
	var all shard.Set
	for k := range shard.Count {
		all.Add(k)
	}
	return all
}

// testSchedule is a schedule that owns every shard, their runs handled through through.
func testSchedule(through int64) *schedule {
	s := newSchedule(10 * time.Second)
	s.owned, s.through = allShards(), through
	return s
}

// idIn returns a new check id of shard k.
func idIn(k int) uuid.UUID {
	for {
		if id := uuid.Must(uuid.NewV7()); shard.Of(id) == k {
			return id
		}
	}
}

func TestScheduleRunsEachCheckOnItsGrid(t *testing.T) {
	t.Parallel()
	s := testSchedule(noTime)
	var ids []uuid.UUID
	for i := range 50 {
		id := uuid.Must(uuid.NewV7())
		ids = append(ids, id)
		interval := 30 * time.Second
		if i%2 == 1 {
			interval = 60 * time.Second
		}
		s.upsert(testPlan(id, interval), 1, t0)
	}
	runs := runsUntil(s, t0, t0+5*60_000, 100)
	for _, id := range ids {
		e := s.entries[id]
		step := e.plan.interval.Milliseconds()
		got := runs[id]
		if want := int(5 * 60_000 / step); len(got) < want-1 || len(got) > want {
			t.Errorf("check with interval %v ran %d times in 5 minutes, want %d", e.plan.interval, len(got), want)
		}
		for i, due := range got {
			if (due-phase(id, e.plan.interval))%step != 0 {
				t.Errorf("run %d at %d is off the check's grid (phase %d, step %d)", i, due, phase(id, e.plan.interval), step)
			}
			if due < t0 {
				t.Errorf("a new check ran at %d, before it was loaded (%d)", due, t0)
			}
			if i > 0 && due-got[i-1] != step {
				t.Errorf("runs %d and %d are %dms apart, want %d", i-1, i, due-got[i-1], step)
			}
		}
	}
}

func TestScheduleCatchUpAtTakeOver(t *testing.T) {
	t.Parallel()
	id := uuid.Must(uuid.NewV7())
	g30 := regularGrid(id, 30*time.Second)
	p30 := g30.after(t0) // a point of the 30s grid
	g5m := regularGrid(id, 5*time.Minute)
	p5m := g5m.after(t0)
	cases := []struct {
		name     string
		interval time.Duration
		through  int64 // the scheduler's progress
		created  int64
		now      int64
		want     int64
	}{
		{"no progress known: the next point from now", 30 * time.Second, noTime, t0 - 3_600_000, p30 + 2000, p30 + 30000},
		{"the point just passed unhandled: publish it at once", 30 * time.Second, p30 - 29000, t0 - 3_600_000, p30 + 2000, p30},
		{"the point just passed was handled: the next one", 30 * time.Second, p30 + 5, t0 - 3_600_000, p30 + 2000, p30 + 30000},
		{"of three missed points, the newest", 30 * time.Second, p30 - 29000, t0 - 3_600_000, p30 + 65000, p30 + 60000},
		{"a point missed long ago still runs, once", 5 * time.Minute, p5m - 1000, t0 - 3_600_000, p5m + 290_000, p5m},
		{"a check created after the missed point does not run it", 30 * time.Second, p30 - 29000, p30 + 1000, p30 + 2000, p30 + 30000},
	}
	for _, tc := range cases {
		s := testSchedule(tc.through)
		s.upsert(with(testPlan(id, tc.interval), func(p *plan) { p.createdAt = tc.created }), 1, tc.now)
		e := s.entries[id]
		if e.next != tc.want {
			t.Errorf("%s: next %d, want %d (offset %+dms)", tc.name, e.next, tc.want, e.next-tc.want)
		}
		if e.next < tc.now {
			// A catch-up run's deadline counts from when it was taken up, not its due time.
			if d := e.deadline(); d <= tc.now {
				t.Errorf("%s: catch-up deadline %d is not after now %d", tc.name, d, tc.now)
			}
			// Published at once, it is followed by the next point from now: one catch-up run only.
			s.advance(e, tc.now)
			if want := regularGrid(id, tc.interval).after(tc.now - 1); e.next != want {
				t.Errorf("%s: after the catch-up run next is %d, want %d", tc.name, e.next, want)
			}
		}
	}
}

func TestScheduleConfirmationCadence(t *testing.T) {
	t.Parallel()
	id := uuid.Must(uuid.NewV7())
	s := testSchedule(noTime)
	up := testPlan(id, 5*time.Minute)
	s.upsert(up, 1, t0)
	regular := s.entries[id].next

	// The evaluator saw a failing run and moved the check to VERIFYING (60s confirmation).
	changed := t0 + 4000
	verifying := with(up, func(p *plan) { p.state = stateVerifying; p.anchor = changed; p.period = time.Minute })
	s.upsert(verifying, 2, changed+50)
	e := s.entries[id]
	if !e.confirm || e.next != changed+20_000 {
		t.Fatalf("VERIFYING: next %d (confirm %v), want a confirmation run at %d (the regular one was at %d)", e.next, e.confirm, changed+20_000, regular)
	}
	runs := runsUntil(s, changed+50, changed+70_000, 100)[id]
	want := []int64{changed + 20_000, changed + 40_000, changed + 60_000}
	if len(runs) != 3 || runs[0] != want[0] || runs[1] != want[1] || runs[2] != want[2] {
		t.Fatalf("confirmation runs %v, want %v: the third lands when the 60s period has passed", runs, want)
	}

	// A resync with the same state changes nothing.
	before := e.next
	s.upsert(verifying, 3, changed+70_000)
	if e.next != before {
		t.Errorf("an unchanged reload moved the next run from %d to %d", before, e.next)
	}

	// DOWN: back to the regular grid, from now on.
	now := changed + 71_000
	s.upsert(with(verifying, func(p *plan) { p.state = "DOWN"; p.anchor = now - 500 }), 4, now)
	g := regularGrid(id, 5*time.Minute)
	if e.confirm || e.next != g.after(now-1) {
		t.Errorf("DOWN: next %d (confirm %v), want the regular grid's %d", e.next, e.confirm, g.after(now-1))
	}
}

func TestScheduleIntervalChangeMovesToTheNewGrid(t *testing.T) {
	t.Parallel()
	id := uuid.Must(uuid.NewV7())
	s := testSchedule(noTime)
	p := testPlan(id, time.Hour)
	s.upsert(p, 1, t0)
	s.upsert(with(p, func(p *plan) { p.interval = 30 * time.Second }), 2, t0+1000)
	e := s.entries[id]
	if want := regularGrid(id, 30*time.Second).after(t0 + 999); e.next != want {
		t.Errorf("next %d, want %d on the 30s grid", e.next, want)
	}
	if e.next-(t0+1000) > 30_000 {
		t.Errorf("next run is %dms away, more than the new interval", e.next-(t0+1000))
	}
	// A region change keeps the next run.
	before := e.next
	s.upsert(with(e.plan, func(p *plan) { p.regions = []string{"cloud:eu-west-2"} }), 3, t0+2000)
	if e.next != before || e.plan.regions[0] != "cloud:eu-west-2" {
		t.Errorf("region change: next %d (was %d), regions %v", e.next, before, e.plan.regions)
	}
}

func TestScheduleLoadOrdering(t *testing.T) {
	t.Parallel()
	a, b := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	s := testSchedule(noTime)
	s.applyFull([]*plan{testPlan(a, time.Minute), testPlan(b, time.Minute)}, 1, allShards(), t0)
	if s.Len() != 2 {
		t.Fatalf("scheduled %d, want 2", s.Len())
	}

	// b is deleted: a by-id load (seq 3) finds it gone.
	s.applyByID([]uuid.UUID{b}, nil, 3, t0)
	if _, ok := s.entries[b]; ok {
		t.Fatal("deleted check still scheduled")
	}
	// An older by-id load (seq 2) that still saw b finishes late: b stays gone.
	s.applyByID([]uuid.UUID{b}, []*plan{testPlan(b, time.Minute)}, 2, t0)
	if _, ok := s.entries[b]; ok {
		t.Fatal("an older load resurrected a deleted check")
	}
	// An older full load (seq 2) is ignored entirely.
	s.applyFull([]*plan{testPlan(a, time.Minute), testPlan(b, time.Minute)}, 2, allShards(), t0)
	if _, ok := s.entries[b]; ok {
		t.Fatal("an older full load resurrected a deleted check")
	}
	// b is resumed (seq 4): back.
	s.applyByID([]uuid.UUID{b}, []*plan{testPlan(b, time.Minute)}, 4, t0)
	if _, ok := s.entries[b]; !ok {
		t.Fatal("resumed check not scheduled")
	}
	// A newer interval for a (seq 6), then an older by-id load (seq 5) with the old one.
	s.applyByID([]uuid.UUID{a}, []*plan{testPlan(a, 2*time.Minute)}, 6, t0)
	s.applyByID([]uuid.UUID{a}, []*plan{testPlan(a, time.Minute)}, 5, t0)
	if got := s.entries[a].plan.interval; got != 2*time.Minute {
		t.Errorf("an older load overwrote a newer one: interval %v", got)
	}
	// A full load (seq 7) without a: a is gone; a by-id load numbered before it cannot add it.
	s.applyFull([]*plan{testPlan(b, time.Minute)}, 7, allShards(), t0)
	s.applyByID([]uuid.UUID{a}, []*plan{testPlan(a, time.Minute)}, 6, t0)
	if _, ok := s.entries[a]; ok || s.Len() != 1 || len(s.q) != 1 {
		t.Errorf("after a full load without a: entries %d, heap %d, a present %v", s.Len(), len(s.q), ok)
	}
	if len(s.tombs) != 0 {
		t.Errorf("tombstones older than the last full load were kept: %v", s.tombs)
	}
}

func TestScheduleFullLoadAppliedInParts(t *testing.T) {
	t.Parallel()
	a, b, c := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	s := testSchedule(noTime)
	s.applyFull([]*plan{testPlan(a, time.Minute), testPlan(b, time.Minute), testPlan(c, time.Minute)}, 1, allShards(), t0)

	// Full load 2 (a and b; c was deleted) is applied in two parts; between them a by-id load
	// (3) finds b deleted.
	s.upsertFull([]*plan{testPlan(a, 2*time.Minute)}, 2, t0)
	s.applyByID([]uuid.UUID{b}, nil, 3, t0)
	s.upsertFull([]*plan{testPlan(b, time.Minute)}, 2, t0)
	s.finishFull(2, allShards())
	if _, ok := s.entries[b]; ok {
		t.Error("the rest of an older full load brought back a check deleted meanwhile")
	}
	if _, ok := s.entries[c]; ok {
		t.Error("a check missing from the full load is still scheduled")
	}
	if e := s.entries[a]; e == nil || e.plan.interval != 2*time.Minute {
		t.Error("the full load's change to a was not applied")
	}
	if s.Len() != 1 || len(s.q) != 1 {
		t.Errorf("entries %d, heap %d, want 1", s.Len(), len(s.q))
	}
}

// A shard taken over catches up from its previous owner's progress, not the loop's, until its
// load is in and its catch-up runs are published; a shard given up leaves no entry behind, and
// only shards the loop's progress covers are reported for recording.
func TestScheduleShardHandover(t *testing.T) {
	t.Parallel()
	s := newSchedule(10 * time.Second)
	a, b, other := idIn(1), idIn(2), idIn(3)
	s.handled(t0 + 120_000) // the loop has run a while, owning nothing
	g := regularGrid(a, 30*time.Second)
	missed := g.atOrBefore(t0 + 120_000)
	prev := missed - 1000 // shard 1's previous owner stopped just before a's last point

	s.acquire([]int{1, 2}, map[int]int64{1: prev}, 5) // shard 2: never scheduled
	s.upsertFull([]*plan{testPlan(a, 30*time.Second), testPlan(b, 30*time.Second), testPlan(other, 30*time.Second)}, 5, t0+120_000)
	if _, ok := s.entries[other]; ok {
		t.Fatal("a check of a shard not owned was scheduled")
	}
	if e := s.entries[a]; e == nil || e.next != missed {
		t.Fatalf("a: next %v, want the run its shard's previous owner missed, %d", e, missed)
	}
	if e := s.entries[b]; e == nil || e.next < t0+120_000 {
		t.Fatalf("b of a shard never scheduled: next %v, want a point from now on", e)
	}

	s.finishFull(4, shard.SetOf(1, 2)) // an older load (a resync started before) finishing
	s.join()
	if len(s.joining) != 2 {
		t.Fatalf("joining %v after an older load: the shards joined before their own load", s.joining)
	}
	s.finishFull(5, shard.SetOf(1, 2))
	if got := s.covered(); len(got) != 0 {
		t.Fatalf("covered %v before join", got)
	}
	s.join()
	if got := s.covered(); len(got) != 2 || s.progressOf(1) != s.through {
		t.Fatalf("covered %v after join, progress of 1 %d (through %d)", got, s.progressOf(1), s.through)
	}

	covered := s.release([]int{1, 7})
	if len(covered) != 1 || covered[0] != 1 {
		t.Fatalf("release covered %v, want [1] (7 was never owned)", covered)
	}
	if _, ok := s.entries[a]; ok || s.owned.Has(1) || s.Len() != 1 || len(s.q) != 1 {
		t.Fatalf("after giving shard 1 up: a present %v, owned %v, entries %d, heap %d", ok, s.owned.Has(1), s.Len(), len(s.q))
	}
	// A by-id load of a check of the shard given up is ignored.
	s.applyByID([]uuid.UUID{a}, []*plan{testPlan(a, 30*time.Second)}, 9, t0+121_000)
	if _, ok := s.entries[a]; ok {
		t.Fatal("a change brought back a check of a shard given up")
	}
	// A shard given up while joining is not covered: its previous owner's progress stands.
	s.acquire([]int{4}, nil, 10)
	if covered := s.release([]int{4}); len(covered) != 0 {
		t.Fatalf("a joining shard given up reported covered: %v", covered)
	}
}
