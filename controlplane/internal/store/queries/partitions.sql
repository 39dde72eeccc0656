-- Partition maintenance of check_results and ingest_dedupe (pipeline_partitions.go). The DDL
-- itself names tables built at run time and stays in Go.

-- name: ListPartitions :many
SELECT c.relname::text AS name
FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = to_regclass(@parent::text)
ORDER BY 1;

-- name: RelationExists :one
SELECT (to_regclass(@name::text) IS NOT NULL)::boolean AS exists;

-- name: LockPartitionMaintenance :exec
-- Bounds how long DDL waits for locks (maintenance fails and retries rather than stall ingest)
-- and serializes maintenance of one table across replicas, both until the transaction ends.
SELECT set_config('lock_timeout', @lock_timeout::text, true),
    pg_advisory_xact_lock(hashtext('vantage.partitions.' || @parent::text));

-- name: PruneDefaultResults :execrows
DELETE FROM check_results_default WHERE checked_at < @before;

-- name: PruneDefaultResultKeys :execrows
DELETE FROM ingest_dedupe_default WHERE scheduled_at < @before;
