package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Partition maintenance of the pipeline's range-partitioned tables. check_results has one
// partition per UTC day, ingest_dedupe one per UTC hour; both have a DEFAULT partition that
// catches rows outside the partitions created ahead (late or clock-skewed rows). Partition
// names carry their lower bound: check_results_p20260131, ingest_dedupe_p2026013115.
//
// DDL runs under lock_timeout so that maintenance never stalls ingest for long (it fails and
// the next round retries), and under a per-table advisory lock so that replicas do not race.

type partitionSet struct {
	parent string
	column string
	step   time.Duration
	layout string
	// pruneDefault deletes the default partition's rows older than before.
	pruneDefault func(ctx context.Context, q *dbsqlc.Queries, before time.Time) (int64, error)
}

var (
	resultPartitions = partitionSet{parent: "check_results", column: "checked_at", step: 24 * time.Hour, layout: "20060102",
		pruneDefault: func(ctx context.Context, q *dbsqlc.Queries, before time.Time) (int64, error) {
			return q.PruneDefaultResults(ctx, before)
		}}
	dedupePartitions = partitionSet{parent: "ingest_dedupe", column: "scheduled_at", step: time.Hour, layout: "2006010215",
		pruneDefault: func(ctx context.Context, q *dbsqlc.Queries, before time.Time) (int64, error) {
			return q.PruneDefaultResultKeys(ctx, before)
		}}
)

const partitionLockTimeout = "5s"

// EnsureResultPartitions creates the daily check_results partitions of every UTC day from
// from's day to to's day (inclusive) that does not exist yet and returns the names it created.
// Rows already in the default partition for such a day are moved into it.
func (s *Store) EnsureResultPartitions(ctx context.Context, from, to time.Time) ([]string, error) {
	return s.ensurePartitions(ctx, resultPartitions, from, to)
}

// DropResultPartitions drops the check_results partitions that end at or before before, and
// deletes rows older than before from the default partition. It returns the dropped names and
// the number of deleted default rows.
func (s *Store) DropResultPartitions(ctx context.Context, before time.Time) ([]string, int64, error) {
	return s.dropPartitions(ctx, resultPartitions, before)
}

// EnsureDedupePartitions is EnsureResultPartitions for the hourly ingest_dedupe partitions.
func (s *Store) EnsureDedupePartitions(ctx context.Context, from, to time.Time) ([]string, error) {
	return s.ensurePartitions(ctx, dedupePartitions, from, to)
}

// DropDedupePartitions is DropResultPartitions for ingest_dedupe.
func (s *Store) DropDedupePartitions(ctx context.Context, before time.Time) ([]string, int64, error) {
	return s.dropPartitions(ctx, dedupePartitions, before)
}

// Partitions lists the partitions of a pipeline table ("check_results" or "ingest_dedupe"),
// default partition included, sorted by name.
func (s *Store) Partitions(ctx context.Context, table string) ([]string, error) {
	names, err := s.q.ListPartitions(ctx, table)
	return names, translate(err)
}

func (s *Store) ensurePartitions(ctx context.Context, ps partitionSet, from, to time.Time) ([]string, error) {
	var created []string
	for lo := from.UTC().Truncate(ps.step); !lo.After(to); lo = lo.Add(ps.step) {
		name, ok, err := s.ensurePartition(ctx, ps, lo)
		if err != nil {
			return created, err
		}
		if ok {
			created = append(created, name)
		}
	}
	return created, nil
}

func (ps partitionSet) name(lo time.Time) string {
	return ps.parent + "_p" + lo.UTC().Format(ps.layout)
}

func (ps partitionSet) bounds(lo time.Time) string {
	return fmt.Sprintf("FROM ('%s') TO ('%s')", lo.UTC().Format(time.RFC3339), lo.Add(ps.step).UTC().Format(time.RFC3339))
}

