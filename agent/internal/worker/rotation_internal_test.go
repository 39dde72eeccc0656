package worker

import (
	"slices"
	"testing"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestRotationRule: jobs on time run; late ones alternate per check and region, starting with
// a shed for a check the rotation does not know; a job that missed its deadline makes the
// check's next late job run; a check forgotten after rotationTTL is unknown again.
func TestRotationRule(t *testing.T) {
	r := newRotation()
	t0 := time.Unix(1_700_000_000, 0)
	job := func(check string, due time.Time) *vantagev1.CheckJob {
		return &vantagev1.CheckJob{CheckId: check, ScheduledAtUnixMs: due.UnixMilli(), DeadlineUnixMs: due.Add(4 * time.Second).UnixMilli()}
	}
	onTime, late := time.Second, 2*time.Second // the window is 4s: late past 1s
	admit := func(region, check string, due time.Time, lateness time.Duration) bool {
		return r.admit(region, job(check, due), time.Time{}, false, due.Add(lateness))
	}
	for i := range 3 {
		if !admit("r", "a", t0.Add(time.Duration(i)*4*time.Second), onTime) {
			t.Fatalf("on-time job %d shed", i)
		}
	}
	at := t0.Add(time.Minute)
	var got []bool
	for i := range 4 {
		got = append(got, admit("r", "a", at.Add(time.Duration(i)*4*time.Second), late))
	}
	if want := []bool{false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("late jobs of a check that ran: %v, want %v", got, want)
	}
	if admit("r", "b", at, late) {
		t.Error("the first late job of an unknown check ran")
	}
	if admit("r2", "a", at, late) {
		t.Error("the rotation mixed regions: a's first late job in r2 ran")
	}
	r.missed("r", "a", at.Add(20*time.Second))
	if !admit("r", "a", at.Add(24*time.Second), late) {
		t.Error("a late job after an expired one was shed")
	}
	if admit("r", "a", at.Add(28*time.Second), late) {
		t.Error("a late job after a run ran")
	}
	if !r.admit("r", job("a", at.Add(32*time.Second)), time.Time{}, true, at.Add(32*time.Second+late)) {
		t.Error("a late redelivered job was shed")
	}
	// A catch-up run: due long ago, queued now, its deadline its attempts' budget from now.
	catchUp := &vantagev1.CheckJob{CheckId: "a", ScheduledAtUnixMs: at.UnixMilli(), DeadlineUnixMs: at.Add(44 * time.Second).UnixMilli()}
	if !r.admit("r", catchUp, at.Add(40*time.Second), false, at.Add(40*time.Second+onTime/2)) {
		t.Error("a job just queued, long after its due time, was shed")
	}
	catchUp.CatchUp = true
	if !r.admit("r", catchUp, time.Time{}, false, at.Add(42*time.Second)) {
		t.Error("a late catch-up run was shed")
	}
	later := at.Add(28*time.Second + rotationTTL + rotationSweep)
	if !admit("r", "b", later, onTime) || len(r.last) != 1 {
		t.Errorf("after the TTL, %d checks remembered, want only b", len(r.last))
	}
}
