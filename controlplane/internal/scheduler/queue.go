package scheduler

import (
	"bytes"
	"container/heap"
	"math"
	"time"

	"github.com/google/uuid"
)

// entry is one scheduled check: its plan and its next run.
type entry struct {
	plan *plan
	// seq is the load sequence number plan came from; an older load never overwrites it.
	seq uint64
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

// schedule is every active check ordered by next due time, and the rules that move them. It is
// pure: every method takes the current time, so tests step through time without sleeping. It
// is not safe for concurrent use; the leader's loop owns it.
type schedule struct {
	entries map[uuid.UUID]*entry
	q       queue
	// tombs remembers checks a by-id load found deleted or paused, with that load's sequence
	// number, so that an older load finishing later cannot bring them back.
	tombs map[uuid.UUID]uint64
	// fullSeq is the sequence number of the newest full load applied: a check absent from it
	// and unknown since may only be added by a newer load.
	fullSeq uint64

	// through is how far runs were handled: by this leader (the loop moves it as it publishes)
	// or, at the start of its term, by its predecessors (the progress in the database); noTime
	// when unknown. A check loaded later than that missed nothing it could run before
	// through: runs are due only after max(through, its creation).
	through    int64
	minCadence time.Duration // floor of the confirmation cadence
}

func newSchedule(through int64, minCadence time.Duration) *schedule {
	return &schedule{entries: map[uuid.UUID]*entry{}, tombs: map[uuid.UUID]uint64{}, through: through, minCadence: minCadence}
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

// upsert adds p (loaded with sequence number seq) or updates its check's entry. A new check
// gets its first run at the next point of its grid — or, when a point passed unhandled since
// the runs known handled (schedule.through, the check's creation, its legacy last_queued), at
// the newest such point, at once (downtime and fail-overs must not lose runs, nor burst). An
// updated check keeps its next run unless its rhythm changed: a new interval, or entering or
// leaving confirmation.
func (s *schedule) upsert(p *plan, seq uint64, now int64) {
	if t, ok := s.tombs[p.id]; ok {
		if t > seq {
			return
		}
		delete(s.tombs, p.id)
	}
	e := s.entries[p.id]
	if e == nil {
		if seq < s.fullSeq {
			return
		}
		e = &entry{plan: p, seq: seq, lastDone: noTime, anchor: noTime}
		if s.through != noTime || p.lastQueued != noTime {
			e.lastDone = max(s.through, p.lastQueued, p.createdAt)
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

// applyFull reconciles the schedule with a load of every active check: plans are upserted and
// checks missing from the load are dropped, unless a newer load has seen them since.
func (s *schedule) applyFull(plans []*plan, seq uint64, now int64) {
	s.upsertFull(plans, seq, now)
	s.finishFull(seq)
}

// upsertFull applies part of a full load (seq). A full load may be applied in parts, with other
// loads and runs in between, and then finished with finishFull.
func (s *schedule) upsertFull(plans []*plan, seq uint64, now int64) {
	if seq < s.fullSeq {
		return
	}
	for _, p := range plans {
		s.upsert(p, seq, now)
	}
}

// finishFull ends a full load (seq) whose plans are all upserted: checks it did not contain
// and no newer load has seen are dropped.
func (s *schedule) finishFull(seq uint64) {
	if seq < s.fullSeq {
		return
	}
	for id, e := range s.entries {
		if e.seq < seq {
			heap.Remove(&s.q, e.index)
			delete(s.entries, id)
		}
	}
	s.fullSeq = seq
	for id, t := range s.tombs {
		if t <= seq {
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
