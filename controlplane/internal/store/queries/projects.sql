-- Projects (projects.go).

-- name: CountProjects :one
SELECT count(*) FROM projects WHERE org_id = @org_id;

-- name: ListProjects :many
SELECT * FROM projects WHERE org_id = @org_id
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: GetProject :one
SELECT * FROM projects WHERE org_id = @org_id AND id = @id;

-- name: CreateProject :one
INSERT INTO projects (id, org_id, name, is_default, created_at, updated_at)
VALUES (@id, @org_id, @name, false, @created_at, @created_at)
RETURNING *;

-- name: LockProjectForUpdate :one
-- FOR UPDATE also conflicts with the FOR KEY SHARE lock that inserting a row referencing the
-- project takes, so no resource can join a project while it is being deleted.
SELECT * FROM projects WHERE org_id = @org_id AND id = @id FOR UPDATE;

-- name: LockProjectForRename :one
-- The name before the rename, for the audit event. FOR NO KEY UPDATE: resources may still join.
SELECT name FROM projects WHERE org_id = @org_id AND id = @id FOR NO KEY UPDATE;

-- name: RenameProject :one
UPDATE projects SET name = @name, updated_at = @updated_at
WHERE org_id = @org_id AND id = @id
RETURNING *;

-- name: ProjectContents :one
SELECT (SELECT count(*) FROM checks c WHERE c.org_id = @org_id AND c.project_id = @project_id)::bigint AS checks,
    (SELECT count(*) FROM env_vars v WHERE v.org_id = @org_id AND v.project_id = @project_id)::bigint AS env_vars;

-- name: DeleteProject :exec
DELETE FROM projects WHERE org_id = @org_id AND id = @id;

-- name: LockProjectForReference :execrows
-- Keeps the project from being deleted until the transaction ends; no row: no such project.
SELECT 1 FROM projects WHERE org_id = @org_id AND id = @id FOR KEY SHARE;

-- name: ProjectExists :one
SELECT EXISTS (SELECT 1 FROM projects WHERE org_id = @org_id AND id = @id) AS exists;
