package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
)

// The API's rate limits. Their buckets are shared by every replica (package ratelimit).
const (
	// Per-organization request rate of the routes whose contract documents 429 (environment
	// variables, projects, moves; api/openapi/openapi.yaml). The contract states no thresholds: these are
	// generous defaults that only stop runaway scripts.
	orgRateEvery = time.Second / 20 // 20 requests per second, sustained
	orgRateBurst = 100              // requests at once

	// Test messages (POST /v1/integrations/{id}/test, an extension) make requests to a host
	// the caller chose: 3 at once per integration then one every 10 s, and 10 at once per
	// organization then one every 6 s (10 a minute), whichever integration they test.
	integrationTestEvery    = 10 * time.Second
	integrationTestBurst    = 3
	integrationTestOrgEvery = 6 * time.Second
	integrationTestOrgBurst = 10
)

// rateLimit is one limit a route group applies: its rule, the bucket a request falls in, and
// whose rate the 429's message names.
type rateLimit struct {
	rule  ratelimit.Rule
	key   func(c *gin.Context) string
	whose string
}

// rateLimits builds the API's rate-limit middleware on the shared limiter.
type rateLimits struct {
	lim ratelimit.Limiter
	now func() time.Time
}

func newRateLimits(lim ratelimit.Limiter, now func() time.Time) rateLimits {
	if now == nil {
		now = time.Now
	}
	return rateLimits{lim: lim, now: now}
}

// org is the per-organization limit of the routes with a documented 429. It fails open: it only
// stops runaway scripts, and these routes need PostgreSQL anyway.
func (l rateLimits) org() gin.HandlerFunc {
	return l.middleware(rateLimit{
		rule: ratelimit.Rule{Name: "api_org", Every: orgRateEvery, Burst: orgRateBurst, OnError: ratelimit.FailOpen},
		key:  func(c *gin.Context) string { return orgID(c).String() }, whose: "this organization"})
}

// integrationTest limits test messages per integration, then per organization. It fails
// closed: a test message is a request to a host the caller chose.
func (l rateLimits) integrationTest() gin.HandlerFunc {
	return l.middleware(
		rateLimit{rule: ratelimit.Rule{Name: "integration_test", Every: integrationTestEvery,
			Burst: integrationTestBurst, OnError: ratelimit.FailClosed},
			key:   func(c *gin.Context) string { return orgID(c).String() + "/" + c.Param("integration_id") },
			whose: "test messages of this integration"},
		rateLimit{rule: ratelimit.Rule{Name: "integration_test_org", Every: integrationTestOrgEvery,
			Burst: integrationTestOrgBurst, OnError: ratelimit.FailClosed},
			key:   func(c *gin.Context) string { return orgID(c).String() },
			whose: "test messages of this organization"})
}

// middleware answers 429 with Retry-After (whole seconds, at least 1) when one of limits
// refuses the request; a limit that refuses takes nothing from those after it. It runs after
// authentication.
func (l rateLimits) middleware(limits ...rateLimit) gin.HandlerFunc {
	return func(c *gin.Context) {
		now := l.now()
		for _, lim := range limits {
			wait, err := l.lim.Reserve(c.Request.Context(), lim.rule, lim.key(c), now)
			if err != nil {
				fail(c, err)
				return
			}
			if wait > 0 {
				tooManyRequests(c, wait, lim.whose)
				return
			}
		}
		c.Next()
	}
}

// tooManyRequests answers 429 in the failure envelope, with Retry-After.
func tooManyRequests(c *gin.Context, wait time.Duration, whose string) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	c.Header("Retry-After", strconv.Itoa(secs))
	fail(c, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limited",
		Message: "rate limit exceeded for " + whose + "; retry after " + strconv.Itoa(secs) + "s"})
}
