package store_test

import (
	"bytes"
	"context"
	"flag"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite schema.sql from the migrated schema")

// TestSchemaMatchesMigrations migrates a fresh database and compares its schema, as pg_dump
// prints it, with the committed schema.sql. A migration that was edited after it landed, or a
// new migration whose effect nobody looked at, fails here; `go test ./controlplane/internal/store
// -run TestSchemaMatchesMigrations -update` rewrites schema.sql for review in the diff.
func TestSchemaMatchesMigrations(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	got := dumpSchema(t, dbURL)
	if *update {
		if err := os.WriteFile("schema.sql", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatalf("read schema.sql (create it with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the migrated schema differs from schema.sql: a landed migration was edited, or a new one's effect is not in schema.sql (rerun with -update and review the diff)\n%s", lineDiff(want, got))
	}
}

// TestMigrateIsIdempotent applies the migrations twice to the same database.
func TestMigrateIsIdempotent(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), storetest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := store.Migrate(context.Background(), pool); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
}

// TestMigrateRenumbersLegacyVersions: a database migrated when the migrations still had gaps in
// their numbers (1, 3, 5, …) is recognized as fully migrated, not migrated again.
func TestMigrateRenumbersLegacyVersions(t *testing.T) {
	ctx := context.Background()
	pool, _ := legacyDatabase(t)
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate a legacy-numbered database: %v", err)
	}
	var n, maxV int
	if err := pool.QueryRow(ctx, `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &maxV); err != nil {
		t.Fatal(err)
	}
	if n != maxV {
		t.Errorf("schema_migrations has %d rows up to version %d; want contiguous versions", n, maxV)
	}
}

var dumpNoise = regexp.MustCompile(`(?m)^(--.*|SET .*|SELECT pg_catalog\.set_config.*|\\(un)?restrict .*)\n`)

// dumpSchema is pg_dump's schema-only output without comments, settings and blank-line runs, so
// that it depends only on the schema.
func dumpSchema(t *testing.T, dbURL string) []byte {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("sslmode")
	u.RawQuery = q.Encode()
	out, err := exec.Command("pg_dump", "--schema-only", "--no-owner", "--no-privileges",
		"--exclude-table=schema_migrations", u.String()).Output()
	if err != nil {
		t.Fatalf("pg_dump (from PostgreSQL's client package) is required: %v", err)
	}
	out = dumpNoise.ReplaceAll(out, nil)
	out = regexp.MustCompile(`\n{3,}`).ReplaceAll(out, []byte("\n\n"))
	return bytes.TrimSpace(out)
}

// lineDiff lists the lines only one side has, enough to see what changed.
func lineDiff(want, got []byte) string {
	in := func(b []byte) map[string]bool {
		m := map[string]bool{}
		for _, l := range bytes.Split(b, []byte("\n")) {
			m[string(l)] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var buf bytes.Buffer
	for _, l := range bytes.Split(want, []byte("\n")) {
		if !g[string(l)] {
			buf.WriteString("- " + string(l) + "\n")
		}
	}
	for _, l := range bytes.Split(got, []byte("\n")) {
		if !w[string(l)] {
			buf.WriteString("+ " + string(l) + "\n")
		}
	}
	return buf.String()
}
