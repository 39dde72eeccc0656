-- name: CountStatusPages :one
SELECT count(*) FROM status_pages p
WHERE p.org_id = @org_id
  AND (@search::text = '' OR strpos(lower(p.name), lower(@search::text)) > 0 OR strpos(lower(p.subdomain), lower(@search::text)) > 0);

-- name: ListStatusPages :many
-- A page comes with what its overall status is derived from (the statuses of its components,
-- the impacts of its active incidents, whether a scheduled maintenance is in progress) and the
-- organization's plan; package statuspage derives.
SELECT p.id, p.org_id, p.name, p.subdomain, p.custom_domain, p.password_hash, p.description,
    p.hide_from_search_engines, p.allowed_ips, p.favicon_url, p.logo_url, p.dark_logo_url,
    coalesce((SELECT array_agg(c.status) FROM status_page_components c WHERE c.status_page_id = p.id), '{}')::text[] AS component_statuses,
    coalesce((SELECT array_agg(i.impact) FROM status_page_incidents i WHERE i.status_page_id = p.id
        AND i.ended IS NULL AND i.maintenance_state IS NULL), '{}')::text[] AS active_impacts,
    EXISTS (SELECT 1 FROM status_page_incidents i WHERE i.status_page_id = p.id AND i.maintenance_state = 'IN_PROGRESS') AS maintenance_in_progress,
    o.plan
FROM status_pages p JOIN organizations o ON o.id = p.org_id
WHERE p.org_id = @org_id
  AND (@search::text = '' OR strpos(lower(p.name), lower(@search::text)) > 0 OR strpos(lower(p.subdomain), lower(@search::text)) > 0)
ORDER BY p.created_at DESC, p.id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetStatusPage :one
SELECT p.id, p.org_id, p.name, p.subdomain, p.custom_domain, p.password_hash, p.description,
    p.hide_from_search_engines, p.allowed_ips, p.favicon_url, p.logo_url, p.dark_logo_url,
    coalesce((SELECT array_agg(c.status) FROM status_page_components c WHERE c.status_page_id = p.id), '{}')::text[] AS component_statuses,
    coalesce((SELECT array_agg(i.impact) FROM status_page_incidents i WHERE i.status_page_id = p.id
        AND i.ended IS NULL AND i.maintenance_state IS NULL), '{}')::text[] AS active_impacts,
    EXISTS (SELECT 1 FROM status_page_incidents i WHERE i.status_page_id = p.id AND i.maintenance_state = 'IN_PROGRESS') AS maintenance_in_progress,
    o.plan
FROM status_pages p JOIN organizations o ON o.id = p.org_id
WHERE p.org_id = @org_id AND p.id = @id;

-- name: StatusPageBySubdomain :one
-- The page served at a subdomain (case-insensitive), whichever organization owns it.
SELECT org_id, id FROM status_pages WHERE lower(subdomain) = lower(@subdomain::text);

-- name: StatusPageByCustomDomain :one
-- The page served at a custom domain (stored in lower case), whichever organization owns it,
-- once the domain is verified.
SELECT org_id, id FROM status_pages WHERE custom_domain = lower(@custom_domain::text)
  AND custom_domain_verified_at IS NOT NULL;

-- name: CustomDomainVerification :one
SELECT custom_domain, custom_domain_token, custom_domain_verified_at FROM status_pages
WHERE org_id = @org_id AND id = @id;

-- name: MarkCustomDomainVerified :execrows
-- Only the domain and token that were checked: a change meanwhile wins. The record was just
-- found: the re-check starts over.
UPDATE status_pages SET custom_domain_verified_at = @now, custom_domain_checked_at = @now, custom_domain_missing_since = NULL
WHERE org_id = @org_id AND id = @id AND custom_domain = @custom_domain AND custom_domain_token = @token;

-- name: LockCustomDomain :exec
-- Serializes, until the transaction ends, the claims and verifications of one domain across
-- organizations: a claim then sees a verification that committed before it, and a
-- verification releases every claim that committed before it.
SELECT pg_advisory_xact_lock(hashtext('vantage.custom_domain.' || @custom_domain::text));

-- name: CustomDomainVerifiedElsewhere :one
-- Whether a page other than @id, of any organization, has @custom_domain verified. It looks
-- across organizations on purpose: a verified domain is exclusive, and it tells nothing secret
-- (the page answers on it). Unverified claims are not looked at.
SELECT EXISTS (SELECT 1 FROM status_pages WHERE custom_domain = @custom_domain::text AND id <> @id
    AND custom_domain_verified_at IS NOT NULL);

-- name: ReleaseCustomDomainClaims :many
-- Once page @id verified @custom_domain, every other page's pending claim of it goes back to
-- NONE. The one status page write across organizations: each page released is told with an
-- event in its own organization.
UPDATE status_pages SET custom_domain = NULL, custom_domain_token = NULL, custom_domain_checked_at = NULL,
    custom_domain_missing_since = NULL, updated_at = @now
WHERE custom_domain = @custom_domain::text AND id <> @id AND custom_domain_verified_at IS NULL
RETURNING org_id, id, name;