func (s *Store) ensurePartition(ctx context.Context, ps partitionSet, lo time.Time) (string, bool, error) {
	name := ps.name(lo)
	hi := lo.Add(ps.step)
	parent, def, table := pgx.Identifier{ps.parent}.Sanitize(), pgx.Identifier{ps.parent + "_default"}.Sanitize(), pgx.Identifier{name}.Sanitize()
	created := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		created = false // inTx may run this again after a conflict
		q := s.q.WithTx(tx)
		if err := lockPartitionSet(ctx, q, ps); err != nil {
			return err
		}
		if exists, err := q.RelationExists(ctx, name); err != nil || exists {
			return err
		}
		// Inserts into the parent wait while the partition is made: an insert routed to the
		// default partition just before the ATTACH finds, once it gets its lock, a default
		// partition whose constraint now excludes its row and fails with a check violation
		// (23514); the ATTACH itself fails the same way when such a row got in between the
		// move and the ATTACH. Both happened at hour boundaries, where ingest writes the first
		// rows of an hour whose partition is being made. SHARE ROW EXCLUSIVE conflicts with
		// the inserts' ROW EXCLUSIVE but not with reads, and an insert that waited routes its
		// row with the new partition. The wait is the few milliseconds of an empty CREATE, the
		// move of the default partition's rows of the range (none when partitions are made
		// ahead, as the Maintainer does) and the ATTACH.
		//
		// The table is created detached and then attached so that reads go on meanwhile
		// (CREATE TABLE ... PARTITION OF would lock the parent ACCESS EXCLUSIVE).
		// These statements name tables made up at run time, which no prepared query can.
		for _, stmt := range []string{
			`LOCK TABLE ` + parent + ` IN SHARE ROW EXCLUSIVE MODE`,
			`CREATE TABLE IF NOT EXISTS ` + table + ` (LIKE ` + parent + ` INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
			`WITH moved AS (DELETE FROM ` + def + ` WHERE ` + ps.column + ` >= '` + lo.UTC().Format(time.RFC3339) +
				`' AND ` + ps.column + ` < '` + hi.UTC().Format(time.RFC3339) + `' RETURNING *) INSERT INTO ` + table + ` SELECT * FROM moved`,
			`ALTER TABLE ` + parent + ` ATTACH PARTITION ` + table + ` FOR VALUES ` + ps.bounds(lo),
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return name, false, fmt.Errorf("create partition %s: %w", name, err)
	}
	return name, created, nil
}

func (s *Store) dropPartitions(ctx context.Context, ps partitionSet, before time.Time) ([]string, int64, error) {
	names, err := s.Partitions(ctx, ps.parent)
	if err != nil {
		return nil, 0, fmt.Errorf("list partitions of %s: %w", ps.parent, err)
	}
	var dropped []string
	for _, name := range names {
		suffix, ok := strings.CutPrefix(name, ps.parent+"_p")
		if !ok {
			continue
		}
		lo, err := time.Parse(ps.layout, suffix)
		if err != nil || lo.Add(ps.step).After(before) {
			continue
		}
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			if err := lockPartitionSet(ctx, s.q.WithTx(tx), ps); err != nil {
				return err
			}
			// DDL on a table named at run time: no prepared query can name it.
			table := pgx.Identifier{name}.Sanitize()
			if _, err := tx.Exec(ctx, `ALTER TABLE `+pgx.Identifier{ps.parent}.Sanitize()+` DETACH PARTITION `+table); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DROP TABLE `+table)
			return err
		})
		if err != nil {
			return dropped, 0, fmt.Errorf("drop partition %s: %w", name, err)
		}
		dropped = append(dropped, name)
	}
	pruned, err := ps.pruneDefault(ctx, s.q, before)
	if err != nil {
		return dropped, 0, fmt.Errorf("prune default partition of %s: %w", ps.parent, translate(err))
	}
	return dropped, pruned, nil
}

// lockPartitionSet bounds how long DDL may wait for locks and serializes maintenance of one
// table across replicas.
func lockPartitionSet(ctx context.Context, q *dbsqlc.Queries, ps partitionSet) error {
	return q.LockPartitionMaintenance(ctx, dbsqlc.LockPartitionMaintenanceParams{LockTimeout: partitionLockTimeout, Parent: ps.parent})
}
