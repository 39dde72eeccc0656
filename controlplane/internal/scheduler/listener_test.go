package scheduler

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// heard is what a ShardListener was told: the shards taken and not given since, and every
// call out of turn (a shard taken twice, or given without being taken).
type heard struct {
	mu     sync.Mutex
	held   shard.Set
	wrong  []string
	givens int
}

func (h *heard) ShardsTaken(shards []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range shards {
		if h.held.Has(k) {
			h.wrong = append(h.wrong, fmt.Sprintf("shard %d taken twice", k))
		}
		h.held.Add(k)
	}
}

func (h *heard) ShardsGiven(shards []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.givens++
	for _, k := range shards {
		if !h.held.Has(k) {
			h.wrong = append(h.wrong, fmt.Sprintf("shard %d given but not held", k))
		}
		h.held.Remove(k)
	}
}

func (h *heard) givenCalls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.givens
}

func (h *heard) snapshot() (held []int, wrong []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held.List(), slices.Clone(h.wrong)
}

// Two replicas' listeners hear of the shards each schedules: after the first took every shard
// and gave the second its share, what they were told partitions the 256 shards exactly as the
// replicas own them; a replica that stops gives every shard it held before it goes, and the
// other is told of taking them.
func TestTheShardListenerHearsOfEveryShardTakenAndGiven(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var ha, hb heard
	a, _, stopA := e.startSchedulerWith(t, Config{}, "a", &ha)
	testwait.Eventually(t, 10*time.Second, func() error { return shared(a) })
	b, _, _ := e.startSchedulerWith(t, Config{}, "b", &hb)

	partition := func() error {
		if err := shared(a, b); err != nil {
			return err
		}
		heldA, _ := ha.snapshot()
		heldB, _ := hb.snapshot()
		if !slices.Equal(heldA, a.Owned().List()) || !slices.Equal(heldB, b.Owned().List()) {
			return fmt.Errorf("listeners hold %d and %d shards, the schedulers own %d and %d",
				len(heldA), len(heldB), a.Owned().Len(), b.Owned().Len())
		}
		var all shard.Set
		for _, k := range slices.Concat(heldA, heldB) {
			if all.Has(k) {
				return fmt.Errorf("shard %d heard of as held by both", k)
			}
			all.Add(k)
		}
		if all.Len() != shard.Count {
			return fmt.Errorf("%d of %d shards heard of as held", all.Len(), shard.Count)
		}
		return nil
	}
	testwait.Eventually(t, 15*time.Second, partition)
	if ha.givenCalls() == 0 {
		t.Error("a was never told to give shards up, though it took them all before b came")
	}

	stopA()
	if held, _ := ha.snapshot(); len(held) != 0 {
		t.Errorf("a stopped without giving %d shards: %v", len(held), held)
	}
	testwait.Eventually(t, 10*time.Second, func() error {
		if held, _ := hb.snapshot(); len(held) != shard.Count {
			return fmt.Errorf("b heard of %d shards taken, want all %d", len(held), shard.Count)
		}
		return nil
	})
	for _, h := range []*heard{&ha, &hb} {
		if _, wrong := h.snapshot(); len(wrong) > 0 {
			t.Errorf("calls out of turn: %v", wrong)
		}
	}
}
