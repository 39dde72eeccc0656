package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Store is the PostgreSQL-backed persistence of the control plane. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	q      *dbsqlc.Queries // the generated queries, on the pool; q.WithTx(tx) inside a transaction
	sealer Sealer
	now    func() time.Time
	// progress caches the scheduler's progress, from which last_queued is derived.
	progress cachedProgress
}

// Sealer encrypts values that must be stored encrypted at rest (variable values, check
// passwords). It is implemented by secrets.Keyring.
type Sealer interface {
	Seal(plaintext []byte) ([]byte, error)
	Open(sealed []byte) ([]byte, error)
	// Fingerprint names the key Seal uses (CheckSecretKey, ReencryptSecrets).
	Fingerprint() string
}

// Option configures a Store.
type Option func(*Store)

// WithClock replaces time.Now (default) as the source of timestamps the store writes itself.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// DefaultStatementTimeout is the statement_timeout of every connection unless the database URL
// sets one. It bounds what the server itself runs; callers bound their waits with ctx (the API
// gives every request a deadline). Migrate lifts it on its own session.
const DefaultStatementTimeout = "30s"

// Open connects to PostgreSQL at url, verifies the connection and returns a Store. It does not
// migrate; call Migrate.
func Open(ctx context.Context, url string, sealer Sealer, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx defaults to max(4, cores) connections; ingest lanes, the evaluator's sweep, the
		// scheduler and the API together need more than that on a small machine.
		cfg.MaxConns = max(cfg.MaxConns, 20)
	}
	// A query the server cannot finish in time fails rather than holding its connection; the
	// URL may set another value (?statement_timeout=…, in milliseconds or with a unit).
	if _, set := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = DefaultStatementTimeout
	}
	// A server that accepts connections but does not answer (frozen) must not hang a connect
	// attempt; the URL's connect_timeout wins.
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUID(conn)
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s@%s/%s: %w", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Database, err)
	}
	s := &Store{pool: pool, q: dbsqlc.New(pool), sealer: sealer, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close releases every connection.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the pool for components that own their SQL elsewhere in the store's package tree
// and for readiness checks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// inTx runs fn in a transaction, committing when it returns nil. A transaction that loses a
// deadlock or a serialization conflict is retried (fn must therefore be safe to run again: it
// only talks to tx).
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !txConflict(err) {
			break
		}
	}
	return translate(err)
}

// txConflict reports whether err is a transaction conflict that a retry resolves.
func txConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}
