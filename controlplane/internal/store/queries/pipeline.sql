-- The result pipeline (docs/architecture.md, "The flow", steps 7 and 8): de-duplication, the check locks, COPY of the
-- results, and what the evaluator reads and writes inside the same transaction. Lists travel as
-- parallel arrays (ROWS FROM unnest …), one statement per batch.

-- name: InsertResultKeys :many
-- Keys are inserted in key order, so two batches sharing keys cannot deadlock each other; only
-- the keys inserted now come back.
INSERT INTO ingest_dedupe (job_id, region, attempt_number, is_final, scheduled_at)
SELECT j, r, a, f, s
FROM ROWS FROM (unnest(@job_ids::uuid[]), unnest(@regions::text[]), unnest(@attempt_numbers::int4[]),
    unnest(@finals::bool[]), unnest(@scheduled_ats::timestamptz[])) AS u(j, r, a, f, s)
ORDER BY j, r, a, f
ON CONFLICT DO NOTHING
RETURNING job_id, region, attempt_number, is_final;

-- name: LockChecksForResults :many
-- The evaluator's lock of a check is its check_progress row (0017), in id order; the check's
-- own row is read, not locked, so the API's changes to it never wait for ingest. Looked up by
-- id (a check id is unique), which plans as index lookups whatever the arrays' length; the
-- caller keeps only the checks of the (organization, check) pairs it asked for.
SELECT c.id, c.org_id, c.kind, c.name, c.url, c.state, c.state_changed_at, c.paused, c.muted,
    c.test_regions, c.timeout_ms, c.alert_priority, c.confirmation_period_seconds, c.recovery_period_seconds,
    c.reminder_alert_interval_minutes, c.alerts, c.failing_since, c.passing_since, c.last_alert_at,
    c.down_alerted, c.current_incident_id, p.last_run_at, c.region_quorum,
    c.degraded_response_time_ms
FROM checks c
JOIN check_progress p ON p.check_id = c.id
WHERE c.id = ANY(@check_ids::uuid[]) AND c.org_id = ANY(@org_ids::uuid[])
ORDER BY c.id
FOR NO KEY UPDATE OF p;

-- name: LockChecksWithDueRuns :many
-- The same columns as LockChecksForResults, for up to @max_checks checks with a run whose
-- deadline is at or before @now; checks locked elsewhere are skipped.
SELECT c.id, c.org_id, c.kind, c.name, c.url, c.state, c.state_changed_at, c.paused, c.muted,
    c.test_regions, c.timeout_ms, c.alert_priority, c.confirmation_period_seconds, c.recovery_period_seconds,
    c.reminder_alert_interval_minutes, c.alerts, c.failing_since, c.passing_since, c.last_alert_at,
    c.down_alerted, c.current_incident_id, p.last_run_at, c.region_quorum,
    c.degraded_response_time_ms
FROM checks c
JOIN check_progress p ON p.check_id = c.id
WHERE (c.org_id, c.id) IN (
    SELECT DISTINCT r.org_id, r.check_id FROM check_runs r WHERE r.deadline <= @now
        -- a held run is due once its failing region's next canary round has come
        OR (r.held_since IS NOT NULL AND EXISTS (SELECT 1 FROM agent_canaries a
            WHERE a.received_at > r.held_since AND r.failed_regions[1] = ANY(a.regions)))
    ORDER BY r.check_id LIMIT @max_checks::bigint)
ORDER BY c.id
FOR NO KEY UPDATE OF p SKIP LOCKED;

-- name: CopyResults :copyfrom
INSERT INTO check_results (id, org_id, check_id, job_id, region, attempt_number, is_final_attempt,
    checked_at, dispatched_at, passing, response_time_ms, response_code, response_body,
    body_availability, result_summary, failure_source, failure_type, dns_status, resolver,
    parsed_response, tcp_status, dns_time_ms, connect_time_ms, data_time_ms, details, screenshot,
    artifact_index, artifacts)
VALUES (@id, @org_id, @check_id, @job_id, @region, @attempt_number, @is_final_attempt,
    @checked_at, @dispatched_at, @passing, @response_time_ms, @response_code, @response_body,
    @body_availability, @result_summary, @failure_source, @failure_type, @dns_status, @resolver,
    @parsed_response, @tcp_status, @dns_time_ms, @connect_time_ms, @data_time_ms, @details, @screenshot,
    @artifact_index, @artifacts);

-- name: PendingRuns :many
SELECT r.* FROM check_runs r
JOIN ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[])) AS k(org_id, id)
    ON r.org_id = k.org_id AND r.check_id = k.id;

-- name: SaveRuns :exec
-- Region lists travel as comma-joined text: unnest cannot take an array of arrays, and region
-- names ("cloud:<name>") never contain a comma.
-- held_since travels as the epoch's milliseconds, 0 for NULL (an array cannot carry NULLs as
-- parameters).
INSERT INTO check_runs (org_id, check_id, job_id, scheduled_at, deadline,
    expected_regions, passed_regions, failed_regions, first_result_at, held_since, slow_regions)
