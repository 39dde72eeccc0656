-- Runs that did not run (skipped_runs, migration 0013).

-- name: RecordSkippedRuns :execrows
-- Skips of deleted checks are ignored, and a run's region is recorded once.
INSERT INTO skipped_runs (org_id, check_id, region, scheduled_at, reason, recorded_at)
SELECT u.org_id, u.check_id, u.region, u.scheduled_at, u.reason, @recorded_at
FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@regions::text[]),
                unnest(@scheduled_ats::timestamptz[]), unnest(@reasons::text[]))
    AS u(org_id, check_id, region, scheduled_at, reason)
JOIN checks c ON c.org_id = u.org_id AND c.id = u.check_id
ON CONFLICT DO NOTHING;

-- name: CountSkippedRuns :many
SELECT check_id, count(*) AS skipped
FROM skipped_runs
WHERE org_id = @org_id AND check_id = ANY(@check_ids::uuid[]) AND scheduled_at > @since
GROUP BY check_id;

-- name: PruneSkippedRuns :execrows
DELETE FROM skipped_runs WHERE scheduled_at < @before;
