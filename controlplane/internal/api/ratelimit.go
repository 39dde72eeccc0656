package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"golang.org/x/time/rate"
)

// Per-organization request rate of the routes whose contract documents 429 (environment
// variables, projects, moves; supplement §3.7). The contract states no thresholds: these are
// generous defaults that only stop runaway scripts.
const (
	defaultOrgRate  rate.Limit = 20  // requests per second, sustained
	defaultOrgBurst            = 100 // requests at once
)

// orgRateIdle is how long an organization's bucket is kept without requests. A bucket idle for
// burst/rate seconds is full again, so forgetting it after longer loses nothing.
const orgRateIdle = time.Minute

// orgRateLimiter is a token bucket per organization, in memory on each replica (so a client
// spread over n replicas may get up to n times the rate). It is safe for concurrent use.
type orgRateLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[uuid.UUID]*orgBucket
	lastSweep time.Time
}

type orgBucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// newOrgRateLimiter allows each organization limit requests per second with bursts of burst;
// now is the clock (time.Now when nil).
func newOrgRateLimiter(limit rate.Limit, burst int, now func() time.Time) *orgRateLimiter {
	if now == nil {
		now = time.Now
	}
	return &orgRateLimiter{limit: limit, burst: burst, now: now, buckets: map[uuid.UUID]*orgBucket{}}
}

// reserve takes one token of org's bucket; it returns 0 when the request may proceed, else how
// long until a token is available (and takes nothing).
func (l *orgRateLimiter) reserve(org uuid.UUID) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > orgRateIdle {
		for id, b := range l.buckets {
			if now.Sub(b.lastSeen) > orgRateIdle {
				delete(l.buckets, id)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.buckets[org]
	if !ok {
		b = &orgBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[org] = b
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

// middleware answers 429 with Retry-After (whole seconds, at least 1) when the caller's
// organization is over its rate. It runs after authentication.
func (l *orgRateLimiter) middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		wait := l.reserve(orgID(c))
		if wait <= 0 {
			c.Next()
			return
		}
		secs := int(math.Ceil(wait.Seconds()))
		if secs < 1 {
			secs = 1
		}
		c.Header("Retry-After", strconv.Itoa(secs))
		fail(c, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limited",
			Message: "rate limit exceeded for this organization; retry after " + strconv.Itoa(secs) + "s"})
	}
}
