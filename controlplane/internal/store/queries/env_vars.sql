-- Environment variables ({{NAME}}), sealed at rest, in a scope: a project, or the organization
-- pool (project_id NULL) that Unassigned resources use.

-- name: CountEnvVars :one
SELECT count(*) FROM env_vars
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0)
  AND (NOT @scoped::boolean OR project_id IS NOT DISTINCT FROM sqlc.narg(project_id)::uuid);

-- name: ListEnvVars :many
SELECT * FROM env_vars
WHERE org_id = @org_id AND (@search::text = '' OR strpos(lower(name), lower(@search::text)) > 0)
  AND (NOT @scoped::boolean OR project_id IS NOT DISTINCT FROM sqlc.narg(project_id)::uuid)
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetEnvVar :one
SELECT * FROM env_vars WHERE org_id = @org_id AND id = @id;

-- name: LockEnvVar :one
SELECT * FROM env_vars WHERE org_id = @org_id AND id = @id FOR UPDATE;

-- name: LockOrgForEnvVars :exec
-- Serializes variable creation per organization so that the limit holds under concurrency. NO
-- KEY UPDATE does not block inserts that merely reference the organization (those take KEY
-- SHARE).
SELECT 1 FROM organizations WHERE id = @org_id FOR NO KEY UPDATE;

-- name: CountOrgEnvVars :one
SELECT count(*) FROM env_vars WHERE org_id = @org_id;

-- name: CreateEnvVar :one
INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc, created_at, updated_at)
VALUES (@id, @org_id, @project_id, @name, @type, @value_enc, @created_at, @created_at)
RETURNING *;

-- name: UpdateEnvVar :one
UPDATE env_vars SET name = @name, value_enc = @value_enc, updated_at = @updated_at
WHERE org_id = @org_id AND id = @id
RETURNING *;

-- name: DeleteEnvVar :exec
DELETE FROM env_vars WHERE org_id = @org_id AND id = @id;

-- name: CountEnvVarRefs :one
SELECT count(*) FROM check_env_refs WHERE org_id = @org_id AND env_var_id = @env_var_id;

-- name: ChecksUsingEnvVar :many
SELECT check_id FROM check_env_refs WHERE org_id = @org_id AND env_var_id = @env_var_id;

-- name: LockChecksUsingEnvVar :many
-- The checks that reference a variable, locked in id order (the order check writes lock in).
SELECT sqlc.embed(c) FROM checks c
JOIN check_env_refs r ON r.org_id = c.org_id AND r.check_id = c.id
WHERE r.org_id = @org_id AND r.env_var_id = @env_var_id
ORDER BY c.id
FOR NO KEY UPDATE OF c;

-- name: SetCheckVarFields :exec
-- Writes back a check whose {{NAME}} references were rewritten.
UPDATE checks SET spec = @spec, auth_password_enc = @auth_password_enc, updated_at = @updated_at
WHERE org_id = @org_id AND id = @id;

-- name: ResolveEnvVars :many
SELECT name, type, value_enc FROM env_vars
WHERE org_id = @org_id AND project_id IS NOT DISTINCT FROM sqlc.narg(project_id)::uuid AND name = ANY(@names::text[]);