SELECT o, c, j, s, d, string_to_array(e, ','), string_to_array(pa, ','), string_to_array(f, ','), fr,
    CASE WHEN h = 0 THEN NULL ELSE to_timestamp(h / 1000.0) END, string_to_array(sl, ',')
FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@job_ids::uuid[]),
    unnest(@scheduled_ats::timestamptz[]), unnest(@deadlines::timestamptz[]), unnest(@expected_regions::text[]),
    unnest(@passed_regions::text[]), unnest(@failed_regions::text[]), unnest(@first_result_ats::timestamptz[]),
    unnest(@held_since_ms::bigint[]), unnest(@slow_regions::text[]))
    AS u(o, c, j, s, d, e, pa, f, fr, h, sl)
ON CONFLICT (check_id, job_id) DO UPDATE
    SET passed_regions = EXCLUDED.passed_regions, failed_regions = EXCLUDED.failed_regions,
        slow_regions = EXCLUDED.slow_regions, deadline = EXCLUDED.deadline, held_since = EXCLUDED.held_since;

-- name: DeleteRuns :exec
DELETE FROM check_runs r
USING ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@job_ids::uuid[])) AS k(o, c, j)
WHERE r.org_id = k.o AND r.check_id = k.c AND r.job_id = k.j;

-- name: LockCheckRows :many
-- The rows of checks whose state changes, in id order (UpdateCheckStates).
SELECT id FROM checks WHERE id = ANY(@ids::uuid[]) ORDER BY id FOR NO KEY UPDATE;

-- name: UpdateCheckStates :exec
-- The states travel as a JSON array because several of their columns are NULL-able, which
-- arrays of timestamps and uuids passed as parameters cannot carry. Configuration and
-- updated_at are not touched: they belong to the API.
UPDATE checks c SET state = u.state, state_changed_at = u.state_changed_at,
    failing_since = u.failing_since, passing_since = u.passing_since, last_alert_at = u.last_alert_at,
    down_alerted = u.down_alerted, current_incident_id = u.current_incident_id
FROM jsonb_to_recordset(@states::jsonb) AS u(org_id uuid, check_id uuid, state text,
    state_changed_at timestamptz, failing_since timestamptz, passing_since timestamptz,
    last_alert_at timestamptz, down_alerted boolean, current_incident_id uuid)
WHERE c.org_id = u.org_id AND c.id = u.check_id;

-- name: SaveCheckProgress :exec
-- The scheduled time of each check's last judged run; the rows are the transaction's locked ones.
UPDATE check_progress p SET last_run_at = u.t
FROM ROWS FROM (unnest(@check_ids::uuid[]), unnest(@last_run_ats::timestamptz[])) AS u(c, t)
WHERE p.check_id = u.c AND p.last_run_at IS DISTINCT FROM u.t;

-- name: OpenIncident :one
-- At most one incident of a check is open (check_incidents_one_open): when one is, it is
-- returned instead.
WITH ins AS (
    INSERT INTO check_incidents (id, org_id, check_id, started_at)
    VALUES (@id, @org_id, @check_id, @started_at)
    ON CONFLICT (check_id) WHERE ended_at IS NULL DO NOTHING
    RETURNING id, started_at)
SELECT ins.id, ins.started_at FROM ins
UNION ALL
SELECT i.id, i.started_at FROM check_incidents i
WHERE i.org_id = @org_id AND i.check_id = @check_id AND i.ended_at IS NULL
LIMIT 1;

-- name: CloseIncident :one
-- An incident never ends before it started.
UPDATE check_incidents SET ended_at = GREATEST(@ended_at::timestamptz, started_at)
WHERE org_id = @org_id AND check_id = @check_id AND ended_at IS NULL
RETURNING id, started_at, ended_at;

-- name: CurrentIncident :one
SELECT id, started_at FROM check_incidents
WHERE org_id = @org_id AND check_id = @check_id AND ended_at IS NULL;

-- name: CountVerdicts :exec
-- Grouped first: ON CONFLICT may not touch the same row twice in one statement. A verdict of a
-- month already folded (check_stats_folded: it came late) adds to its monthly row too; the
-- verdicts of open months, all but such stragglers, write their daily rows only.
WITH v AS (
    SELECT o, c, d, count(*) AS n, count(*) FILTER (WHERE f) AS nf
    FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@days::date[]),
        unnest(@failed::bool[])) AS u(o, c, d, f)
    GROUP BY o, c, d),
daily AS (
    INSERT INTO check_daily_stats AS s (org_id, check_id, day, runs, failed_runs)
    SELECT o, c, d, n, nf FROM v
    ON CONFLICT (check_id, day) DO UPDATE
        SET runs = s.runs + EXCLUDED.runs, failed_runs = s.failed_runs + EXCLUDED.failed_runs)
INSERT INTO check_monthly_stats AS m (org_id, check_id, month, runs, failed_runs)
SELECT v.o, v.c, f.month, sum(v.n), sum(v.nf)
FROM v JOIN check_stats_folded f ON f.month = date_trunc('month', v.d::timestamp)::date
GROUP BY v.o, v.c, f.month
ON CONFLICT (check_id, month) DO UPDATE
    SET runs = m.runs + EXCLUDED.runs, failed_runs = m.failed_runs + EXCLUDED.failed_runs;
