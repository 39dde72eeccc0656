package scheduler

import (
	"bytes"
	"container/heap"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
)

// entry is one scheduled check: its plan and its next run.
type entry struct {
	plan *plan
	// seq is the load sequence number plan came from; an older load never overwrites it.
	seq   uint64
	shard int // shard.Of(plan.id)
	// next is the due time of the next run, confirm whether it is a confirmation run, g the
	// grid it lies on and spacing the distance to the run after it.
	next    int64
	confirm bool
	g       grid
	// anchor is the confirmation grid's origin in effect (the plan's state change time, or
	// when the schedule learned of the state when the database has none).
	anchor int64
	// lastDone is the due time of the last run handled (or, when the entry was loaded, what
	// the database says was handled: see schedule.through); noTime for none.
	lastDone int64
	// release is when a catch-up run (next in the past when it was placed) was taken up: its
	// deadline counts from then, not from its long-gone due time. noTime otherwise.
	release int64
	index   int // in the heap
}

func (e *entry) spacing() time.Duration { return time.Duration(e.g.step) * time.Millisecond }

// deadline is the deadline of e's next run (jobDeadline). A catch-up run's counts from its
// release and may overlap the next regular run: capped by the next point, it would expire
// at once whenever that point is near, and the check would go without its catch-up.
func (e *entry) deadline() int64 {
	if e.release != noTime {
		return jobDeadline(e.release, time.Duration(math.MaxInt64), e.plan.timeout, e.plan.attempts)
	}
	return jobDeadline(e.next, e.spacing(), e.plan.timeout, e.plan.attempts)
}

// queue is a min-heap of entries by next due time (ties by check id, so that the order is
// deterministic), for container/heap.
type queue []*entry

func (q queue) Len() int { return len(q) }

func (q queue) Less(i, j int) bool {
	if q[i].next != q[j].next {
		return q[i].next < q[j].next
	}
	return bytes.Compare(q[i].plan.id[:], q[j].plan.id[:]) < 0
}

func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *queue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}

func (q *queue) Pop() any {
	old := *q
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.index = -1
	*q = old[:n-1]
	return e
}

// schedule is every active check of the shards this replica owns, ordered by next due time,
// and the rules that move them. It is pure: every method takes the current time, so tests step
// through time without sleeping. It is not safe for concurrent use; the loop owns it.
type schedule struct {
	entries map[uuid.UUID]*entry
	q       queue
	// tombs remembers checks a by-id load found deleted or paused, with that load's sequence
	// number, so that an older load finishing later cannot bring them back.
	tombs map[uuid.UUID]uint64
	// fullSeq is, per shard, the sequence number of the newest full load of it applied: a
	// check absent from it and unknown since may only be added by a newer load.
	fullSeq [shard.Count]uint64

	// owned are the shards whose checks the schedule keeps; plans of other shards are ignored.
	owned shard.Set
	// joining are owned shards not yet covered by through: taken over, their checks being
	// loaded or their catch-up runs not yet published. Each maps to how far its previous
	// owners handled its runs (noTime: never scheduled) and whether its load is in.
	joining map[int]*joiner
	// through is how far the runs of the owned shards that are not joining were handled: every
	// run of theirs due at or before it was queued or skipped (the loop moves it as it
	// publishes); noTime when unknown. A check loaded later than that missed nothing it could
	// run before through: runs are due only after max(through, its creation).
	through    int64
	minCadence time.Duration // floor of the confirmation cadence
}

// joiner is a shard taken over whose runs are not yet covered by schedule.through.
type joiner struct {
	through int64  // its previous owners' progress (noTime: none)
	loadSeq uint64 // the full load of it that must be applied before it can join
	loaded  bool
}

func newSchedule(minCadence time.Duration) *schedule {
	return &schedule{entries: map[uuid.UUID]*entry{}, tombs: map[uuid.UUID]uint64{}, joining: map[int]*joiner{},
		through: noTime, minCadence: minCadence}
}

