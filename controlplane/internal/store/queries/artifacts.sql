-- name: ResultArtifactIndex :one
-- The index of the artifacts stored with one result of one check of the organization; NULL
-- when it has none. The checked_at range keeps the lookup to the result's partitions (see
-- ResultArtifacts in artifacts.go).
SELECT artifact_index FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND id = @id
  AND checked_at >= @checked_from AND checked_at < @checked_to;

-- name: ResultArtifactBody :one
-- One artifact's bytes: its slice of the result's artifacts (from counts from 1).
SELECT substring(artifacts, sqlc.arg(byte_from)::int, sqlc.arg(byte_length)::int)::bytea AS body FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND id = @id
  AND checked_at >= @checked_from AND checked_at < @checked_to
  AND artifacts IS NOT NULL;
