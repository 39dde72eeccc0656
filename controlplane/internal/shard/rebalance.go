package shard

// Rebalance decides a replica's next step from one look at the leases: held are the shards it
// holds and free those nobody holds, both in ascending order, and replicas how many replicas
// are live (itself included). A
// replica above its Target gives up its excess; one below it takes free shards up to it. Every
// replica applying it repeatedly converges on each holding at most Target and no shard free:
// the targets together cover every shard, so a free shard always has a replica below target
// to take it.
//
// Which shards are taken starts at offset in free (taken modulo its length), so that replicas
// looking at once mostly try different shards; the lock decides between those that try the
// same. The shards given up are the highest numbered it holds, a choice as good as any that
// is stable between two looks.
func Rebalance(held, free []int, replicas, offset int) (release, take []int) {
	target := Target(replicas)
	if len(held) > target {
		return append([]int(nil), held[target:]...), nil
	}
	want := min(target-len(held), len(free))
	if want == 0 {
		return nil, nil
	}
	start := ((offset % len(free)) + len(free)) % len(free)
	take = make([]int, 0, want)
	for i := range want {
		take = append(take, free[(start+i)%len(free)])
	}
	return nil, take
}