-- name: ClaimDomainRechecks :many
-- Across organizations (the re-check's own scan): up to @max_rows verified domains last looked
-- for (or verified) at or before @due_before, marked as looked for at @now so that the other
-- replicas skip them.
UPDATE status_pages p SET custom_domain_checked_at = @now::timestamptz
FROM (SELECT id FROM status_pages WHERE custom_domain IS NOT NULL AND custom_domain_verified_at IS NOT NULL
        AND coalesce(custom_domain_checked_at, custom_domain_verified_at) <= @due_before::timestamptz
    ORDER BY coalesce(custom_domain_checked_at, custom_domain_verified_at), id
    LIMIT @max_rows::int FOR UPDATE SKIP LOCKED) due
WHERE p.id = due.id
RETURNING p.org_id, p.id, p.custom_domain::text AS custom_domain, p.custom_domain_token::text AS token;

-- name: MarkDomainRecordFound :exec
-- The re-check found the verified domain's record: it is no longer missing.
UPDATE status_pages SET custom_domain_missing_since = NULL
WHERE org_id = @org_id AND id = @id AND custom_domain = @custom_domain::text AND custom_domain_verified_at IS NOT NULL;

-- name: MarkDomainRecordMissing :one
-- The re-check did not find the verified domain's record: it is missing since now unless it
-- already was, and once missing since @lost_before or earlier the domain is no longer
-- verified (lost: this statement unverified it; no row when the domain changed or was
-- unverified meanwhile).
UPDATE status_pages SET custom_domain_missing_since = coalesce(custom_domain_missing_since, @now::timestamptz),
    custom_domain_verified_at = CASE WHEN coalesce(custom_domain_missing_since, @now::timestamptz) <= @lost_before::timestamptz THEN NULL
        ELSE custom_domain_verified_at END
WHERE org_id = @org_id AND id = @id AND custom_domain = @custom_domain::text AND custom_domain_verified_at IS NOT NULL
RETURNING name, custom_domain_missing_since AS missing_since, (custom_domain_verified_at IS NULL)::bool AS lost;

-- name: StatusPageInOtherOrg :one
-- The one status page query that looks across organizations: the subscriber routes answer 403
-- rather than 404 for a page of another organization (api/openapi).
SELECT EXISTS (SELECT 1 FROM status_pages WHERE id = @id AND org_id <> @org_id);

-- name: StatusPageExists :one
SELECT EXISTS (SELECT 1 FROM status_pages WHERE org_id = @org_id AND id = @id);

-- name: StatusPageName :one
SELECT name, subdomain FROM status_pages WHERE org_id = @org_id AND id = @id;

-- name: LockStatusPage :one
-- Serializes the writes that keep a page's sort orders and incident timelines consistent.
SELECT name, subdomain FROM status_pages WHERE org_id = @org_id AND id = @id FOR NO KEY UPDATE;

-- name: CreateStatusPage :exec
INSERT INTO status_pages (id, org_id, name, subdomain, custom_domain, password_hash, description,
    hide_from_search_engines, allowed_ips, created_at, updated_at, custom_domain_token)
VALUES (@id, @org_id, @name, @subdomain, nullif(sqlc.narg(custom_domain)::text, ''), sqlc.narg(password_hash)::bytea,
    nullif(sqlc.narg(description)::text, ''), @hide_from_search_engines, sqlc.narg(allowed_ips)::text[], @now, @now,
    CASE WHEN nullif(sqlc.narg(custom_domain)::text, '') IS NULL THEN NULL ELSE @domain_token::text END);

-- name: UpdateStatusPage :execrows
-- custom_domain and description: NULL keeps, '' clears. password_hash and allowed_ips are
-- replaced (NULL removes) only when their set_ flag is true. A changed custom domain takes
-- domain_token and must be verified again.
UPDATE status_pages SET name = @name, subdomain = @subdomain,
    custom_domain_token = CASE WHEN sqlc.narg(custom_domain)::text IS NULL THEN custom_domain_token
        WHEN nullif(sqlc.narg(custom_domain)::text, '') IS NULL THEN NULL
        WHEN custom_domain IS DISTINCT FROM sqlc.narg(custom_domain)::text THEN @domain_token::text
        ELSE custom_domain_token END,
    custom_domain_verified_at = CASE WHEN sqlc.narg(custom_domain)::text IS NULL THEN custom_domain_verified_at
        WHEN custom_domain IS DISTINCT FROM nullif(sqlc.narg(custom_domain)::text, '') THEN NULL
        ELSE custom_domain_verified_at END,
    custom_domain = CASE WHEN sqlc.narg(custom_domain)::text IS NULL THEN custom_domain ELSE nullif(sqlc.narg(custom_domain)::text, '') END,
    password_hash = CASE WHEN @set_password::bool THEN sqlc.narg(password_hash)::bytea ELSE password_hash END,
    description = CASE WHEN sqlc.narg(description)::text IS NULL THEN description ELSE nullif(sqlc.narg(description)::text, '') END,
    hide_from_search_engines = coalesce(sqlc.narg(hide_from_search_engines)::bool, hide_from_search_engines),
    allowed_ips = CASE WHEN @set_allowed_ips::bool THEN sqlc.narg(allowed_ips)::text[] ELSE allowed_ips END,
    updated_at = @now
WHERE org_id = @org_id AND id = @id;

-- name: DeleteStatusPage :one
DELETE FROM status_pages WHERE org_id = @org_id AND id = @id RETURNING name;
