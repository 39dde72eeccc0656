package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// LeaseSession is one dedicated PostgreSQL session, opened outside the pool, on which a
// component holds a session-level advisory lock as a lease (the scheduler's leadership). The
// lock lives exactly as long as the session: it is released when the holder unlocks, closes
// the session, dies, or goes silent for longer than the session's idle timeout, after which
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

// Holds reports whether this session holds the advisory lock key: one round trip that also
// proves the session is alive and resets its idle timeout.
func (l *LeaseSession) Holds(ctx context.Context, key int64) (bool, error) {
	ok, err := l.q.HoldsAdvisoryLock(ctx, key)
	return ok, translate(err)
}

// Unlock releases the advisory lock key.
func (l *LeaseSession) Unlock(ctx context.Context, key int64) error {
	return translate(l.q.AdvisoryUnlock(ctx, key))
}

// PID is the session's server process id (pg_stat_activity.pid).
func (l *LeaseSession) PID() uint32 { return l.conn.PgConn().PID() }

// Close ends the session, which releases every lock it holds.
func (l *LeaseSession) Close(ctx context.Context) error { return l.conn.Close(ctx) }
