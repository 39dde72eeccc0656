-- The regional view (check_regions), regional degradation (check_degradations) and slowness
-- (check_slowness).

-- name: SaveRegionResults :exec
-- One row per (check, region) of the batch, its latest final result; an older result than the
-- stored one changes nothing.
INSERT INTO check_regions AS cr (org_id, check_id, region, passing, checked_at, result_id, response_time_ms, result_summary)
SELECT o, c, r, p, t, i, nullif(ms, -1), nullif(s, '')
FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@regions::text[]),
    unnest(@passing::bool[]), unnest(@checked_ats::timestamptz[]), unnest(@result_ids::uuid[]),
    unnest(@response_times::int4[]), unnest(@summaries::text[])) AS u(o, c, r, p, t, i, ms, s)
ON CONFLICT (check_id, region) DO UPDATE SET passing = excluded.passing, checked_at = excluded.checked_at,
    result_id = excluded.result_id, response_time_ms = excluded.response_time_ms, result_summary = excluded.result_summary
WHERE excluded.checked_at >= cr.checked_at;

-- name: CheckRegions :many
-- With the leaf certificate the region's last result was served (by the result's primary key),
-- so that regions seeing different certificates show it.
SELECT g.region, g.passing, g.checked_at, g.result_id, g.response_time_ms, g.result_summary,
    (r.details -> 'tls_chain' -> 'certificates' -> 0)::jsonb AS tls_leaf
FROM check_regions g
LEFT JOIN check_results r ON r.check_id = g.check_id AND r.checked_at = g.checked_at AND r.id = g.result_id AND r.org_id = g.org_id
WHERE g.org_id = @org_id AND g.check_id = @check_id
ORDER BY g.region;

-- name: Degradations :many
SELECT d.* FROM check_degradations d
JOIN ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[])) AS k(org_id, id)
    ON d.org_id = k.org_id AND d.check_id = k.id;

-- name: SaveDegradation :exec
INSERT INTO check_degradations (org_id, check_id, since, degraded, failing_regions)
VALUES (@org_id, @check_id, @since, @degraded, @failing_regions)
ON CONFLICT (check_id) DO UPDATE SET since = excluded.since, degraded = excluded.degraded,
    failing_regions = excluded.failing_regions;

-- name: DeleteDegradation :exec
DELETE FROM check_degradations WHERE org_id = @org_id AND check_id = @check_id;

-- name: Slowness :many
SELECT s.* FROM check_slowness s
JOIN ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[])) AS k(org_id, id)
    ON s.org_id = k.org_id AND s.check_id = k.id;

-- name: SaveSlowness :exec
INSERT INTO check_slowness (org_id, check_id, since, degraded, slow_regions)
VALUES (@org_id, @check_id, @since, @degraded, @slow_regions)
ON CONFLICT (check_id) DO UPDATE SET since = excluded.since, degraded = excluded.degraded,
    slow_regions = excluded.slow_regions;

-- name: DeleteSlowness :exec
DELETE FROM check_slowness WHERE org_id = @org_id AND check_id = @check_id;

-- name: DegradedReasons :many
-- Why the check is degraded now, if it is: regional, slow, or both in that order.
SELECT 'regional'::text AS reason FROM check_degradations d
WHERE d.org_id = @org_id AND d.check_id = @check_id AND d.degraded
UNION ALL
SELECT 'slow'::text FROM check_slowness sl
WHERE sl.org_id = @org_id AND sl.check_id = @check_id AND sl.degraded;

-- name: HeldRegions :many
-- The regions whose failing result holds one of the check's runs (docs/detection.md
-- "Hold-off"), and since when.
SELECT failed_regions[1]::text AS region, min(held_since)::timestamptz AS held_since FROM check_runs
WHERE org_id = @org_id AND check_id = @check_id AND held_since IS NOT NULL
GROUP BY failed_regions[1];
