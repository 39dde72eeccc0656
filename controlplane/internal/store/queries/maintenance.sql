-- name: CountPageComponents :one
SELECT count(*) FROM status_page_components WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = ANY(@ids::uuid[]);

-- name: CreateMaintenance :exec
INSERT INTO status_page_incidents (id, org_id, status_page_id, title, impact, created_at, updated_at,
    maintenance_state, start_date, duration_minutes, notify_an_hour_before, notify_at_start, notify_at_end)
VALUES (@id, @org_id, @status_page_id, @title, 'MAINTENANCE', @now, @now,
    'SCHEDULED', @start_date::timestamptz, @duration_minutes::integer, @notify_an_hour_before::bool, @notify_at_start::bool, @notify_at_end::bool);

-- name: LinkIncidentComponents :exec
INSERT INTO status_page_incident_components (org_id, incident_id, component_id)
SELECT @org_id::uuid, @incident_id::uuid, unnest(@component_ids::uuid[]);

-- name: EditMaintenance :exec
-- A new start date re-arms the notice an hour before it (reminded_at).
UPDATE status_page_incidents SET title = coalesce(sqlc.narg(title)::text, title),
    start_date = coalesce(sqlc.narg(start_date)::timestamptz, start_date),
    duration_minutes = coalesce(sqlc.narg(duration_minutes)::integer, duration_minutes), updated_at = @now,
    reminded_at = CASE WHEN sqlc.narg(start_date)::timestamptz IS DISTINCT FROM NULL
        AND sqlc.narg(start_date)::timestamptz <> start_date THEN NULL ELSE reminded_at END
WHERE org_id = @org_id AND id = @id;

-- name: EditMaintenanceNotifications :exec
UPDATE status_page_incidents SET notify_an_hour_before = coalesce(sqlc.narg(an_hour_before)::bool, notify_an_hour_before),
    notify_at_start = coalesce(sqlc.narg(at_start)::bool, notify_at_start),
    notify_at_end = coalesce(sqlc.narg(at_end)::bool, notify_at_end), updated_at = @now
WHERE org_id = @org_id AND id = @id;

-- name: EditMaintenanceAnnouncement :exec
-- The description of a scheduled maintenance is its announcement, the SCHEDULED update.
UPDATE status_page_incident_updates SET description = @description, updated_at = @now
WHERE org_id = @org_id AND incident_id = @incident_id AND status = 'SCHEDULED';

-- name: UnlinkIncidentComponents :exec
DELETE FROM status_page_incident_components WHERE org_id = @org_id AND incident_id = @incident_id;

-- name: DueMaintenance :many
-- Maintenance whose start (SCHEDULED) or end (IN_PROGRESS) has come, across organizations.
SELECT org_id, status_page_id, id FROM status_page_incidents
WHERE (maintenance_state = 'SCHEDULED' AND start_date <= @now::timestamptz)
   OR (maintenance_state = 'IN_PROGRESS' AND start_date + duration_minutes * interval '1 minute' <= @now::timestamptz)
ORDER BY start_date, id LIMIT 500;

-- name: ClaimMaintenance :many
-- Locks a maintenance for its lifecycle step; none when another replica holds it or it is gone.
SELECT * FROM status_page_incidents WHERE org_id = @org_id AND id = @id AND maintenance_state IS NOT NULL
FOR UPDATE SKIP LOCKED;

-- name: LatestDateHappened :many
SELECT date_happened FROM status_page_incident_updates WHERE org_id = @org_id AND incident_id = @incident_id
ORDER BY date_happened DESC LIMIT 1;

-- name: KeepRestoreStatuses :exec
-- Remembers the status each component of a starting maintenance had, to restore at its end.
UPDATE status_page_incident_components ic SET restore_status = c.status
FROM status_page_components c WHERE c.id = ic.component_id AND ic.org_id = @org_id AND ic.incident_id = @incident_id;

-- name: LockMaintenanceComponents :many
SELECT c.id, c.status FROM status_page_incident_components ic
JOIN status_page_components c ON c.id = ic.component_id
WHERE ic.org_id = @org_id AND ic.incident_id = @incident_id ORDER BY c.id FOR UPDATE OF c;

-- name: RestorableComponents :many
-- The components a maintenance put in MAINTENANCE, still there and not held by another
-- maintenance in progress, with the status to give back.
SELECT ic.component_id, ic.restore_status::text AS restore_status FROM status_page_incident_components ic
JOIN status_page_components c ON c.id = ic.component_id
WHERE ic.org_id = @org_id AND ic.incident_id = @incident_id AND ic.restore_status IS NOT NULL AND c.status = 'MAINTENANCE'
  AND NOT EXISTS (SELECT 1 FROM status_page_incident_components o JOIN status_page_incidents oi ON oi.id = o.incident_id
      WHERE o.component_id = ic.component_id AND o.incident_id <> ic.incident_id AND oi.maintenance_state = 'IN_PROGRESS')
ORDER BY ic.component_id;

-- name: SetMaintenanceState :exec
-- started is set when the maintenance starts, kept otherwise.
UPDATE status_page_incidents SET maintenance_state = @maintenance_state,
    started = coalesce(sqlc.narg(started)::timestamptz, started), updated_at = @now
WHERE org_id = @org_id AND id = @id;

-- name: DueReminders :many
-- Scheduled maintenance that asks for the notice before its start, starts after now and by
-- horizon, and has not been announced yet.
SELECT org_id, status_page_id, id FROM status_page_incidents
WHERE maintenance_state = 'SCHEDULED' AND notify_an_hour_before AND reminded_at IS NULL
  AND start_date > @now::timestamptz AND start_date <= @horizon::timestamptz
ORDER BY start_date, id LIMIT 500;

-- name: ClaimReminder :many
-- Marks a maintenance's notice as sent and returns its latest update; none when another
-- replica holds it or it changed meanwhile.
UPDATE status_page_incidents i SET reminded_at = @now::timestamptz
WHERE i.org_id = @org_id AND i.id = @id AND i.reminded_at IS NULL AND i.maintenance_state = 'SCHEDULED'
  AND i.id = (SELECT s.id FROM status_page_incidents s WHERE s.id = @id FOR UPDATE SKIP LOCKED)
RETURNING (SELECT u.id FROM status_page_incident_updates u WHERE u.incident_id = i.id
    ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC LIMIT 1)::uuid AS latest_update_id;

-- name: IncidentNotice :one
-- An incident update as subscriber e-mails tell it.
SELECT i.title, i.impact, i.start_date, i.duration_minutes, u.status, u.description, u.date_happened
FROM status_page_incidents i JOIN status_page_incident_updates u ON u.incident_id = i.id
WHERE i.org_id = @org_id AND i.id = @incident_id AND u.id = @update_id;

-- name: IncidentNoticeComponents :many
SELECT c.id, c.name, c.status FROM status_page_incident_components ic
JOIN status_page_components c ON c.id = ic.component_id
WHERE ic.org_id = @org_id AND ic.incident_id = @incident_id ORDER BY c.sort_order NULLS LAST, c.name, c.id;
