// Package ratelimit is a token bucket per key (an organization, a heartbeat id), in memory on
// one replica: with n replicas a client may get up to n times the rate.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Keyed holds one token bucket per key. Buckets idle for longer than the idle time given to
// New are forgotten; choose it at least burst/limit, the time an idle bucket takes to refill,
// so forgetting one loses nothing. It is safe for concurrent use.
type Keyed[K comparable] struct {
	limit rate.Limit
	burst int
	idle  time.Duration

	mu        sync.Mutex
	buckets   map[K]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// New allows each key limit events per second with bursts of burst.
func New[K comparable](limit rate.Limit, burst int, idle time.Duration) *Keyed[K] {
	return &Keyed[K]{limit: limit, burst: burst, idle: idle, buckets: map[K]*bucket{}}
}

// Reserve takes one token of key's bucket at now: it returns 0 when the event may proceed,
// else how long until a token is available (and takes nothing).
func (l *Keyed[K]) Reserve(key K, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > l.idle {
		for k, b := range l.buckets {
			if now.Sub(b.lastSeen) > l.idle {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.lastSeen = now
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// Len is how many buckets are held (for tests and metrics).
func (l *Keyed[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
