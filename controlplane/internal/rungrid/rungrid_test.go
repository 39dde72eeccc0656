package rungrid

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// LastDue is the newest point of the check's grid at or before through, never before since.
func TestLastDue(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("01a21474-d529-75e6-a5e3-6c0db7b39031")
	interval := 30 * time.Second
	through := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	due, ok := LastDue(id, interval, time.Time{}, through)
	if !ok || due.After(through) || through.Sub(due) >= interval {
		t.Fatalf("LastDue %v (%v), want within the interval before %v", due, ok, through)
	}
	if due.UnixMilli()%interval.Milliseconds() != Phase(id, interval) {
		t.Errorf("%v is off the grid of phase %dms", due, Phase(id, interval))
	}
	if again, _ := LastDue(id, interval, time.Time{}, due); !again.Equal(due) {
		t.Errorf("a due time is its own last due time: got %v for %v", again, due)
	}
	if _, ok := LastDue(id, interval, due.Add(time.Millisecond), through); ok {
		t.Error("a due time before the check existed")
	}
	if _, ok := LastDue(id, 0, time.Time{}, through); ok {
		t.Error("a due time without an interval")
	}
}
