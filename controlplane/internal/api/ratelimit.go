package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
)

// Per-organization request rate of the routes whose contract documents 429 (environment
// variables, projects, moves; supplement §3.7). The contract states no thresholds: these are
// generous defaults that only stop runaway scripts.
const (
	defaultOrgRate  rate.Limit = 20  // requests per second, sustained
	defaultOrgBurst int        = 100 // requests at once
)

// orgRateIdle is how long an organization's bucket is kept without requests. A bucket idle for
// burst/rate seconds is full again, so forgetting it after longer loses nothing.
const orgRateIdle = time.Minute

// orgRateLimiter is a token bucket per organization (see package ratelimit).
type orgRateLimiter struct {
	buckets *ratelimit.Keyed[uuid.UUID]
	now     func() time.Time
}

// newOrgRateLimiter allows each organization limit requests per second with bursts of burst;
// now is the clock (time.Now when nil).
func newOrgRateLimiter(limit rate.Limit, burst int, now func() time.Time) *orgRateLimiter {
	if now == nil {
		now = time.Now
	}
	return &orgRateLimiter{buckets: ratelimit.New[uuid.UUID](limit, burst, orgRateIdle), now: now}
}

// reserve takes one token of org's bucket; it returns 0 when the request may proceed, else how
// long until a token is available (and takes nothing).
func (l *orgRateLimiter) reserve(org uuid.UUID) time.Duration { return l.buckets.Reserve(org, l.now()) }

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
