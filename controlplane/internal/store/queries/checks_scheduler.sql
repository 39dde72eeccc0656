-- The scheduler's queries: the one place where the store reads across organizations (the
-- scheduler serves every tenant at once). They never return a row to a tenant; each row
-- carries its org_id.

-- name: SchedulableChecksPage :many
-- A page of the active checks of some shards (shard.Of, computed here as in Go).
SELECT sqlc.embed(checks) FROM checks
WHERE NOT paused AND id > @after AND get_byte(sha256(uuid_send(id)), 0) = ANY(@shards::int[])
ORDER BY id LIMIT @page_limit::bigint;

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

-- name: ShardProgress :many
-- How far the shards' runs were handled; a shard without a row has never been scheduled.
SELECT shard::int AS shard, handled_through FROM scheduler_shard_progress
WHERE shard = ANY(@shards::int[]);

-- name: AllShardProgress :many
SELECT shard::int AS shard, handled_through FROM scheduler_shard_progress;

-- name: SetShardProgress :exec
-- Moves the shards' progress forward (never back: a former owner's late write loses).
INSERT INTO scheduler_shard_progress AS p (shard, handled_through)
SELECT s::smallint, @handled_through::timestamptz FROM unnest(@shards::int[]) AS s
ON CONFLICT (shard) DO UPDATE SET handled_through = GREATEST(p.handled_through, EXCLUDED.handled_through);
