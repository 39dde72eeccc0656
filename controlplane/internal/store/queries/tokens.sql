-- API tokens, access tokens and what a bearer secret resolves to (tokens.go, credentials.go).
-- A token's secret_hash never leaves the store.

-- name: CountAPITokens :one
-- @pattern is an ILIKE pattern on the name (substringPattern).
SELECT count(*) FROM api_tokens WHERE org_id = @org_id AND name ILIKE @pattern;

-- name: ListAPITokens :many
SELECT id, org_id, name, grants, expires_at, created_at FROM api_tokens
WHERE org_id = @org_id AND name ILIKE @pattern
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: GetAPIToken :one
SELECT id, org_id, name, grants, expires_at, created_at FROM api_tokens WHERE org_id = @org_id AND id = @id;

-- name: DeleteAPIToken :one
DELETE FROM api_tokens WHERE org_id = @org_id AND id = @id
RETURNING id, org_id, name, grants, expires_at, created_at;

-- name: CreateAPIToken :one
INSERT INTO api_tokens (id, org_id, name, secret_hash, grants, expires_at, created_at)
VALUES (@id, @org_id, @name, @secret_hash, @grants, @expires_at, @created_at)
RETURNING id, org_id, name, grants, expires_at, created_at;

-- name: APITokenBySecret :one
SELECT id, org_id, name, grants, expires_at FROM api_tokens WHERE secret_hash = @secret_hash;

-- name: AccessTokenBySecret :one
-- With the user's e-mail and every organization the user is a member of.
SELECT t.id, t.user_id, u.email, t.scopes, t.expires_at,
    coalesce(array_agg(m.org_id ORDER BY m.org_id) FILTER (WHERE m.org_id IS NOT NULL), '{}')::uuid[] AS org_ids
FROM access_tokens t JOIN users u ON u.id = t.user_id
LEFT JOIN memberships m ON m.user_id = t.user_id
WHERE t.secret_hash = @secret_hash
GROUP BY t.id, u.email;

-- name: CreateAccessToken :exec
INSERT INTO access_tokens (id, user_id, secret_hash, scopes, expires_at, created_at)
VALUES (@id, @user_id, @secret_hash, @scopes, @expires_at, @created_at);

-- name: EnsureUser :one
INSERT INTO users (id, email, created_at) VALUES (@id, @email, @created_at)
ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
RETURNING *;

-- name: UpsertMembership :exec
INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (@org_id, @user_id, @role, @created_at)
ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role;

-- name: NotifyAuthChange :exec
-- Tells every replica's authenticator that a credential lost (or changed) what it grants;
-- PostgreSQL delivers it when the transaction commits, and drops it when it rolls back.
-- @payload is "token:<id>" or "user:<id>" (revocations.go).
SELECT pg_notify('vantage_auth', @payload::text);

-- name: ListenAuthChanges :exec
LISTEN vantage_auth;

-- name: ListenAuthAcks :exec
LISTEN vantage_auth_ack;

-- name: AckAuthChange :exec
-- A listener tells the others that it applied a vantage_auth notification (same payload).
SELECT pg_notify('vantage_auth_ack', @payload::text);

-- name: CountAuthListeners :one
-- The sessions of this database listening for credential changes (ListenAuthChanges sets
-- their application_name): one per replica.
SELECT count(*) FROM pg_catalog.pg_stat_activity
WHERE application_name = @application_name::text AND datname = current_database();