// acquire adds shards whose previous owners handled their runs through progress (absent:
// never) and whose checks the full load seq will bring. Until that load is applied and its
// catch-up runs are published (join), they keep their own progress.
func (s *schedule) acquire(shards []int, progress map[int]int64, seq uint64) {
	for _, k := range shards {
		s.owned.Add(k)
		through, ok := progress[k]
		if !ok {
			through = noTime
		}
		s.joining[k] = &joiner{through: through, loadSeq: seq}
	}
}

// release drops shards and their checks: nothing of theirs is published after it returns.
// covered are those of them that through covers (not joining), whose progress may be recorded
// as through.
func (s *schedule) release(shards []int) (covered []int) {
	var gone shard.Set
	for _, k := range shards {
		if !s.owned.Has(k) {
			continue
		}
		if s.joining[k] == nil {
			covered = append(covered, k)
		}
		gone.Add(k)
		s.owned.Remove(k)
		delete(s.joining, k)
	}
	for id, e := range s.entries {
		if gone.Has(e.shard) {
			heap.Remove(&s.q, e.index)
			delete(s.entries, id)
		}
	}
	return covered
}

// join makes the loaded joining shards covered by through. The caller calls it when every run
// due at or before through has been handled, catch-up runs of the joining shards included.
func (s *schedule) join() {
	for k, j := range s.joining {
		if j.loaded {
			delete(s.joining, k)
		}
	}
}

// covered returns the owned shards through covers.
func (s *schedule) covered() []int {
	var out []int
	for _, k := range s.owned.List() {
		if s.joining[k] == nil {
			out = append(out, k)
		}
	}
	return out
}

// progressOf is how far the runs of shard k are known handled.
func (s *schedule) progressOf(k int) int64 {
	if j := s.joining[k]; j != nil {
		return j.through
	}
	return s.through
}

// handled records that every run due at or before t was handled.
func (s *schedule) handled(t int64) { s.through = max(s.through, t) }

// Len is the number of scheduled checks.
func (s *schedule) Len() int { return len(s.entries) }

// peek returns the entry due first, or nil.
func (s *schedule) peek() *entry {
	if len(s.q) == 0 {
		return nil
	}
	return s.q[0]
}

// upsert adds p (loaded with sequence number seq) or updates its check's entry; a check of a
// shard not owned is ignored. A new check gets its first run at the next point of its grid —
// or, when a point passed unhandled since the runs known handled (its shard's progress, the
// check's creation, its legacy last_queued), at
// the newest such point, at once (downtime and fail-overs must not lose runs, nor burst). An
// updated check keeps its next run unless its rhythm changed: a new interval, or entering or
// leaving confirmation.
func (s *schedule) upsert(p *plan, seq uint64, now int64) {
	k := shard.Of(p.id)
	if !s.owned.Has(k) {
		return
	}
	if t, ok := s.tombs[p.id]; ok {
		if t > seq {
			return
		}
		delete(s.tombs, p.id)
	}
	e := s.entries[p.id]
	if e == nil {
		if seq < s.fullSeq[k] {
			return
		}
		e = &entry{plan: p, seq: seq, shard: k, lastDone: noTime, anchor: noTime}
		if through := s.progressOf(k); through != noTime || p.lastQueued != noTime {
			e.lastDone = max(through, p.lastQueued, p.createdAt)
		}
		s.place(e, now, true)
		s.entries[p.id] = e
		heap.Push(&s.q, e)
		return
	}
	if e.seq > seq {
		return
	}
	old := e.plan
	e.plan, e.seq = p, seq
	if rhythmChanged(old, p) {
		if p.confirming() && (!old.confirming() || old.anchor != p.anchor) {
			e.anchor = noTime // a new confirmation: re-anchor
		}
		s.place(e, now, false)
		heap.Fix(&s.q, e.index)
	}
}

// rhythmChanged reports whether a reload changes when a check runs.
func rhythmChanged(old, p *plan) bool {
	if old.confirming() != p.confirming() {
		return true
	}
	if p.confirming() {
		return old.anchor != p.anchor || old.period != p.period || old.interval != p.interval
	}
	return old.interval != p.interval
}

