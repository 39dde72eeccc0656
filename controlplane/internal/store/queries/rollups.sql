-- Response-time rollups (check_rollups, 0021_check_rollups.sql) and the reads of the console's
-- API extensions: a check's series and the overview of many checks (docs/api-extensions.md).

-- name: AddToRollups :many
-- Adds to the rows that exist one (check, region, hour) each, and one histogram counter of each
-- (@hist_index, 1-based): a statement that adds the arrays themselves cost twice as much. No
-- other transaction writes these rows meanwhile: IngestResults has upserted the same checks'
-- and regions' check_regions rows first, whose row locks it holds. The caller inserts the
-- rows not returned (InsertRollups).
UPDATE check_rollups AS r SET runs = r.runs + u.n, failed = r.failed + u.f,
    latency_hist[u.i] = r.latency_hist[u.i] + u.hc,
    dns_ms_sum = r.dns_ms_sum + u.ds, dns_n = r.dns_n + u.dn,
    connect_ms_sum = r.connect_ms_sum + u.cs, connect_n = r.connect_n + u.cn,
    tls_ms_sum = r.tls_ms_sum + u.ts, tls_n = r.tls_n + u.tn,
    first_byte_ms_sum = r.first_byte_ms_sum + u.fs, first_byte_n = r.first_byte_n + u.fn
FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@regions::text[]),
    unnest(@bucket_starts::timestamptz[]), unnest(@runs::int4[]), unnest(@failed::int4[]),
    unnest(@hist_index::int4[]), unnest(@hist_count::int4[]),
    unnest(@dns_sums::float8[]), unnest(@dns_ns::int4[]), unnest(@connect_sums::float8[]), unnest(@connect_ns::int4[]),
    unnest(@tls_sums::float8[]), unnest(@tls_ns::int4[]), unnest(@first_byte_sums::float8[]), unnest(@first_byte_ns::int4[]))
    AS u(o, c, g, b, n, f, i, hc, ds, dn, cs, cn, ts, tn, fs, fn)
WHERE r.check_id = u.c AND r.bucket_start = u.b AND r.region = u.g AND r.org_id = u.o
RETURNING r.check_id, r.region, r.bucket_start;

-- name: InsertRollups :exec
-- New rows, one per (check, region, hour). @hists are their histograms as array literals
-- ('{0,1,…}'): sqlc and pgx pass no arrays of arrays.
INSERT INTO check_rollups (org_id, check_id, region, bucket_start, runs, failed, latency_hist,
    dns_ms_sum, dns_n, connect_ms_sum, connect_n, tls_ms_sum, tls_n, first_byte_ms_sum, first_byte_n)
SELECT o, c, g, b, n, f, h::int4[], ds, dn, cs, cn, ts, tn, fs, fn
FROM ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@regions::text[]),
    unnest(@bucket_starts::timestamptz[]), unnest(@runs::int4[]), unnest(@failed::int4[]), unnest(@hists::text[]),
    unnest(@dns_sums::float8[]), unnest(@dns_ns::int4[]), unnest(@connect_sums::float8[]), unnest(@connect_ns::int4[]),
    unnest(@tls_sums::float8[]), unnest(@tls_ns::int4[]), unnest(@first_byte_sums::float8[]), unnest(@first_byte_ns::int4[]))
    AS u(o, c, g, b, n, f, h, ds, dn, cs, cn, ts, tn, fs, fn);

-- name: PruneRollups :execrows
DELETE FROM check_rollups WHERE bucket_start < @before;

-- name: CheckRollups :many
-- A check's rollups of the hours in [@from_time, @to_time), on the primary key.
SELECT region, bucket_start, runs, failed, latency_hist, dns_ms_sum, dns_n, connect_ms_sum, connect_n,
    tls_ms_sum, tls_n, first_byte_ms_sum, first_byte_n
FROM check_rollups
WHERE org_id = @org_id AND check_id = @check_id AND bucket_start >= @from_time AND bucket_start < @to_time
ORDER BY region, bucket_start;

-- name: CheckRawSeries :many
-- A check's final results of [@from_time, @to_time) in buckets of @bucket_seconds (aligned on
-- the Unix epoch), per region, on the primary key (check_id, checked_at, id): for ranges short
-- enough to read results rather than hourly rollups. Counted as the rollups count: final
-- attempts without the agent's own failures; latency and phases of passing results (-1: none).
SELECT region,
    date_bin(make_interval(secs => @bucket_seconds::int), checked_at, 'epoch'::timestamptz)::timestamptz AS bucket_start,
    count(*)::int AS runs, (count(*) FILTER (WHERE NOT passing))::int AS failed,
    coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY response_time_ms) FILTER (WHERE passing), -1)::float8 AS p50_ms,
    coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY response_time_ms) FILTER (WHERE passing), -1)::float8 AS p95_ms,
    coalesce(avg(dns_time_ms) FILTER (WHERE passing AND dns_time_ms >= 0), -1)::float8 AS dns_ms,
    coalesce(avg(connect_time_ms) FILTER (WHERE passing AND connect_time_ms >= 0), -1)::float8 AS connect_ms,
    coalesce(avg((details -> 'timings' ->> 'tls_ms')::float8)
        FILTER (WHERE passing AND (details -> 'timings' ->> 'tls_ms')::float8 >= 0), -1)::float8 AS tls_ms,
    coalesce(avg((details -> 'timings' ->> 'first_byte_ms')::float8)
        FILTER (WHERE passing AND (details -> 'timings' ->> 'first_byte_ms')::float8 >= 0), -1)::float8 AS first_byte_ms
FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND checked_at >= @from_time AND checked_at < @to_time
  AND is_final_attempt AND failure_source IS DISTINCT FROM 'AGENT'
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: OverviewChecks :many
-- status_since: when the evaluator last changed the check's state; a check it never judged has
-- been PENDING since it was created.
SELECT c.id, c.test_regions, c.test_interval, p.last_run_at,
    coalesce(c.state_changed_at, c.created_at)::timestamptz AS status_since
FROM checks c LEFT JOIN check_progress p ON p.check_id = c.id
WHERE c.org_id = @org_id AND c.id = ANY(@check_ids::uuid[]);

-- name: OverviewRollups :many
SELECT check_id, bucket_start, runs, failed, latency_hist
FROM check_rollups
WHERE org_id = @org_id AND check_id = ANY(@check_ids::uuid[]) AND bucket_start >= @from_time AND bucket_start < @to_time;

-- name: OverviewDailyRuns :many
SELECT check_id, sum(runs)::bigint AS runs, sum(failed_runs)::bigint AS failed_runs
FROM check_daily_stats
WHERE org_id = @org_id AND check_id = ANY(@check_ids::uuid[]) AND day >= @from_day::date
GROUP BY check_id;

-- name: OverviewRegions :many
SELECT check_id, region, passing, checked_at, result_id, response_time_ms, result_summary
FROM check_regions
WHERE org_id = @org_id AND check_id = ANY(@check_ids::uuid[]);
