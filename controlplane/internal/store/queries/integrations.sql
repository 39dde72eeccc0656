-- name: CreateIntegration :one
INSERT INTO integrations (id, org_id, name, type, settings_enc, created_at, updated_at)
VALUES (@id, @org_id, @name, @type, @settings_enc, @now, @now)
RETURNING id, org_id, name, type, settings_enc, created_at, updated_at;

-- name: GetIntegration :one
SELECT id, org_id, name, type, settings_enc, created_at, updated_at FROM integrations WHERE org_id = @org_id AND id = @id;

-- name: LockIntegration :one
SELECT id, org_id, name, type, settings_enc, created_at, updated_at FROM integrations
WHERE org_id = @org_id AND id = @id FOR UPDATE;

-- name: CountIntegrations :one
SELECT count(*) FROM integrations
WHERE org_id = @org_id AND (sqlc.narg(type)::text IS NULL OR type = sqlc.narg(type)::text);

-- name: ListIntegrations :many
SELECT id, org_id, name, type, settings_enc, created_at, updated_at FROM integrations
WHERE org_id = @org_id AND (sqlc.narg(type)::text IS NULL OR type = sqlc.narg(type)::text)
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: UpdateIntegration :one
UPDATE integrations SET name = @name, settings_enc = @settings_enc, updated_at = @now
WHERE org_id = @org_id AND id = @id
RETURNING id, org_id, name, type, settings_enc, created_at, updated_at;

-- name: DeleteIntegration :exec
DELETE FROM integrations WHERE org_id = @org_id AND id = @id;

-- name: ReferenceIntegrations :many
-- The integrations among ids, locked FOR KEY SHARE: a concurrent delete (FOR UPDATE) waits
-- until the referencing check or heartbeat is saved, and then sees it.
SELECT id, type FROM integrations WHERE org_id = @org_id AND id = ANY(@ids::uuid[]) ORDER BY id FOR KEY SHARE;

-- name: IntegrationUsers :many
-- The checks and heartbeats whose *_alerts list (field) names the integration.
SELECT 'check'::text AS kind, c.id, c.name FROM checks c
WHERE c.org_id = sqlc.arg(org_id)::uuid AND c. alerts -> sqlc.arg(field)::text ? sqlc.arg(integration_id)::text
UNION ALL
SELECT 'heartbeat'::text, h.id, h.name FROM heartbeats h
WHERE h.org_id = sqlc.arg(org_id)::uuid AND h. alerts -> sqlc.arg(field)::text ? sqlc.arg(integration_id)::text
ORDER BY 1, 3, 2;

-- name: ClearIntegrationStatusPages :exec
DELETE FROM integration_status_pages WHERE org_id = @org_id AND integration_id = @integration_id;

-- name: AddIntegrationStatusPages :exec
INSERT INTO integration_status_pages (org_id, integration_id, status_page_id)
SELECT @org_id::uuid, @integration_id::uuid, unnest(@ids::uuid[]);

-- name: IntegrationStatusPageRefs :many
SELECT l.integration_id, r.id, r.name FROM integration_status_pages l
JOIN status_pages r ON r.org_id = l.org_id AND r.id = l.status_page_id
WHERE l.org_id = @org_id AND l.integration_id = ANY(@integration_ids::uuid[]) ORDER BY r.name, r.id;

-- name: CountIntegrationDeliveries :one
SELECT count(*) FROM deliveries WHERE org_id = @org_id AND integration_id = @integration_id;

-- name: ListIntegrationDeliveries :many
SELECT id, integration_id, event_id, event_type, status, attempts, next_attempt_at, last_status_code, last_error,
    created_at, delivered_at
FROM deliveries WHERE org_id = @org_id AND integration_id = @integration_id
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: LatestRunResults :many
-- The final attempts of a check's latest run at or before a time (within the day before):
-- what an alert says failed, and where.
SELECT r.region, r.passing, r.result_summary, r.response_code, r.failure_type FROM check_results r
WHERE r.org_id = sqlc.arg(org_id)::uuid AND r.check_id = sqlc.arg(check_id)::uuid AND r.is_final_attempt
  AND r.checked_at > sqlc.arg(since)::timestamptz AND r.checked_at <= sqlc.arg(until)::timestamptz
  AND r.job_id = (SELECT l.job_id FROM check_results l WHERE l.check_id = sqlc.arg(check_id)::uuid
      AND l.org_id = sqlc.arg(org_id)::uuid AND l.checked_at > sqlc.arg(since)::timestamptz
      AND l.checked_at <= sqlc.arg(until)::timestamptz ORDER BY l.checked_at DESC LIMIT 1)
ORDER BY r.region;
