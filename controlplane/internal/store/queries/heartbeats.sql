-- name: CreateHeartbeat :one
INSERT INTO heartbeats (id, org_id, project_id, name, paused, muted, report_period, report_period_cron, timezone,
    grace_period, alert_priority, reminder_alert_interval_minutes, alerts, created_at, updated_at)
VALUES (@id, @org_id, sqlc.narg(project_id)::uuid, @name, @paused, @muted, sqlc.narg(report_period)::integer,
    sqlc.narg(report_period_cron)::text, sqlc.narg(timezone)::text, @grace_period, @alert_priority,
    sqlc.narg(reminder_alert_interval_minutes)::integer, @alerts, @now, @now)
RETURNING *;

-- name: GetHeartbeat :one
SELECT * FROM heartbeats WHERE org_id = @org_id AND id = @id;

-- name: LockHeartbeat :one
SELECT * FROM heartbeats WHERE org_id = @org_id AND id = @id FOR UPDATE;

-- name: CountHeartbeats :one
SELECT count(*) FROM heartbeats
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0)
  AND (NOT sqlc.arg(unassigned)::bool OR project_id IS NULL)
  AND (sqlc.narg(project_id)::uuid IS NULL OR project_id = sqlc.narg(project_id)::uuid);

-- name: ListHeartbeats :many
SELECT * FROM heartbeats
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0)
  AND (NOT sqlc.arg(unassigned)::bool OR project_id IS NULL)
  AND (sqlc.narg(project_id)::uuid IS NULL OR project_id = sqlc.narg(project_id)::uuid)
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: SaveHeartbeat :one
-- Writes a heartbeat's configuration and the monitor's fields as given (the caller holds the row
-- locked); the ping columns the caller does not manage stay.
UPDATE heartbeats SET name = @name, paused = @paused, muted = @muted,
    report_period = sqlc.narg(report_period)::integer, report_period_cron = sqlc.narg(report_period_cron)::text,
    timezone = sqlc.narg(timezone)::text, grace_period = @grace_period, alert_priority = @alert_priority,
    reminder_alert_interval_minutes = sqlc.narg(reminder_alert_interval_minutes)::integer, alerts = @alerts,
    state = @state, state_changed_at = sqlc.narg(state_changed_at)::timestamptz,
    last_success_at = sqlc.narg(last_success_at)::timestamptz, run_started_at = sqlc.narg(run_started_at)::timestamptz,
    failed_at = sqlc.narg(failed_at)::timestamptz, down_alerted = @down_alerted,
    last_alert_at = sqlc.narg(last_alert_at)::timestamptz, updated_at = @now
WHERE org_id = @org_id AND id = @id
RETURNING *;

-- name: DeleteHeartbeat :one
DELETE FROM heartbeats WHERE org_id = @org_id AND id = @id RETURNING name;

-- name: LockHeartbeatForMove :one
SELECT project_id, name FROM heartbeats WHERE org_id = @org_id AND id = @id FOR NO KEY UPDATE;

-- name: MoveHeartbeat :exec
UPDATE heartbeats SET project_id = sqlc.narg(project_id)::uuid, updated_at = @now WHERE org_id = @org_id AND id = @id;

-- name: RecordPing :execrows
-- One ping of a heartbeat, in one statement; unknown and paused heartbeats take none. A success
-- or fail ping completes the run a start ping began (its duration is recorded); a success ping
-- of a PENDING heartbeat makes it UP (nothing to alert). The id is the credential of the public
-- ping endpoint, so there is no organization.
UPDATE heartbeats SET
    last_seen = sqlc.arg(at)::timestamptz,
    last_success_at = CASE WHEN sqlc.arg(kind)::text = 'success' THEN sqlc.arg(at)::timestamptz ELSE last_success_at END,
    failed_at = CASE WHEN sqlc.arg(kind)::text = 'fail' THEN sqlc.arg(at)::timestamptz WHEN sqlc.arg(kind)::text = 'success' THEN NULL ELSE failed_at END,
    run_started_at = CASE WHEN sqlc.arg(kind)::text = 'start' THEN sqlc.arg(at)::timestamptz ELSE NULL END,
    last_duration_ms = CASE WHEN sqlc.arg(kind)::text <> 'start' AND run_started_at IS NOT NULL
        THEN GREATEST(0, (extract(epoch FROM sqlc.arg(at)::timestamptz - run_started_at) * 1000)::bigint) ELSE last_duration_ms END,
    state = CASE WHEN sqlc.arg(kind)::text = 'success' AND state = 'PENDING' THEN 'UP' ELSE state END,
    state_changed_at = CASE WHEN sqlc.arg(kind)::text = 'success' AND state = 'PENDING' THEN sqlc.arg(at)::timestamptz ELSE state_changed_at END
WHERE id = sqlc.arg(id) AND NOT paused;

-- name: SaveHeartbeatState :exec
UPDATE heartbeats SET state = @state, state_changed_at = sqlc.narg(state_changed_at)::timestamptz,
    down_alerted = @down_alerted, last_alert_at = sqlc.narg(last_alert_at)::timestamptz
WHERE org_id = @org_id AND id = @id;

-- name: LockMonitoredHeartbeats :many
-- The monitored heartbeats (not paused; pinged at least once or not PENDING) after an id, in id
-- order, locked; rows another replica's sweep holds are skipped.
SELECT * FROM heartbeats
WHERE NOT paused AND (last_seen IS NOT NULL OR state <> 'PENDING') AND id > @after_id
ORDER BY id LIMIT @batch_limit::bigint FOR UPDATE SKIP LOCKED;
