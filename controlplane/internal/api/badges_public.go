package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/badge"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The public badges, GET /badges/{token}/{status|uptime|response}.svg: outside /v1 and its
// authentication, like the status pages; the token is the only credential. An answer shows
// nothing but the badge's own value: no check id, name, organization or target, in the body or
// the headers, and an unknown token and a disabled one get the same 404.

const (
	// badgeCacheTTL is how long a replica serves a badge (or a 404) from memory: the cap on
	// how stale a badge is. A disabled badge leaves every replica's cache at once (through
	// the revocation feed), or within this long while a replica's feed is lost.
	badgeCacheTTL = 30 * time.Second
	// badgeCacheMax bounds the cache; when it is full of live entries it starts over.
	badgeCacheMax = 10000
	// badgeMissRate and badgeMissBurst bound the badges a replica computes per second (each
	// costs a few indexed queries); beyond them a badge not in the cache is answered 503, so
	// a flood of made-up tokens cannot keep PostgreSQL busy.
	badgeMissRate  = 100
	badgeMissBurst = 200
	// badgeMaxAge is the Cache-Control max-age of a badge for browsers and image proxies.
	badgeMaxAge = "max-age=60"
	// badgeCSP forbids everything an SVG could load or run; its inline style is all it needs.
	badgeCSP = "default-src 'none'; style-src 'unsafe-inline'"
)

// badgeRanges are each badge kind's ranges, the default first: uptime from the SLA
// computation (incidents and rollups), response time from the raw results of the range, so at
// most a week of them.
var badgeRanges = map[string][]string{
	"uptime.svg":   {"30d", "24h", "7d"},
	"response.svg": {"24h", "1h", "7d"},
	"status.svg":   {""},
}

var rangeDurations = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// badgeSource is what the public badges read.
type badgeSource interface {
	BadgeOwner(ctx context.Context, token string) (orgID, checkID uuid.UUID, err error)
	GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (store.Check, error)
	SLAReport(ctx context.Context, orgID uuid.UUID, scope store.SLAScope, from, to time.Time) ([]store.SLACheck, error)
	BadgeResponseTime(ctx context.Context, orgID, checkID uuid.UUID, since time.Time) (time.Duration, int64, error)
}

var _ badgeSource = (*store.Store)(nil)

// badgeCache holds rendered badges (and 404s) by token, kind and range for badgeCacheTTL, and
// limits how many are rendered per second.
type badgeCache struct {
	now     func() time.Time
	misses  *rate.Limiter
	mu      sync.Mutex
	entries map[string]badgeEntry
}

type badgeEntry struct {
	svg     []byte // nil: 404
	checkID uuid.UUID
	expires time.Time
}

func newBadgeCache(now func() time.Time) *badgeCache {
	return &badgeCache{now: now, misses: rate.NewLimiter(badgeMissRate, badgeMissBurst), entries: map[string]badgeEntry{}}
}

func (bc *badgeCache) get(key string) (badgeEntry, bool) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	e, ok := bc.entries[key]
	if !ok || !bc.now().Before(e.expires) {
		return badgeEntry{}, false
	}
	return e, true
}

func (bc *badgeCache) put(key string, e badgeEntry) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	now := bc.now()
	if len(bc.entries) >= badgeCacheMax {
		for k, old := range bc.entries {
			if !now.Before(old.expires) {
				delete(bc.entries, k)
			}
		}
		if len(bc.entries) >= badgeCacheMax {
			clear(bc.entries)
		}
	}
	e.expires = now.Add(badgeCacheTTL)
	bc.entries[key] = e
}

var _ auth.ChangeListener = (*badgeCache)(nil)

// CredentialChanged drops the badges of a check whose badge was disabled on any replica.
func (bc *badgeCache) CredentialChanged(kind string, id uuid.UUID) {
	if kind == store.AuthChangeBadge {
		bc.forgetCheck(id)
	}
}

// ChangesMissed empties the cache: a badge may have been disabled while the feed was lost.
func (bc *badgeCache) ChangesMissed() {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	clear(bc.entries)
}

// forgetCheck drops the check's badges, so that a disabled badge answers 404 at once.
func (bc *badgeCache) forgetCheck(id uuid.UUID) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	for k, e := range bc.entries {
		if e.checkID == id {
			delete(bc.entries, k)
		}
	}
}

