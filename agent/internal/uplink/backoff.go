package uplink

import (
	"math/rand/v2"
	"time"
)

// backoff is capped exponential backoff with jitter: each delay is drawn from [d/2, d) where d
// doubles from min to max, so a fleet of agents reconnecting after a control-plane restart
// spreads out instead of arriving together.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
}

// next returns the delay before the next attempt and doubles the ceiling.
func (b *backoff) next() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = b.min
	case b.cur < b.max:
		b.cur = min(2*b.cur, b.max)
	}
	half := b.cur / 2
	return half + rand.N(b.cur-half+1) //nolint:gosec // jitter, not a secret
}

// reset starts over from min, after a session that proved the path healthy.
func (b *backoff) reset() { b.cur = 0 }