// place computes e's grid and next run from its plan: with catchUp, the newest missed point
// since its last run (grid.firstDue), otherwise the first point from now on.
func (s *schedule) place(e *entry, now int64, catchUp bool) {
	p := e.plan
	if p.confirming() {
		if e.anchor == noTime {
			e.anchor = p.anchor
			if e.anchor == noTime {
				e.anchor = now
			}
		}
		e.g = confirmGrid(e.anchor, confirmCadence(p.interval, p.period, s.minCadence))
		e.confirm = true
	} else {
		e.anchor = noTime
		e.g = regularGrid(p.id, p.interval)
		e.confirm = false
	}
	lastDone := e.lastDone
	if !catchUp {
		lastDone = noTime
	}
	e.next = e.g.firstDue(lastDone, now)
	e.release = noTime
	if e.next < now {
		e.release = now
	}
}

// advance records that e's run due at e.next was handled (queued or skipped) at now and moves
// e to its next run. Points already past are skipped: a scheduler that fell behind catches up
// with one run, not a burst.
func (s *schedule) advance(e *entry, now int64) {
	e.lastDone = e.next
	e.next = e.g.after(max(e.lastDone, now-1))
	e.release = noTime
	heap.Fix(&s.q, e.index)
}

// remove drops a check (deleted or paused) as of load seq. tomb records it against older
// loads that finish later.
func (s *schedule) remove(id uuid.UUID, seq uint64, tomb bool) {
	if e := s.entries[id]; e != nil {
		if e.seq > seq {
			return
		}
		heap.Remove(&s.q, e.index)
		delete(s.entries, id)
	}
	if tomb && s.tombs[id] < seq {
		s.tombs[id] = seq
	}
}

// applyFull reconciles the schedule's shards with a load of every active check of shards:
// plans are upserted and checks of those shards missing from the load are dropped, unless a
// newer load has seen them since.
func (s *schedule) applyFull(plans []*plan, seq uint64, shards shard.Set, now int64) {
	s.upsertFull(plans, seq, now)
	s.finishFull(seq, shards)
}

// upsertFull applies part of a full load (seq). A full load may be applied in parts, with other
// loads and runs in between, and then finished with finishFull.
func (s *schedule) upsertFull(plans []*plan, seq uint64, now int64) {
	for _, p := range plans {
		if seq >= s.fullSeq[shard.Of(p.id)] {
			s.upsert(p, seq, now)
		}
	}
}

// finishFull ends a full load (seq) of shards whose plans are all upserted: checks of those
// shards it did not contain and no newer load has seen are dropped, and joining shards waiting
// for it are loaded.
func (s *schedule) finishFull(seq uint64, shards shard.Set) {
	for k := range shard.Count {
		if shards.Has(k) && s.owned.Has(k) && seq >= s.fullSeq[k] {
			s.fullSeq[k] = seq
			if j := s.joining[k]; j != nil && seq >= j.loadSeq {
				j.loaded = true
			}
		} else {
			shards.Remove(k) // only the shards this load is the newest of are reconciled
		}
	}
	for id, e := range s.entries {
		if shards.Has(e.shard) && e.seq < seq {
			heap.Remove(&s.q, e.index)
			delete(s.entries, id)
		}
	}
	for id, t := range s.tombs {
		if t <= seq && shards.Has(shard.Of(id)) {
			delete(s.tombs, id)
		}
	}
}

// applyByID applies a load of some checks: found ones are upserted, the others (deleted,
// paused, or unrunnable) dropped.
func (s *schedule) applyByID(ids []uuid.UUID, plans []*plan, seq uint64, now int64) {
	found := make(map[uuid.UUID]bool, len(plans))
	for _, p := range plans {
		found[p.id] = true
		s.upsert(p, seq, now)
	}
	for _, id := range ids {
		if !found[id] {
			s.remove(id, seq, true)
		}
	}
}
