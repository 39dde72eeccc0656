-- A check's history as the API pages through it: incidents and stored results.

-- name: CountCheckIncidents :one
-- The incidents that overlap [from_time, to_time); each bound is optional.
SELECT count(*) FROM check_incidents
WHERE org_id = @org_id AND check_id = @check_id
    AND (sqlc.narg(from_time)::timestamptz IS NULL OR ended_at IS NULL OR ended_at > sqlc.narg(from_time))
    AND (sqlc.narg(to_time)::timestamptz IS NULL OR started_at < sqlc.narg(to_time));

-- name: ListCheckIncidents :many
-- The same incidents as CountCheckIncidents, newest started_at first, then id descending (the
-- check_incidents_check index order).
SELECT id, check_id, started_at, ended_at, caused_by FROM check_incidents
WHERE org_id = @org_id AND check_id = @check_id
    AND (sqlc.narg(from_time)::timestamptz IS NULL OR ended_at IS NULL OR ended_at > sqlc.narg(from_time))
    AND (sqlc.narg(to_time)::timestamptz IS NULL OR started_at < sqlc.narg(to_time))
ORDER BY started_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: CountCheckResults :one
SELECT count(*) FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND checked_at >= @from_time AND checked_at < @to_time;

-- name: ListCheckResults :many
-- Oldest first (the primary key order).
SELECT id, checked_at, region, passing, response_time_ms, attempt_number, is_final_attempt,
    dispatched_at, response_body, body_availability, response_code, result_summary,
    failure_source, failure_type, dns_status, resolver, parsed_response, tcp_status,
    dns_time_ms, connect_time_ms, data_time_ms, (details -> 'tls_chain')::jsonb AS tls_chain
FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND checked_at >= @from_time AND checked_at < @to_time
ORDER BY checked_at, id
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;
