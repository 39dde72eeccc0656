package ingest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestBatcherDrainsOnStop: results queued when the batcher stops are still written and
// acknowledged; later submissions are refused.
func TestBatcherDrainsOnStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	b, err := NewBatcher(BatcherConfig{FlushInterval: time.Hour, Lanes: 3}, BatcherDeps{Sink: h.ev})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = b.Run(ctx) }()

	var mu sync.Mutex
	var outcomes []error
	for i := range 5 {
		row, err := toRow(h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now().Add(time.Duration(i)*time.Minute)),
			[]string{"cloud:us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Submit(context.Background(), row, func(err error) {
			mu.Lock()
			defer mu.Unlock()
			outcomes = append(outcomes, err)
		}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-stopped
	if len(outcomes) != 5 {
		t.Fatalf("%d of 5 results acknowledged after stop", len(outcomes))
	}
	for _, err := range outcomes {
		if err != nil {
			t.Fatalf("queued result failed: %v", err)
		}
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != 5 {
		t.Fatalf("%d results stored, want 5", n)
	}
	row, _ := toRow(h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now()), []string{"cloud:us-east-1"})
	if err := b.Submit(context.Background(), row, func(error) {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit after stop: %v, want ErrStopped", err)
	}
}
