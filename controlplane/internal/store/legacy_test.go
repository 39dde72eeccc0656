package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// legacyVersions are the versions and names migrations 1 to 7 had before their numbers were
// made contiguous (see store.renumbered).
var legacyVersions = []struct {
	version int
	name    string
}{
	{1, "0001_init.sql"}, {3, "0003_pipeline.sql"}, {5, "0005_webhooks.sql"}, {6, "0006_heartbeats.sql"},
	{7, "0007_status_pages.sql"}, {8, "0008_daily_rollups.sql"}, {9, "0009_people.sql"},
}

// legacyDatabase is a new database as a release from before the contiguous renumbering left
// it: migrations 1 to 7 applied and recorded under their legacy versions. It is dropped when the
// test ends.
func legacyDatabase(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL; skipped under -short (make test-short)")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.ServerURL())
	if err != nil {
		t.Fatalf("PostgreSQL is required: %v", err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "vantage_test_legacy_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, storetest.ServerURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(storetest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, `CREATE TABLE schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for i, v := range legacyVersions {
		sql, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("apply %s: %v", files[i], err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, v.version, v.name); err != nil {
			t.Fatal(err)
		}
	}
	return pool, u.String()
}

// legacyExec runs one statement on a legacy database.
func legacyExec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", sql, err))
	}
}
