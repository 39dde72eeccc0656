package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// TakeRateToken decides one event of key at now under a token bucket that gains one token
// every every and holds window/every of them (ratelimit.Shared): it reports whether the event
// is allowed (and took a token), and the key's theoretical arrival time the decision was taken
// on — when allowed, the new one; when refused, the unchanged one, from which the wait follows.
// window must be at least every. One statement, atomic across replicas.
func (s *Store) TakeRateToken(ctx context.Context, key string, now time.Time, every, window time.Duration) (bool, time.Time, error) {
	if every <= 0 || window < every {
		return false, time.Time{}, fmt.Errorf("rate limit %q: interval %s and window %s: want 0 < interval <= window", key, every, window)
	}
	row, err := s.q.TakeRateToken(ctx, dbsqlc.TakeRateTokenParams{Key: key, Now: now,
		Every: interval(every), Horizon: interval(window)})
	if err != nil {
		return false, time.Time{}, translate(err)
	}
	return row.Allowed, row.Tat, nil
}

// interval is d as a PostgreSQL interval (microseconds, PostgreSQL's precision).
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}

// SweepRateLimits deletes the rate-limit rows of buckets that were full before before (they
// mean the same as no row) and returns how many it deleted.
func (s *Store) SweepRateLimits(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.SweepRateLimits(ctx, before)
	return n, translate(err)
}
