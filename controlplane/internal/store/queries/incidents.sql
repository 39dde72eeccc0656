-- name: CountIncidents :one
SELECT count(*) FROM status_page_incidents i
WHERE i.org_id = @org_id AND i.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(i.title), lower(@search::text)) > 0);

-- name: ListIncidents :many
-- Incidents and scheduled maintenance, newest first.
SELECT * FROM status_page_incidents i
WHERE i.org_id = @org_id AND i.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(i.title), lower(@search::text)) > 0)
ORDER BY coalesce(i.started, i.start_date, i.created_at) DESC, i.id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetIncident :one
SELECT * FROM status_page_incidents WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id;

-- name: LockIncident :one
SELECT * FROM status_page_incidents WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id FOR UPDATE;

-- name: CurrentIncidents :many
-- What the public summary shows of a page: unresolved incidents that are not maintenance, and
-- maintenance that has not completed, soonest first.
SELECT * FROM status_page_incidents i
WHERE i.org_id = @org_id AND i.status_page_id = @status_page_id
  AND ((i.maintenance_state IS NULL AND i.ended IS NULL) OR i.maintenance_state IN ('SCHEDULED', 'IN_PROGRESS'))
ORDER BY coalesce(i.start_date, i.started, i.created_at), i.id;

-- name: LatestUpdates :many
-- The latest update (by date_happened) of each incident.
SELECT DISTINCT ON (u.incident_id) u.incident_id, u.id, u.status, u.date_happened
FROM status_page_incident_updates u
WHERE u.org_id = @org_id AND u.incident_id = ANY(@incident_ids::uuid[])
ORDER BY u.incident_id, u.date_happened DESC, u.created_at DESC, u.id DESC;

-- name: IncidentComponentRefs :many
-- The components incidents affect, in creation order.
SELECT ic.incident_id, c.id, c.name FROM status_page_incident_components ic
JOIN status_page_components c ON c.id = ic.component_id
WHERE ic.org_id = @org_id AND ic.incident_id = ANY(@incident_ids::uuid[])
ORDER BY c.created_at, c.id;

-- name: CreateIncident :exec
INSERT INTO status_page_incidents (id, org_id, status_page_id, title, impact, started, created_at, updated_at)
VALUES (@id, @org_id, @status_page_id, @title, @impact, sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz);

-- name: SetIncidentTitleImpact :execrows
UPDATE status_page_incidents SET title = @title, impact = @impact, updated_at = @now
WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id;

-- name: SetIncidentEnded :exec
UPDATE status_page_incidents SET ended = sqlc.narg(ended)::timestamptz, updated_at = @now WHERE org_id = @org_id AND id = @id;

-- name: DeleteIncident :exec
DELETE FROM status_page_incidents WHERE org_id = @org_id AND id = @id;

-- name: LinkIncidentComponent :exec
INSERT INTO status_page_incident_components (org_id, incident_id, component_id)
VALUES (@org_id, @incident_id, @component_id) ON CONFLICT DO NOTHING;

-- name: LockPageComponentStatus :one
SELECT status FROM status_page_components WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id FOR UPDATE;

-- name: RecordComponentChange :exec
-- The status change an update made to a component (a second change in the same update keeps the
-- first old status).
INSERT INTO status_page_update_components (org_id, update_id, component_id, old_status, new_status)
VALUES (@org_id, @update_id, @component_id, sqlc.narg(old_status)::text, @new_status)
ON CONFLICT (update_id, component_id) DO UPDATE SET new_status = EXCLUDED.new_status;

-- name: CountIncidentUpdates :one
SELECT count(*) FROM status_page_incident_updates u
WHERE u.org_id = @org_id AND u.incident_id = @incident_id
  AND (@search::text = '' OR strpos(lower(u.description), lower(@search::text)) > 0);

-- name: ListIncidentUpdates :many
-- An incident's timeline, newest date_happened first.
SELECT u.id, u.incident_id, u.status, u.description, u.date_happened, u.created_at, u.updated_at
FROM status_page_incident_updates u
WHERE u.org_id = @org_id AND u.incident_id = @incident_id
  AND (@search::text = '' OR strpos(lower(u.description), lower(@search::text)) > 0)
ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: IncidentTimeline :many
-- Every update of an incident, newest date_happened first.
SELECT u.id, u.incident_id, u.status, u.description, u.date_happened, u.created_at, u.updated_at
FROM status_page_incident_updates u WHERE u.org_id = @org_id AND u.incident_id = @incident_id
ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC;

-- name: GetIncidentUpdate :one
SELECT u.id, u.incident_id, u.status, u.description, u.date_happened, u.created_at, u.updated_at
FROM status_page_incident_updates u WHERE u.org_id = @org_id AND u.incident_id = @incident_id AND u.id = @id;

-- name: UpdateComponentChanges :many
-- The component status changes updates made, in component creation order.
SELECT uc.update_id, c.id, c.name, uc.old_status, uc.new_status
FROM status_page_update_components uc JOIN status_page_components c ON c.id = uc.component_id
WHERE uc.org_id = @org_id AND uc.update_id = ANY(@update_ids::uuid[])
ORDER BY c.created_at, c.id;

-- name: CreateIncidentUpdate :exec
INSERT INTO status_page_incident_updates (id, org_id, incident_id, status, description, date_happened,
    notify_subscribers, created_at, updated_at)
VALUES (@id, @org_id, @incident_id, @status, @description, @date_happened, @notify_subscribers, @now, @now);

-- name: EditIncidentUpdate :execrows
UPDATE status_page_incident_updates SET status = coalesce(sqlc.narg(status)::text, status),
    description = coalesce(sqlc.narg(description)::text, description),
    date_happened = coalesce(sqlc.narg(date_happened)::timestamptz, date_happened), updated_at = @now
WHERE org_id = @org_id AND incident_id = @incident_id AND id = @id;

-- name: DeleteIncidentUpdate :one
DELETE FROM status_page_incident_updates WHERE org_id = @org_id AND incident_id = @incident_id AND id = @id RETURNING status;
