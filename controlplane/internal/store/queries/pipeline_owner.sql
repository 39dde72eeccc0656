-- The owner's judging (evaluator.Owner): the replica that owns a shard (scheduler lease) judges
-- its checks from memory. It reads the checks without locking them and fences its progress
-- write instead; on taking a shard it recovers the pending runs and the final attempts its
-- previous owner may have held in memory only.

-- name: ReadChecksForJudging :many
-- The columns of LockChecksForResults, read without a lock (SaveCheckProgressFenced fences).
SELECT c.id, c.org_id, c.kind, c.name, c.url, c.state, c.state_changed_at, c.paused, c.muted,
    c.test_regions, c.timeout_ms, c.alert_priority, c.confirmation_period_seconds, c.recovery_period_seconds,
    c.reminder_alert_interval_minutes, c.alerts, c.failing_since, c.passing_since, c.last_alert_at,
    c.down_alerted, c.current_incident_id, p.last_run_at, c.region_quorum,
    c.degraded_response_time_ms
FROM checks c
JOIN check_progress p ON p.check_id = c.id
WHERE c.id = ANY(@check_ids::uuid[]) AND c.org_id = ANY(@org_ids::uuid[])
ORDER BY c.id;

-- name: SaveCheckProgressFenced :many
-- Moves each check's last judged run only where it still is what the transaction read
-- (read_null: it was NULL); the rows updated come back, so that the caller sees which check
-- another judge moved first. Under READ COMMITTED a concurrent judge's update is waited for
-- and the condition re-checked against its committed row.
UPDATE check_progress p SET last_run_at = u.t
FROM ROWS FROM (unnest(@check_ids::uuid[]), unnest(@last_run_ats::timestamptz[]),
    unnest(@read_last_run_ats::timestamptz[]), unnest(@read_null::bool[])) AS u(c, t, r, n)
WHERE p.check_id = u.c AND CASE WHEN u.n THEN p.last_run_at IS NULL ELSE p.last_run_at = u.r END
RETURNING p.check_id;

-- name: ShardRuns :many
-- The pending runs of the checks of some shards (shard.Of, computed here as in Go); like the
-- scheduler's queries it reads across organizations, each row carrying its org_id.
SELECT r.* FROM check_runs r
WHERE get_byte(sha256(uuid_send(r.check_id)), 0) = ANY(@shards::int[]);

-- name: ShardFinals :many
-- The final attempts checked since @since of the active checks of some shards whose run comes
-- after the check's last judged run. check_results has no scheduled_at: the de-duplication
-- key's row (ingest_dedupe, one per stored result) carries it.
SELECT r.id, r.org_id, r.check_id, r.job_id, r.region, r.attempt_number, d.scheduled_at,
    r.checked_at, r.passing, r.response_time_ms, r.failure_source
FROM checks c
JOIN check_progress p ON p.check_id = c.id
JOIN check_results r ON r.check_id = c.id AND r.org_id = c.org_id
JOIN ingest_dedupe d ON d.job_id = r.job_id AND d.region = r.region
    AND d.attempt_number = r.attempt_number AND d.is_final
WHERE get_byte(sha256(uuid_send(c.id)), 0) = ANY(@shards::int[]) AND NOT c.paused
    AND r.is_final_attempt AND r.checked_at >= @since::timestamptz
    AND d.scheduled_at > coalesce(p.last_run_at, '-infinity'::timestamptz)
ORDER BY r.check_id, r.checked_at, r.id;

-- name: ExistingChecks :many
-- The checks of a batch stored without a judge (the shard owner judges): only whether each
-- exists in its organization, on the primary key, without the judge's columns or the join.
SELECT c.id, c.org_id FROM checks c
WHERE c.id = ANY(@check_ids::uuid[]) AND c.org_id = ANY(@org_ids::uuid[]);
