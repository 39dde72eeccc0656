-- The scheduler's queries: the one place where the store reads across organizations (the
-- scheduler serves every tenant at once). They never return a row to a tenant; each row
-- carries its org_id, and SetLastQueued matches on (org_id, id).

-- name: SchedulableChecksPage :many
SELECT sqlc.embed(checks) FROM checks WHERE NOT paused AND id > @after ORDER BY id LIMIT @page_limit::bigint;

-- name: SchedulableChecksByID :many
SELECT sqlc.embed(checks) FROM checks WHERE NOT paused AND id = ANY(@ids::uuid[]);

-- name: VariablesInScopes :many
-- The variables named in several scopes at once: scope i is organization org_ids[i] and
-- project project_ids[i] (the arrays are unnested in lockstep), where the nil uuid stands for the organization pool.
SELECT e.org_id, e.project_id, e.name, e.type, e.value_enc
FROM env_vars e
JOIN (SELECT unnest(@org_ids::uuid[]) AS org_id, unnest(@project_ids::uuid[]) AS project_id,
             unnest(@names::text[]) AS name) AS w
  ON e.org_id = w.org_id AND e.name = w.name
 AND e.project_id IS NOT DISTINCT FROM nullif(w.project_id, '00000000-0000-0000-0000-000000000000'::uuid);

-- name: SetLastQueued :exec
-- Moves last_queued forward (never back). Rows are locked in id order, the order the evaluator
-- locks checks in, so the two never deadlock.
WITH m AS (
    SELECT u.org_id, u.id, max(u.at) AS at
    FROM (SELECT unnest(@org_ids::uuid[]) AS org_id, unnest(@ids::uuid[]) AS id,
                 unnest(@ats::timestamptz[]) AS at) AS u
    GROUP BY u.org_id, u.id
), locked AS MATERIALIZED (
    SELECT c.id FROM checks c JOIN m ON c.org_id = m.org_id AND c.id = m.id
    WHERE c.last_queued IS NULL OR c.last_queued < m.at
    ORDER BY c.id
    FOR NO KEY UPDATE OF c
)
UPDATE checks c SET last_queued = m.at
FROM m, locked
WHERE c.id = locked.id AND c.org_id = m.org_id AND c.id = m.id
  AND (c.last_queued IS NULL OR c.last_queued < m.at);
