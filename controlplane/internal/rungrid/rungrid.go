// Package rungrid is the arithmetic of a check's regular schedule, shared by the scheduler,
// which publishes runs on it, and the store, which derives last_queued from it: a check runs
// every test_interval at a phase within it, hash(check id) mod interval, so checks sharing an
// interval spread evenly over it and every replica computes the same due times.
package rungrid

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// Phase is the check's offset within its interval in milliseconds: a hash of its id modulo
// the interval. The ids are UUIDv7s, whose leading bits are a timestamp, so the hash covers
// the whole id.
func Phase(id uuid.UUID, interval time.Duration) int64 {
	step := interval.Milliseconds()
	if step <= 0 {
		return 0
	}
	sum := sha256.Sum256(id[:])
	return int64(binary.BigEndian.Uint64(sum[:8]) % uint64(step))
}

// LastDue is the newest due time of the check's regular schedule at or before through, or
// false when it is before since (the check did not exist yet) or the interval is not
// positive.
func LastDue(id uuid.UUID, interval time.Duration, since, through time.Time) (time.Time, bool) {
	step := interval.Milliseconds()
	if step <= 0 {
		return time.Time{}, false
	}
	base := Phase(id, interval)
	t := through.UnixMilli()
	d := t - base
	k := d / step
	if d%step != 0 && d < 0 {
		k--
	}
	due := time.UnixMilli(base + k*step).UTC()
	if due.Before(since) {
		return time.Time{}, false
	}
	return due, true
}
