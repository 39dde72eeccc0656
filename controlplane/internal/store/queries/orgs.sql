-- name: CreateOrganization :one
INSERT INTO organizations (id, name, plan, created_at)
VALUES (@id, @name, @plan, @created_at)
RETURNING *;

-- name: GetOrganization :one
SELECT * FROM organizations WHERE id = @id;

-- name: ListOrganizations :many
-- For operators (the admin command), never for API callers, who only see their own organization.
SELECT * FROM organizations ORDER BY created_at, id;

-- name: BootstrapTokenBySecret :one
SELECT org_id, id FROM api_tokens WHERE secret_hash = @secret_hash;

-- name: SetTokenGrants :exec
UPDATE api_tokens SET grants = @grants WHERE id = @id;

-- name: CreateBootstrapToken :exec
INSERT INTO api_tokens (id, org_id, name, secret_hash, grants, expires_at, created_at)
VALUES (@id, @org_id, 'bootstrap', @secret_hash, @grants, NULL, @created_at);

-- name: LockBootstrap :exec
-- Serializes the first start of several replicas (released when the transaction ends).
SELECT pg_advisory_xact_lock(@key::bigint);
