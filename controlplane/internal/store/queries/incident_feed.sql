-- The organization's incident feed (GET /v1/incidents): the incidents of its checks and, since
-- heartbeats keep no incident records, its DOWN heartbeats as open entries started when their
-- state last changed. Each part is read in the feed's order, newest started_at first, then id
-- descending (the indexes of migration 0023); the store puts open entries before resolved ones.
-- include_checks and include_heartbeats are the caller's grants; check_id narrows the feed to one
-- check (and so leaves heartbeats out).

-- name: CountOpenFeed :one
SELECT ((SELECT count(*) FROM check_incidents i
        WHERE i.org_id = @org_id AND i.ended_at IS NULL AND @include_checks::boolean
          AND (sqlc.narg(check_id)::uuid IS NULL OR i.check_id = sqlc.narg(check_id)))
     + (SELECT count(*) FROM heartbeats h
        WHERE h.org_id = @org_id AND h.state = 'DOWN' AND @include_heartbeats::boolean
          AND sqlc.narg(check_id)::uuid IS NULL))::bigint AS total;

-- name: ListOpenFeed :many
SELECT * FROM (
    SELECT i.id, 'CHECK'::text AS source, i.check_id AS source_id, c.name, c.kind, i.started_at, i.caused_by
    FROM check_incidents i JOIN checks c ON c.org_id = i.org_id AND c.id = i.check_id
    WHERE i.org_id = @org_id AND i.ended_at IS NULL AND @include_checks::boolean
      AND (sqlc.narg(check_id)::uuid IS NULL OR i.check_id = sqlc.narg(check_id))
    UNION ALL
    SELECT h.id, 'HEARTBEAT'::text, h.id, h.name, 'HEARTBEAT'::text, coalesce(h.state_changed_at, h.updated_at), NULL::uuid
    FROM heartbeats h
    WHERE h.org_id = @org_id AND h.state = 'DOWN' AND @include_heartbeats::boolean
      AND sqlc.narg(check_id)::uuid IS NULL
) feed
ORDER BY started_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;

-- name: CountResolvedFeed :one
SELECT count(*) FROM check_incidents i
WHERE i.org_id = @org_id AND i.ended_at IS NOT NULL AND @include_checks::boolean
  AND (sqlc.narg(check_id)::uuid IS NULL OR i.check_id = sqlc.narg(check_id));

-- name: ListResolvedFeed :many
SELECT i.id, i.check_id, c.name, c.kind, i.started_at, i.ended_at, i.caused_by
FROM check_incidents i JOIN checks c ON c.org_id = i.org_id AND c.id = i.check_id
WHERE i.org_id = @org_id AND i.ended_at IS NOT NULL AND @include_checks::boolean
  AND (sqlc.narg(check_id)::uuid IS NULL OR i.check_id = sqlc.narg(check_id))
ORDER BY i.started_at DESC, i.id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;
