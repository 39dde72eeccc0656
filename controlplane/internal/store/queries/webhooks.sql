-- name: CreateWebhook :one
INSERT INTO webhooks (id, org_id, url, description, events, secret_enc, created_at, updated_at)
VALUES (@id, @org_id, @url, sqlc.narg(description)::text, @events, @secret_enc, @now, @now)
RETURNING id, org_id, url, description, events, created_at, updated_at;

-- name: GetWebhook :one
SELECT id, org_id, url, description, events, created_at, updated_at FROM webhooks WHERE org_id = @org_id AND id = @id;

-- name: CountWebhooks :one
SELECT count(*) FROM webhooks
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(url), lower(@search::text)) > 0
    OR strpos(lower(coalesce(description, '')), lower(@search::text)) > 0);

-- name: ListWebhooks :many
SELECT id, org_id, url, description, events, created_at, updated_at FROM webhooks
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(url), lower(@search::text)) > 0
    OR strpos(lower(coalesce(description, '')), lower(@search::text)) > 0)
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: UpdateWebhook :one
-- description: clear_description removes it, else a non-NULL value replaces it.
UPDATE webhooks SET url = coalesce(sqlc.narg(url)::text, url),
    description = CASE WHEN sqlc.arg(clear_description)::bool THEN NULL ELSE coalesce(sqlc.narg(description)::text, description) END,
    events = coalesce(sqlc.narg(events)::text[], events), updated_at = @now
WHERE org_id = @org_id AND id = @id
RETURNING id, org_id, url, description, events, created_at, updated_at;

-- name: DeleteWebhook :one
DELETE FROM webhooks WHERE org_id = @org_id AND id = @id
RETURNING id, org_id, url, description, events, created_at, updated_at;

-- name: OrgCheckIDs :many
SELECT id FROM checks WHERE org_id = @org_id AND id = ANY(@ids::uuid[]);

-- name: OrgStatusPageIDs :many
SELECT id FROM status_pages WHERE org_id = @org_id AND id = ANY(@ids::uuid[]);

-- name: OrgHeartbeatIDs :many
SELECT id FROM heartbeats WHERE org_id = @org_id AND id = ANY(@ids::uuid[]);

-- name: ClearWebhookChecks :exec
DELETE FROM webhook_checks WHERE org_id = @org_id AND webhook_id = @webhook_id;

-- name: AddWebhookChecks :exec
INSERT INTO webhook_checks (org_id, webhook_id, check_id)
SELECT @org_id::uuid, @webhook_id::uuid, unnest(@ids::uuid[]);

-- name: ClearWebhookStatusPages :exec
DELETE FROM webhook_status_pages WHERE org_id = @org_id AND webhook_id = @webhook_id;

-- name: AddWebhookStatusPages :exec
INSERT INTO webhook_status_pages (org_id, webhook_id, status_page_id)
SELECT @org_id::uuid, @webhook_id::uuid, unnest(@ids::uuid[]);

-- name: ClearWebhookHeartbeats :exec
DELETE FROM webhook_heartbeats WHERE org_id = @org_id AND webhook_id = @webhook_id;

-- name: AddWebhookHeartbeats :exec
INSERT INTO webhook_heartbeats (org_id, webhook_id, heartbeat_id)
SELECT @org_id::uuid, @webhook_id::uuid, unnest(@ids::uuid[]);

-- name: WebhookCheckRefs :many
-- The {id, name} of the resources webhooks are associated with, in name order. Status pages
-- and heartbeats have no foreign key from the association: a deleted one is left out.
SELECT l.webhook_id, r.id, r.name FROM webhook_checks l JOIN checks r ON r.org_id = l.org_id AND r.id = l.check_id
WHERE l.org_id = @org_id AND l.webhook_id = ANY(@webhook_ids::uuid[]) ORDER BY r.name, r.id;

-- name: WebhookStatusPageRefs :many
SELECT l.webhook_id, r.id, r.name FROM webhook_status_pages l JOIN status_pages r ON r.org_id = l.org_id AND r.id = l.status_page_id
WHERE l.org_id = @org_id AND l.webhook_id = ANY(@webhook_ids::uuid[]) ORDER BY r.name, r.id;

-- name: WebhookHeartbeatRefs :many
SELECT l.webhook_id, r.id, r.name FROM webhook_heartbeats l JOIN heartbeats r ON r.org_id = l.org_id AND r.id = l.heartbeat_id
WHERE l.org_id = @org_id AND l.webhook_id = ANY(@webhook_ids::uuid[]) ORDER BY r.name, r.id;

-- name: OrganizationPlan :one
SELECT plan FROM organizations WHERE id = @id;
