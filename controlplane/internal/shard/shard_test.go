package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// The shard of an id must never change: the store computes it in SQL too, and progress rows
// are kept per shard. These values are the SHA-256 first bytes of the ids' 16 bytes.
func TestOfIsStable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		want int
	}{
		{"00000000-0000-0000-0000-000000000000", 0x37},
		{"0193b2f4-7c1a-7d2e-9f3b-5a6c7d8e9f00", 0x98},
	} {
		id := uuid.MustParse(tc.id)
		got := Of(id)
		if got != tc.want {
			t.Errorf("Of(%s) = %#x, want %#x", id, got, tc.want)
		}
	}
}

// Consecutive UUIDv7 ids share their leading bits; their shards must still spread.
func TestOfSpreadsConsecutiveIDs(t *testing.T) {
	t.Parallel()
	const n = 256 * 200
	var per [Count]int
	for range n {
		per[Of(uuid.Must(uuid.NewV7()))]++
	}
	for k, c := range per {
		// 200 expected per shard; a binomial's spread is ≈ 14, so 100..300 fails only on a
		// broken hash.
		if c < 100 || c > 300 {
			t.Fatalf("shard %d got %d of %d ids, want about %d", k, c, n, n/Count)
		}
	}
}

func TestTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ replicas, want int }{
		{0, 256}, {1, 256}, {2, 128}, {3, 86}, {5, 52}, {256, 1}, {300, 1},
	} {
		if got := Target(tc.replicas); got != tc.want {
			t.Errorf("Target(%d) = %d, want %d", tc.replicas, got, tc.want)
		}
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	s := SetOf(0, 63, 64, 255)
	s.Remove(63)
	if got := s.List(); !slices.Equal(got, []int{0, 64, 255}) || s.Len() != 3 || !s.Has(255) || s.Has(63) {
		t.Fatalf("set = %v (len %d)", got, s.Len())
	}
}

func seq(from, to int) []int {
	var out []int
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

func TestRebalance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		held, free          []int
		replicas, offset    int
		wantRelease, wantTk []int
	}{
		{name: "alone takes everything", free: seq(0, 256), replicas: 1, wantTk: seq(0, 256)},
		{name: "a second replica: the holder gives up its upper half", held: seq(0, 256), replicas: 2, wantRelease: seq(128, 256)},
		{name: "the newcomer takes up to its target", free: seq(128, 256), replicas: 2, wantTk: seq(128, 256)},
		{name: "takes from its offset, wrapping", free: []int{1, 2, 3, 4}, held: seq(100, 184), replicas: 3, offset: 3, wantTk: []int{4, 1}},
		{name: "a negative offset wraps too", free: []int{1, 2, 3}, held: seq(100, 185), replicas: 3, offset: -1, wantTk: []int{3}},
		{name: "at target: nothing to do", held: seq(0, 86), free: seq(200, 210), replicas: 3},
		{name: "below target, nothing free", held: seq(0, 10), replicas: 3},
		{name: "a replica left: take its share", held: seq(0, 86), free: seq(86, 172), replicas: 2, wantTk: seq(86, 128)},
		{name: "no replica counted: as if alone", held: seq(0, 3), free: []int{9}, replicas: 0, wantTk: []int{9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release, take := Rebalance(tc.held, tc.free, tc.replicas, tc.offset)
			if !slices.Equal(release, tc.wantRelease) || !slices.Equal(take, tc.wantTk) {
				t.Fatalf("Rebalance = release %v, take %v; want release %v, take %v", release, take, tc.wantRelease, tc.wantTk)
			}
		})
	}
}

// cluster simulates replicas sharing the shards' locks: each step, the replicas look in a
// random order, each seeing the locks as the ones before it left them.
type cluster struct {
	owner map[int]string // shard → replica; absent: free
	live  []string
	moves int // shards that changed hands (given up or taken)
	rng   *rand.Rand
}

func (c *cluster) step() {
	order := slices.Clone(c.live)
	c.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i, r := range order {
		var held, free []int
		for k := range Count {
			switch o, ok := c.owner[k]; {
			case !ok:
				free = append(free, k)
			case o == r:
				held = append(held, k)
			}
		}
		release, take := Rebalance(held, free, len(c.live), i*Count/len(order))
		for _, k := range release {
			delete(c.owner, k)
			c.moves++
		}
		for _, k := range take {
			if _, taken := c.owner[k]; !taken { // the lock
				c.owner[k] = r
				c.moves++
			}
		}
	}
}

func (c *cluster) settled() error {
	per := map[string]int{}
	for k := range Count {
		o, ok := c.owner[k]
		if !ok {
			return fmt.Errorf("shard %d has no owner", k)
		}
		per[o]++
	}
	for _, r := range c.live {
		if per[r] > Target(len(c.live)) {
			return fmt.Errorf("%s owns %d shards, above its target %d", r, per[r], Target(len(c.live)))
		}
	}
	return nil
}

func (c *cluster) kill(r string) {
	c.live = slices.DeleteFunc(c.live, func(x string) bool { return x == r })
	for k, o := range c.owner {
		if o == r {
			delete(c.owner, k) // its session ended: its locks are released
		}
	}
}

// Replicas joining and leaving converge within two looks each, moving no more shards than the
// change requires: a join moves the newcomer's share (given up, then taken), a death only the
// dead replica's shards.
func TestRebalanceConverges(t *testing.T) {
	t.Parallel()
	c := &cluster{owner: map[int]string{}, rng: rand.New(rand.NewPCG(1, 2))}
	settle := func(what string, maxMoves int) {
		t.Helper()
		c.moves = 0
		for range 2 {
			c.step()
		}
		if err := c.settled(); err != nil {
			t.Fatalf("%s: not settled after two steps: %v", what, err)
		}
		if c.moves > maxMoves {
			t.Fatalf("%s: %d shard moves, want at most %d", what, c.moves, maxMoves)
		}
	}
	c.live = []string{"a"}
	settle("a alone", Count)
	c.live = append(c.live, "b")
	settle("b joins", 2*128)
	c.live = append(c.live, "c")
	settle("c joins", 2*(Count-2*Target(3))) // a and b give up 42 each, c takes those 84
	c.kill("b")
	settle("b dies", 86)
	c.live = append(c.live, "d", "e")
	settle("d and e join", 2*Count)
	for _, r := range []string{"a", "c", "d"} {
		c.kill(r)
	}
	settle("three of four die", Count)
}
