package ingest

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

func TestMaintainerPartitions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	checkID := h.createCheck(checkSpec{})

	// A result stored before any partition exists lands in the default partition...
	a := h.connect("a1", "cloud:us-east-1")
	a.report(h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now())) // 2026-03-01 12:00
	partitionOf := func() string {
		t.Helper()
		var p string
		if err := h.st.Pool().QueryRow(ctx, `SELECT tableoid::regclass::text FROM check_results WHERE check_id = $1`, checkID).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := partitionOf(); p != "check_results_default" {
		t.Fatalf("result in %s, want check_results_default", p)
	}

	m, err := NewMaintainer(MaintainerConfig{RetentionDays: 30}, MaintainerDeps{Store: h.st, Logger: log, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	parts, err := h.st.Partitions(ctx, "check_results")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"check_results_default", "check_results_p20260228", "check_results_p20260301",
		"check_results_p20260302", "check_results_p20260303"}
	if !slices.Equal(parts, want) {
		t.Fatalf("check_results partitions %v, want %v", parts, want)
	}
	// ...and moves into its day's partition when that is created.
	if p := partitionOf(); p != "check_results_p20260301" {
		t.Fatalf("result in %s after maintenance, want check_results_p20260301", p)
	}
	keys, err := h.st.Partitions(ctx, "ingest_dedupe")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(keys, "ingest_dedupe_p2026030111") || !slices.Contains(keys, "ingest_dedupe_p2026030115") {
		t.Fatalf("ingest_dedupe partitions %v, want 11:00 to 15:00", keys)
	}
	for _, p := range []string{"check_results_p20260302", "ingest_dedupe_p2026030115"} {
		if n := h.count(`SELECT count(*) FROM pg_indexes WHERE tablename = $1`, p); n != 1 {
			t.Fatalf("partition %s has %d indexes, want its primary key", p, n)
		}
	}
	if err := m.Maintain(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	if n := h.count(`SELECT count(*) FROM check_rollups WHERE check_id = $1`, checkID); n != 1 {
		t.Fatalf("%d rollups of the result's hour, want 1 kept within retention", n)
	}

	// 40 days later the March partitions are past retention and dropped.
	h.clock.Set(h.clock.Now().AddDate(0, 0, 40))
	if err := m.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	parts, err = h.st.Partitions(ctx, "check_results")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"check_results_default", "check_results_p20260409", "check_results_p20260410",
		"check_results_p20260411", "check_results_p20260412"}
	if !slices.Equal(parts, want) {
		t.Fatalf("check_results partitions after 40 days %v, want %v", parts, want)
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != 0 {
		t.Fatalf("%d results left past retention", n)
	}
	if n := h.count(`SELECT count(*) FROM check_rollups`); n != 0 {
		t.Fatalf("%d rollups left past their retention", n)
	}
	keys, err = h.st.Partitions(ctx, "ingest_dedupe")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keys, "ingest_dedupe_p2026030111") {
		t.Fatalf("old ingest_dedupe partitions kept: %v", keys)
	}
}

// TestMaintainerFailureNotFatal: a maintenance round that fails (here: the database is gone)
// is counted and retried, and Run keeps going until it is stopped.
func TestMaintainerFailureNotFatal(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	st.Close()
	reg := prometheus.NewRegistry()
	m, err := NewMaintainer(MaintainerConfig{RetryInterval: 10 * time.Millisecond},
		MaintainerDeps{Store: st, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(m.errs) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("failed rounds not retried")
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned %v after a failed round", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
