-- name: CountMaintenanceWindows :one
SELECT count(*) FROM maintenance_windows w
WHERE w.org_id = @org_id AND (@search::text = '' OR strpos(lower(w.name), lower(@search::text)) > 0);

-- name: ListMaintenanceWindows :many
-- Newest first, each with the ids of its checks and heartbeats.
SELECT w.*,
    ARRAY(SELECT c.check_id FROM maintenance_window_checks c WHERE c.window_id = w.id ORDER BY c.check_id)::uuid[] AS check_ids,
    ARRAY(SELECT h.heartbeat_id FROM maintenance_window_heartbeats h WHERE h.window_id = w.id ORDER BY h.heartbeat_id)::uuid[] AS heartbeat_ids
FROM maintenance_windows w
WHERE w.org_id = @org_id AND (@search::text = '' OR strpos(lower(w.name), lower(@search::text)) > 0)
ORDER BY w.created_at DESC, w.id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetMaintenanceWindow :one
SELECT w.*,
    ARRAY(SELECT c.check_id FROM maintenance_window_checks c WHERE c.window_id = w.id ORDER BY c.check_id)::uuid[] AS check_ids,
    ARRAY(SELECT h.heartbeat_id FROM maintenance_window_heartbeats h WHERE h.window_id = w.id ORDER BY h.heartbeat_id)::uuid[] AS heartbeat_ids
FROM maintenance_windows w WHERE w.org_id = @org_id AND w.id = @id;

-- name: CreateMaintenanceWindow :exec
INSERT INTO maintenance_windows (id, org_id, name, start_date, duration_minutes, timezone, days_of_week, status,
    created_at, updated_at)
VALUES (@id, @org_id, @name, @start_date, @duration_minutes, @timezone, @days_of_week, @status, @now, @now);

-- name: UpdateMaintenanceWindow :one
UPDATE maintenance_windows SET name = coalesce(sqlc.narg(name)::text, name),
    start_date = coalesce(sqlc.narg(start_date)::timestamptz, start_date),
    duration_minutes = coalesce(sqlc.narg(duration_minutes)::integer, duration_minutes),
    timezone = coalesce(sqlc.narg(timezone)::text, timezone),
    days_of_week = coalesce(sqlc.narg(days_of_week)::smallint[], days_of_week),
    status = coalesce(sqlc.narg(status)::text, status), updated_at = @now
WHERE org_id = @org_id AND id = @id
RETURNING name;

-- name: DeleteMaintenanceWindow :one
DELETE FROM maintenance_windows WHERE org_id = @org_id AND id = @id RETURNING name;

-- name: ClearWindowChecks :exec
DELETE FROM maintenance_window_checks WHERE org_id = @org_id AND window_id = @window_id;

-- name: ClearWindowHeartbeats :exec
DELETE FROM maintenance_window_heartbeats WHERE org_id = @org_id AND window_id = @window_id;

-- name: KeepChecks :many
-- The checks of ids the organization has, locked against deletion until the links are written.
SELECT id FROM checks WHERE org_id = @org_id AND id = ANY(@ids::uuid[]) ORDER BY id FOR KEY SHARE;

-- name: KeepHeartbeats :many
SELECT id FROM heartbeats WHERE org_id = @org_id AND id = ANY(@ids::uuid[]) ORDER BY id FOR KEY SHARE;

-- name: LinkWindowChecks :exec
INSERT INTO maintenance_window_checks (org_id, window_id, check_id)
SELECT @org_id::uuid, @window_id::uuid, unnest(@ids::uuid[]) ON CONFLICT DO NOTHING;

-- name: LinkWindowHeartbeats :exec
INSERT INTO maintenance_window_heartbeats (org_id, window_id, heartbeat_id)
SELECT @org_id::uuid, @window_id::uuid, unnest(@ids::uuid[]) ON CONFLICT DO NOTHING;

-- name: CheckWindowSchedules :many
-- The enabled maintenance windows of checks, one row per (check, window).
SELECT l.check_id AS member_id, w.start_date, w.duration_minutes, w.timezone, w.days_of_week
FROM maintenance_window_checks l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
WHERE l.check_id = ANY(@ids::uuid[]) AND w.status = 'ENABLED';

-- name: HeartbeatWindowSchedules :many
SELECT l.heartbeat_id AS member_id, w.start_date, w.duration_minutes, w.timezone, w.days_of_week
FROM maintenance_window_heartbeats l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
WHERE l.heartbeat_id = ANY(@ids::uuid[]) AND w.status = 'ENABLED';
