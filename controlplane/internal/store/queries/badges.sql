-- Public badges of checks (badges.go). The owner's reads and writes carry the organization;
-- the public lookup goes by the token's hash, which is the badge's only credential.

-- name: GetCheckBadge :one
SELECT token_enc FROM check_badges WHERE org_id = @org_id AND check_id = @check_id;

-- name: CreateCheckBadge :one
-- A badge for a check of the organization; no row when the check is not the organization's or
-- already has a badge (the caller tells which).
INSERT INTO check_badges (org_id, check_id, token_hash, token_enc, created_at)
SELECT c.org_id, c.id, @token_hash, @token_enc, @created_at FROM checks c
WHERE c.org_id = @org_id AND c.id = @check_id
ON CONFLICT (check_id) DO NOTHING
RETURNING token_enc;

-- name: DeleteCheckBadge :execrows
DELETE FROM check_badges WHERE org_id = @org_id AND check_id = @check_id;

-- name: BadgeCheckExists :one
SELECT EXISTS (SELECT 1 FROM checks WHERE org_id = @org_id AND id = @check_id);

-- name: BadgeByTokenHash :one
SELECT org_id, check_id FROM check_badges WHERE token_hash = @token_hash;

-- name: BadgeResponseTime :one
-- The median response time of the check's passing final attempts since @since, read through
-- the results' primary key (check_id, checked_at); results is how many there were.
SELECT count(*)::bigint AS results,
    coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.response_time_ms), 0)::float8 AS p50_ms
FROM check_results r
WHERE r.check_id = @check_id AND r.org_id = @org_id AND r.checked_at >= @since::timestamptz
  AND r.is_final_attempt AND r.passing;
