package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestPartitionsConcurrentAcrossBoundary creates the partitions around an hour and a day
// boundary from two replicas at once while ingest writes rows of the hours being created (they
// land in the default partitions until their partition exists). No creation may fail, every
// partition exists once and every row ends up in its own partition.
func TestPartitionsConcurrentAcrossBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewDatabase(t)
	var replicas []*store.Store
	for range 2 {
		st, err := store.Open(ctx, url, storetest.NewKeyring(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		replicas = append(replicas, st)
	}
	boundary := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC) // a new hour and a new day

	var stop atomic.Bool
	var inserted atomic.Int64
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; !stop.Load(); i++ {
				// rows 5 s apart from 90 min before to 90 min after the boundary
				at := boundary.Add(time.Duration((i*7+w*3)%2160-1080) * 5 * time.Second)
				if _, err := replicas[w].Pool().Exec(ctx, `INSERT INTO ingest_dedupe (job_id, region, attempt_number, is_final, scheduled_at)
					VALUES ($1, 'r', 1, true, $2)`, uuid.New(), at); err != nil {
					t.Errorf("insert at %s: %v", at, err)
					return
				}
				inserted.Add(1)
			}
		}()
	}

	var creators sync.WaitGroup
	for c := range 6 {
		creators.Add(1)
		go func() {
			defer creators.Done()
			st := replicas[c%2]
			// each creator starts at another hour, so that creations interleave with the writes
			for round := range 3 {
				lo := boundary.Add(time.Duration((c+round)%3-2) * time.Hour)
				if _, err := st.EnsureDedupePartitions(ctx, lo, boundary.Add(2*time.Hour)); err != nil {
					t.Errorf("creator %d: %v", c, err)
				}
				if _, err := st.EnsureResultPartitions(ctx, boundary.AddDate(0, 0, -1), boundary.AddDate(0, 0, 1)); err != nil {
					t.Errorf("creator %d: %v", c, err)
				}
			}
		}()
	}
	creators.Wait()
	stop.Store(true)
	writers.Wait()

	parts, err := replicas[0].Partitions(ctx, "ingest_dedupe")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ingest_dedupe_default", "ingest_dedupe_p2026031322", "ingest_dedupe_p2026031323",
		"ingest_dedupe_p2026031400", "ingest_dedupe_p2026031401", "ingest_dedupe_p2026031402"}
	if len(parts) != len(want) {
		t.Fatalf("partitions %v, want %v", parts, want)
	}
	for i := range want {
		if parts[i] != want[i] {
			t.Fatalf("partitions %v, want %v", parts, want)
		}
	}
	var total, misplaced int64
	if err := replicas[0].Pool().QueryRow(ctx, `SELECT count(*),
			count(*) FILTER (WHERE tableoid::regclass::text = 'ingest_dedupe_default' AND scheduled_at >= $1 AND scheduled_at < $2)
		FROM ingest_dedupe`, boundary.Add(-2*time.Hour), boundary.Add(3*time.Hour)).Scan(&total, &misplaced); err != nil {
		t.Fatal(err)
	}
	if total != inserted.Load() || misplaced != 0 {
		t.Fatalf("%d rows stored of %d inserted, %d left in the default partition", total, inserted.Load(), misplaced)
	}
	if inserted.Load() == 0 {
		t.Fatal("no rows written during the creations")
	}
}
