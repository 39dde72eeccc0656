// Package storetest gives each test its own PostgreSQL database, migrated, and drops it when the
// test ends. Databases are cloned from a template migrated once per migration set, so a fresh
// database costs one CREATE DATABASE, not a migration run.
//
// The server is VANTAGE_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres.
// A missing server fails the test loudly; it never skips.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ServerURL is the PostgreSQL server tests use.
func ServerURL() string {
	if u := os.Getenv("VANTAGE_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// NewDatabase creates an empty, migrated database for this test and returns its URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL; skipped under -short (make test-short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(ctx) })
	if templateErr != nil {
		t.Fatalf("storetest: PostgreSQL at %s is required: %v", ServerURL(), templateErr)
	}
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("storetest: PostgreSQL at %s is required: %v", ServerURL(), err)
	}
	defer admin.Close(ctx)
	name := "vantage_test_" + randomHex(6)
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, templateName)); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			t.Errorf("storetest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
			t.Errorf("storetest: drop %s: %v", name, err)
		}
	})
	return withDatabase(ServerURL(), name)
}

// New returns a Store on a fresh database for this test, closed when the test ends, with a
// random sealing key.
func New(t testing.TB, opts ...store.Option) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), NewDatabase(t), NewKeyring(t), opts...)
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// NewKeyring returns a keyring with a random key.
func NewKeyring(t testing.TB) *secrets.Keyring {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	k, err := secrets.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// ensureTemplate creates (once per migration set, across concurrent test processes) a migrated
// template database.
func ensureTemplate(ctx context.Context) (string, error) {
	sum := sha256.Sum256([]byte(store.MigrationsDigest()))
	name := "vantage_tmpl_" + hex.EncodeToString(sum[:6])
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return "", err
	}
	defer admin.Close(ctx)
	// Serialize template creation across test binaries running in parallel.
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock(7362836)`); err != nil {
		return "", err
	}
	defer admin.Exec(ctx, `SELECT pg_advisory_unlock(7362836)`) //nolint:errcheck
	rows, err := admin.Query(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, name)
	if err != nil {
		return "", err
	}
	exists, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[bool])
	if err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s`, name)); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, withDatabase(ServerURL(), name))
	if err != nil {
		return "", err
	}
	err = store.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`, name)); err != nil {
		return "", err
	}
	return name, nil
}

func withDatabase(serverURL, db string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return serverURL
	}
	u.Path = "/" + db
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
