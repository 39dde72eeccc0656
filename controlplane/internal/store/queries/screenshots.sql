-- name: ResultScreenshot :one
-- The screenshot stored with one result of one check of the organization. The checked_at range
-- lets PostgreSQL look in the result's partitions only (see ResultScreenshot in screenshots.go).
SELECT screenshot FROM check_results
WHERE org_id = @org_id AND check_id = @check_id AND id = @id
  AND checked_at >= @checked_from AND checked_at < @checked_to
  AND screenshot IS NOT NULL;
