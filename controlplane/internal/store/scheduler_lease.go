package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// LeaseSession is one dedicated PostgreSQL session, opened outside the pool, on which a
// component holds session-level advisory locks as leases (the scheduler's shards). A lock
// lives at most as long as the session: it is released when the holder unlocks, closes the
// session, dies, or goes silent for longer than the session's idle timeout, after which
// PostgreSQL ends the session itself. It is not safe for concurrent use.
type LeaseSession struct {
	conn *pgx.Conn
	q    *dbsqlc.Queries // on conn
}

// OpenLeaseSession opens a dedicated session with the pool's connection settings, named
// application_name in pg_stat_activity. idleTimeout (PostgreSQL's idle_session_timeout, 0 =
// none) makes the server end the session, and so release its locks, once the holder has sent
// nothing for that long; TCP keepalives make a vanished peer noticed in about the same time.
func (s *Store) OpenLeaseSession(ctx context.Context, applicationName string, idleTimeout time.Duration) (*LeaseSession, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = applicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, translate(err)
	}
	q := dbsqlc.New(conn)
	if idleTimeout > 0 {
		secs := strconv.Itoa(max(1, int(idleTimeout/time.Second)))
		err = q.ConfigureLeaseSession(ctx, dbsqlc.ConfigureLeaseSessionParams{
			IdleTimeoutMs: strconv.FormatInt(idleTimeout.Milliseconds(), 10), KeepaliveIdleSeconds: secs, KeepaliveCount: secs})
		if err != nil {
			conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the session is useless either way
			return nil, fmt.Errorf("configure lease session: %w", translate(err))
		}
	}
	return &LeaseSession{conn: conn, q: q}, nil
}

// TryLock takes the session-level advisory lock key if nobody holds it, without waiting. A
// session that already holds it gets it again (and must unlock it as many times).
func (l *LeaseSession) TryLock(ctx context.Context, key int64) (bool, error) {
	ok, err := l.q.TryAdvisoryLock(ctx, key)
	return ok, translate(err)
}

// ClassLocks returns the advisory locks of one class held in this database — keys whose upper
// 32 bits are class — as their lower 32 bits: those this session holds (mine) and those other
// sessions hold (others), in ascending order. It is one round trip that also proves the session
// alive and resets its idle timeout.
func (l *LeaseSession) ClassLocks(ctx context.Context, class uint32) (mine, others []int64, err error) {
	rows, err := l.q.ClassLocks(ctx, int64(class))
	if err != nil {
		return nil, nil, translate(err)
	}
	for _, r := range rows {
		if r.Mine {
			mine = append(mine, r.Low)
		} else {
			others = append(others, r.Low)
		}
	}
	slices.Sort(mine)
	slices.Sort(others)
	return mine, others, nil
}

// CountSessions counts the sessions of this database named applicationName (pg_stat_activity),
// this one included when it bears the name: how many lease holders are live.
func (l *LeaseSession) CountSessions(ctx context.Context, applicationName string) (int, error) {
	n, err := l.q.CountSessions(ctx, applicationName)
	return int(n), translate(err)
}

// Unlock releases the advisory lock key.
func (l *LeaseSession) Unlock(ctx context.Context, key int64) error {
	return translate(l.q.AdvisoryUnlock(ctx, key))
}

// PID is the session's server process id (pg_stat_activity.pid).
func (l *LeaseSession) PID() uint32 { return l.conn.PgConn().PID() }

// Close ends the session, which releases every lock it holds.
func (l *LeaseSession) Close(ctx context.Context) error { return l.conn.Close(ctx) }
