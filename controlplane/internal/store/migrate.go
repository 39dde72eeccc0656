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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrations are numbered SQL files, applied in order, each once, each in its own transaction.
// The policy (docs/operations.md, "Schema changes"):
//   - numbers are contiguous (a test fails on a gap);
//   - a migration that has landed on main is never edited: a change is a new migration, and
//     schema.sql (the schema that results from all of them, compared by a test) shows it;
//   - there are no down-migrations: a release that must be rolled back is rolled forward with a
//     new migration, because a down-migration that drops columns loses data written since.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLockKey serializes concurrent Migrate calls across replicas (any constant will do;
// it is "vantage" in ASCII).
const migrationLockKey = 0x76616e74616765

// renumbered maps the names migrations had before their numbers were made contiguous to their
// version now. Databases migrated before that carry the old versions; Migrate rewrites them
// once, in ascending order so that no two rows ever share a version.
var renumbered = []struct {
	oldName string
	version int
}{
	{"0003_pipeline.sql", 2},
	{"0005_webhooks.sql", 3},
	{"0006_heartbeats.sql", 4},
	{"0007_status_pages.sql", 5},
	{"0008_daily_rollups.sql", 6},
	{"0009_people.sql", 7},
}

// Migrate applies every embedded migration that has not been applied yet, in order, each in its
// own transaction, under an advisory lock so that replicas starting together do not race.
func (s *Store) Migrate(ctx context.Context) error {
	return Migrate(ctx, s.pool)
}

// Migrate applies the embedded migrations through any pgx connection pool. Its SQL is written
// here rather than in queries/: schema_migrations is the migrator's own table, made before any
// migration runs, so it is not part of the schema sqlc compiles against, and the migrations
// themselves are SQL text to run as they are.
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
	// Waiting for another replica's migrations, and a migration rewriting a big table, may take
	// longer than a statement may.
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET statement_timeout`) //nolint:errcheck // back to the pool's setting
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLockKey) //nolint:errcheck // the lock dies with the session anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, r := range renumbered {
		if _, err := conn.Exec(ctx, `UPDATE schema_migrations SET version = $1, name = $2 WHERE name = $3`,
			r.version, migs[r.version-1].name, r.oldName); err != nil {
			return fmt.Errorf("migrate: renumber %s: %w", r.oldName, err)
		}
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: read applied versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("migrate: read applied versions: %w", err)
	}
	applied := map[int]bool{}
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

// loadMigrations reads the embedded migrations in version order and refuses a set whose
// numbers are not exactly 1, 2, 3, ….
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
	for i, m := range migs {
		if m.version != i+1 {
			return nil, errors.New("migrations must be numbered 1, 2, 3, … without gaps: " + m.name + " is number " + strconv.Itoa(i+1))
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