// publicBadges serves GET and HEAD /badges/{token}/{file}.
type publicBadges struct {
	src   badgeSource
	now   func() time.Time
	cache *badgeCache
}

func newPublicBadges(d Deps, cache *badgeCache) *publicBadges {
	return &publicBadges{src: d.Store, now: d.now, cache: cache}
}

func (p *publicBadges) serve(c *gin.Context) (int, any, error) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", badgeCSP)
	file, token := c.Param("file"), c.Param("token")
	ranges, known := badgeRanges[file]
	if !known || !validBadgeToken(token) {
		return badgeNotFound(c)
	}
	rng := c.Query("range")
	if rng == "" {
		rng = ranges[0]
	} else if file == "status.svg" || !slices.Contains(ranges, rng) {
		return 0, nil, fieldErrors{{"range", badgeRangeRule(file)}}
	}
	key := file + "|" + rng + "|" + token
	e, hit := p.cache.get(key)
	if !hit {
		if !p.cache.misses.Allow() {
			h.Set("Retry-After", "1")
			return 0, nil, &apiError{Status: http.StatusServiceUnavailable, Type: "busy", Message: "too many badges at once, try again"}
		}
		var err error
		if e, err = p.render(c, token, file, rng); err != nil {
			return 0, nil, err
		}
		p.cache.put(key, e)
	}
	if e.svg == nil {
		return badgeNotFound(c)
	}
	h.Set("Cache-Control", badgeMaxAge)
	c.Data(http.StatusOK, "image/svg+xml", e.svg)
	return selfWritten, nil, nil
}

// render computes a badge; an unknown token (or a check deleted meanwhile) is an entry without
// an SVG.
func (p *publicBadges) render(ctx context.Context, token, file, rng string) (badgeEntry, error) {
	org, checkID, err := p.src.BadgeOwner(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return badgeEntry{}, nil
	} else if err != nil {
		return badgeEntry{}, err
	}
	b, err := p.value(ctx, org, checkID, file, rng)
	if errors.Is(err, store.ErrNotFound) {
		return badgeEntry{}, nil
	} else if err != nil {
		return badgeEntry{}, err
	}
	return badgeEntry{svg: b.SVG(), checkID: checkID}, nil
}

// value reads what the badge shows.
func (p *publicBadges) value(ctx context.Context, org, checkID uuid.UUID, file, rng string) (badge.Badge, error) {
	now := p.now()
	switch file {
	case "status.svg":
		chk, err := p.src.GetCheck(ctx, org, checkID, false)
		if err != nil {
			return badge.Badge{}, err
		}
		// Muting is left out: it silences the owner's alerts and says nothing of the check.
		return badge.Status(checkStatus(chk.State, chk.Paused, false, chk.InMaintenance)), nil
	case "uptime.svg":
		rows, err := p.src.SLAReport(ctx, org, store.SLAScope{CheckID: &checkID}, now.Add(-rangeDurations[rng]), now)
		if err != nil {
			return badge.Badge{}, err
		}
		r := rows[0]
		return badge.Uptime(rng, r.Availability, r.Runs > 0 || r.Incidents > 0), nil
	default:
		p50, n, err := p.src.BadgeResponseTime(ctx, org, checkID, now.Add(-rangeDurations[rng]))
		if err != nil {
			return badge.Badge{}, err
		}
		return badge.Response(rng, p50, n), nil
	}
}

// badgeNotFound is the one answer for a badge that does not exist, whatever the reason.
func badgeNotFound(c *gin.Context) (int, any, error) {
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusNotFound, "text/plain; charset=utf-8", []byte("badge not found\n"))
	return selfWritten, nil, nil
}

func badgeRangeRule(file string) string {
	if file == "status.svg" {
		return "the status badge takes no range"
	}
	return "must be one of " + strings.Join(badgeRanges[file], ", ")
}

// validBadgeToken reports whether s could be a badge token (store.BadgeTokenLen characters of
// base64url), so that other paths are refused without a query.
func validBadgeToken(s string) bool {
	if len(s) != store.BadgeTokenLen {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
