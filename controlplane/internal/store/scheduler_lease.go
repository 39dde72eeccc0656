package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaseSession is one dedicated PostgreSQL session, opened outside the pool, on which a
// component holds a session-level advisory lock as a lease (the scheduler's leadership). The
// lock lives exactly as long as the session: it is released when the holder unlocks, closes
// the session, dies, or goes silent for longer than the session's idle timeout, after which
// PostgreSQL ends the session itself. It is not safe for concurrent use.
type LeaseSession struct {
	conn *pgx.Conn
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
	if idleTimeout > 0 {
		secs := max(1, int(idleTimeout/time.Second))
		_, err = conn.Exec(ctx, fmt.Sprintf(`SET idle_session_timeout = %d;
			SET tcp_keepalives_idle = %d; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = %d`,
			idleTimeout.Milliseconds(), secs, secs))
		if err != nil {
			conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the session is useless either way
			return nil, fmt.Errorf("configure lease session: %w", translate(err))
		}
	}
	return &LeaseSession{conn: conn}, nil
}

// TryLock takes the session-level advisory lock key if nobody holds it, without waiting. A
// session that already holds it gets it again (and must unlock it as many times).
func (l *LeaseSession) TryLock(ctx context.Context, key int64) (bool, error) {
	var ok bool
	err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok)
	return ok, translate(err)
}

// Holds reports whether this session holds the advisory lock key: one round trip that also
// proves the session is alive and resets its idle timeout.
func (l *LeaseSession) Holds(ctx context.Context, key int64) (bool, error) {
	var ok bool
	err := l.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
		  AND classid = ($1::bigint >> 32)::oid AND objid = ($1::bigint & 4294967295)::oid AND objsubid = 1)`, key).Scan(&ok)
	return ok, translate(err)
}

// Unlock releases the advisory lock key.
func (l *LeaseSession) Unlock(ctx context.Context, key int64) error {
	_, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
	return translate(err)
}

// PID is the session's server process id (pg_stat_activity.pid).
func (l *LeaseSession) PID() uint32 { return l.conn.PgConn().PID() }

// Close ends the session, which releases every lock it holds.
func (l *LeaseSession) Close(ctx context.Context) error { return l.conn.Close(ctx) }
