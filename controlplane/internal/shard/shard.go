// Package shard divides the checks into a fixed number of shards for scheduling and decides,
// from what a replica sees of the shards' leases, which shards it should give up or take. It
// is pure arithmetic: the leases themselves are PostgreSQL advisory locks held by the
// scheduler (see the scheduler package's documentation).
package shard

import (
	"crypto/sha256"

	"github.com/google/uuid"
)

// Count is the number of shards. It is fixed: a check's shard must be the same on every
// replica and across versions, and the shards' progress rows and lock keys are numbered by it.
// 256 is enough to spread checks evenly over dozens of replicas (each replica's share differs
// from the ideal by at most one shard, under 0.4% of the checks).
const Count = 256

// Of is the shard of a check: the first byte of the SHA-256 of its id's 16 bytes. The store
// computes the same in SQL (get_byte(sha256(uuid_send(id)), 0)) to load a shard's checks. A
// hash rather than the id's own bytes, because UUIDv7 ids share their leading (time) bits and
// their trailing bits are not random in every version.
func Of(id uuid.UUID) int {
	sum := sha256.Sum256(id[:])
	return int(sum[0])
}

// Target is how many shards each of replicas live replicas aims to own: ceil(Count/replicas),
// so that the targets together cover every shard whatever the replicas' number.
func Target(replicas int) int {
	replicas = max(replicas, 1)
	return (Count + replicas - 1) / replicas
}

// Set is a set of shards.
type Set [Count / 64]uint64

// Add puts shard k in the set.
func (s *Set) Add(k int) { s[k/64] |= 1 << (k % 64) }

// Remove takes shard k out of the set.
func (s *Set) Remove(k int) { s[k/64] &^= 1 << (k % 64) }

// Has reports whether shard k is in the set.
func (s Set) Has(k int) bool { return s[k/64]&(1<<(k%64)) != 0 }

// Len is the number of shards in the set.
func (s Set) Len() int {
	n := 0
	for k := range Count {
		if s.Has(k) {
			n++
		}
	}
	return n
}

// List returns the set's shards in ascending order.
func (s Set) List() []int {
	var out []int
	for k := range Count {
		if s.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

// SetOf returns the set of shards ks.
func SetOf(ks ...int) Set {
	var s Set
	for _, k := range ks {
		s.Add(k)
	}
	return s
}
