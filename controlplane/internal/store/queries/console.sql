-- The web console's sessions and one-time sign-in codes (console_sessions and
-- console_signin_codes, migration 0020; console.go). Only hashes of their secrets are stored.
-- A session belongs to no single organization (a user's covers several): it is found by its
-- secret alone, and every request it makes is scoped by the credential behind it.

-- name: CreateConsoleSession :exec
INSERT INTO console_sessions (id, secret_hash, csrf_hash, credential_hash, minted_token_id, org_id, created_at, expires_at)
VALUES (@id, @secret_hash, @csrf_hash, @credential_hash, @minted_token_id, @org_id, @created_at, @expires_at);

-- name: ConsoleSessionBySecret :one
SELECT id, csrf_hash, credential_hash, org_id, expires_at FROM console_sessions
WHERE secret_hash = @secret_hash AND expires_at > @now::timestamptz;

-- name: SetConsoleSessionOrg :execrows
UPDATE console_sessions SET org_id = @org_id
WHERE secret_hash = @secret_hash AND expires_at > @now::timestamptz;

-- name: DeleteConsoleSession :one
DELETE FROM console_sessions WHERE secret_hash = @secret_hash RETURNING minted_token_id;

-- name: DeleteAccessToken :exec
DELETE FROM access_tokens WHERE id = @id;

-- name: SweepConsoleSessions :many
-- Expired sessions, and the access tokens minted for them (which expire with them anyway).
DELETE FROM console_sessions WHERE expires_at <= @now::timestamptz RETURNING minted_token_id;

-- name: SweepSignInCodes :exec
DELETE FROM console_signin_codes WHERE expires_at <= @now::timestamptz;

-- name: CreateSignInCode :exec
INSERT INTO console_signin_codes (code_hash, credential_hash, user_id, created_at, expires_at)
VALUES (@code_hash, @credential_hash, @user_id, @created_at, @expires_at);

-- name: TakeSignInCode :one
-- Used once: the code is deleted as it is read.
DELETE FROM console_signin_codes WHERE code_hash = @code_hash AND expires_at > @now::timestamptz
RETURNING credential_hash, user_id;

-- name: SignInUserByEmail :one
-- A user who can sign in: a member of at least one organization, matched case-insensitively
-- (the oldest of equal addresses, as UserByEmail). admin is whether every membership is ADMIN;
-- org_ids are the user's organizations.
SELECT u.id, u.email, bool_and(m.role = 'ADMIN')::boolean AS admin,
    array_agg(m.org_id ORDER BY m.org_id)::uuid[] AS org_ids
FROM users u JOIN memberships m ON m.user_id = u.id
WHERE lower(u.email) = lower(@email)
GROUP BY u.id ORDER BY u.created_at LIMIT 1;

-- name: SignInUserByID :one
SELECT u.id, u.email, bool_and(m.role = 'ADMIN')::boolean AS admin,
    array_agg(m.org_id ORDER BY m.org_id)::uuid[] AS org_ids
FROM users u JOIN memberships m ON m.user_id = u.id
WHERE u.id = @id
GROUP BY u.id;

-- name: OrganizationNames :many
-- The names of organizations a credential covers (the ids come from the credential).
SELECT id, name FROM organizations WHERE id = ANY(@ids::uuid[]) ORDER BY name, id;
