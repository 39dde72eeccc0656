-- name: CountGroups :one
SELECT count(*) FROM status_page_groups
WHERE org_id = @org_id AND status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0);

-- name: ListGroups :many
SELECT * FROM status_page_groups
WHERE org_id = @org_id AND status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0)
ORDER BY sort_order NULLS LAST, created_at, id
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetGroup :one
SELECT * FROM status_page_groups WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id;

-- name: CreateGroup :one
-- Appended after the page's groups.
INSERT INTO status_page_groups (id, org_id, status_page_id, name, description, sort_order, created_at, updated_at)
VALUES (@id, @org_id, @status_page_id, @name, sqlc.narg(description)::text,
    (SELECT count(*) FROM status_page_groups WHERE status_page_id = @status_page_id), @now, @now)
RETURNING *;

-- name: UpdateGroup :one
-- description is replaced (NULL clears) only when set_description is true.
UPDATE status_page_groups SET name = coalesce(sqlc.narg(name)::text, name),
    description = CASE WHEN @set_description::bool THEN sqlc.narg(description)::text ELSE description END,
    updated_at = @now
WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id
RETURNING *;

-- name: UngroupComponents :exec
-- The group's components become ungrouped, appended after the page's ungrouped components in
-- their group order.
WITH base AS (
    SELECT count(*) AS n FROM status_page_components b
    WHERE b.org_id = @org_id AND b.status_page_id = @status_page_id AND b.group_id IS NULL),
moved AS (
    SELECT m.id, row_number() OVER (ORDER BY m.sort_order NULLS LAST, m.created_at, m.id) - 1 AS rn
    FROM status_page_components m WHERE m.org_id = @org_id AND m.group_id = @group_id)
UPDATE status_page_components c SET group_id = NULL, sort_order = base.n + moved.rn
FROM base, moved WHERE c.org_id = @org_id AND c.id = moved.id;

-- name: DeleteGroup :one
DELETE FROM status_page_groups WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id RETURNING name;

-- name: GroupIDs :many
SELECT id FROM status_page_groups WHERE org_id = @org_id AND status_page_id = @status_page_id;

-- name: SetGroupSortOrder :exec
UPDATE status_page_groups SET sort_order = @sort_order WHERE org_id = @org_id AND id = @id;
