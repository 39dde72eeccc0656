-- The scheduler's queries: the one place where the store reads across organizations (the
-- scheduler serves every tenant at once). They never return a row to a tenant; each row
-- carries its org_id.

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

-- name: SchedulerProgress :many
SELECT handled_through FROM scheduler_progress;

-- name: SetSchedulerProgress :exec
-- Moves the scheduler's progress forward (never back: a deposed leader's late write loses).
INSERT INTO scheduler_progress (singleton, handled_through) VALUES (true, @handled_through)
ON CONFLICT (singleton) DO UPDATE SET handled_through = GREATEST(scheduler_progress.handled_through, EXCLUDED.handled_through);
