package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Store is the PostgreSQL-backed persistence of the control plane. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	sealer Sealer
	now    func() time.Time
}

// Sealer encrypts values that must be stored encrypted at rest (variable values, check
// passwords). It is implemented by secrets.Keyring.
type Sealer interface {
	Seal(plaintext []byte) ([]byte, error)
	Open(sealed []byte) ([]byte, error)
}

// Option configures a Store.
type Option func(*Store)

// WithClock replaces time.Now (default) as the source of timestamps the store writes itself.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

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
	s := &Store{pool: pool, sealer: sealer, now: time.Now}
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

// migrationLockKey serializes concurrent Migrate calls across replicas (any constant will do;
// it is "vantage" in ASCII).
const migrationLockKey = 0x76616e74616765

// Migrate applies every embedded migration that has not been applied yet, in order, each in its
// own transaction, under an advisory lock so that replicas starting together do not race.
func (s *Store) Migrate(ctx context.Context) error {
	return Migrate(ctx, s.pool)
}

// Migrate applies the embedded migrations through any pgx connection pool.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	migs, err := loadMigrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLockKey) //nolint:errcheck // the lock dies with the session anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: read applied versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("migrate: read applied versions: %w", err)
	}
	for _, v := range versions {
		applied[int(v)] = true
	}
	for _, m := range migs {
		if applied[m.version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
	}
	return nil
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var migs []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %q: name must start with a number and an underscore", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		migs = append(migs, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i := 1; i < len(migs); i++ {
		if migs[i].version == migs[i-1].version {
			return nil, errors.New("two migrations share version " + strconv.Itoa(migs[i].version))
		}
	}
	return migs, nil
}

// MigrationsDigest identifies the embedded migration set; tests use it to name template databases.
func MigrationsDigest() string {
	migs, err := loadMigrations()
	if err != nil {
		return "invalid"
	}
	var b strings.Builder
	for _, m := range migs {
		b.WriteString(m.name)
		b.WriteString(m.sql)
	}
	return b.String()
}

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
