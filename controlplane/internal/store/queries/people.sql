-- Members of an organization and invitations to it (people.go). @search matches as a
-- case-insensitive substring; "" matches everything.

-- name: CountMembers :one
SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.org_id = @org_id AND (@search::text = '' OR strpos(lower(u.email), lower(@search)) > 0
    OR strpos(lower(coalesce(u.first_name, '')), lower(@search)) > 0
    OR strpos(lower(coalesce(u.last_name, '')), lower(@search)) > 0);

-- name: ListMembers :many
SELECT u.id, u.email, u.first_name, u.last_name, u.image, u.created_at, m.role
FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.org_id = @org_id AND (@search::text = '' OR strpos(lower(u.email), lower(@search)) > 0
    OR strpos(lower(coalesce(u.first_name, '')), lower(@search)) > 0
    OR strpos(lower(coalesce(u.last_name, '')), lower(@search)) > 0)
ORDER BY m.created_at, u.id
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: RemoveMember :one
WITH removed AS (
    DELETE FROM memberships m WHERE m.org_id = @org_id AND m.user_id = @user_id RETURNING m.user_id)
SELECT u.email FROM removed r JOIN users u ON u.id = r.user_id;

-- name: CountPendingInvitations :one
SELECT count(*) FROM invitations
WHERE org_id = @org_id AND accepted_at IS NULL AND (@search::text = '' OR strpos(lower(email), lower(@search)) > 0);

-- name: ListPendingInvitations :many
SELECT id, email, role, created_at FROM invitations
WHERE org_id = @org_id AND accepted_at IS NULL AND (@search::text = '' OR strpos(lower(email), lower(@search)) > 0)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: LockOrganization :one
-- Serializes the invitations of one organization, so two cannot both take its last seat.
SELECT * FROM organizations WHERE id = @id FOR UPDATE;

-- name: InvitationStanding :one
-- Whether @email (case-insensitive) is a member's or has a pending invitation, and how many
-- seats (members plus pending invitations) the organization fills.
SELECT EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.org_id = @org_id AND lower(u.email) = lower(@email)) AS member,
    EXISTS (SELECT 1 FROM invitations i
        WHERE i.org_id = @org_id AND i.accepted_at IS NULL AND lower(i.email) = lower(@email)) AS invited,
    ((SELECT count(*) FROM memberships ms WHERE ms.org_id = @org_id)
        + (SELECT count(*) FROM invitations p WHERE p.org_id = @org_id AND p.accepted_at IS NULL))::bigint AS seats;

-- name: CreateInvitation :one
INSERT INTO invitations (id, org_id, email, role, token_hash, token_enc, invited_by, created_at)
VALUES (@id, @org_id, @email, @role, @token_hash, @token_enc, @invited_by, @created_at)
RETURNING id, email, role, created_at;

-- name: InvitationMail :one
SELECT i.email, i.role, o.name AS org_name, i.invited_by, i.token_enc
FROM invitations i JOIN organizations o ON o.id = i.org_id
WHERE i.org_id = @org_id AND i.id = @id AND i.accepted_at IS NULL;

-- name: PendingInvitationByToken :one
SELECT o.name AS org_name, i.email, i.role
FROM invitations i JOIN organizations o ON o.id = i.org_id
WHERE i.token_hash = @token_hash AND i.accepted_at IS NULL;

-- name: AcceptInvitation :one
WITH accepted AS (
    UPDATE invitations i SET accepted_at = @accepted_at::timestamptz
    WHERE i.token_hash = @token_hash AND i.accepted_at IS NULL
    RETURNING i.id, i.org_id, i.email, i.role)
SELECT a.id, a.org_id, o.name AS org_name, a.email, a.role
FROM accepted a JOIN organizations o ON o.id = a.org_id;

-- name: UserByEmail :one
-- Matched case-insensitively, so Bob@x and bob@x are one person; the oldest wins.
SELECT id FROM users WHERE lower(email) = lower(@email) ORDER BY created_at LIMIT 1;

-- name: CreateUser :exec
INSERT INTO users (id, email, created_at) VALUES (@id, @email, @created_at);

-- name: AddMembershipIfMissing :exec
INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (@org_id, @user_id, @role, @created_at)
ON CONFLICT (org_id, user_id) DO NOTHING;
