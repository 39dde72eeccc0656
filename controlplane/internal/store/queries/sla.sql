-- SLA reports (docs/detection.md): incidents, maintenance windows and daily rollups of the
-- checks of a report, never raw results. @check_id NULL: every check of the organization (in
-- @project_id when given, Unassigned when @unassigned).

-- name: SLAChecks :many
SELECT c.id, c.name, c.created_at FROM checks c
WHERE c.org_id = @org_id
  AND (sqlc.narg(check_id)::uuid IS NULL OR c.id = sqlc.narg(check_id)::uuid)
  AND (sqlc.narg(project_id)::uuid IS NULL OR c.project_id = sqlc.narg(project_id)::uuid)
  AND (NOT @unassigned::bool OR c.project_id IS NULL)
ORDER BY c.created_at, c.id;

-- name: SLAIncidents :many
SELECT i.check_id, i.started_at, i.ended_at FROM check_incidents i
WHERE i.org_id = @org_id AND i.started_at < @to_time
  AND (i.ended_at IS NULL OR i.ended_at > @from_time::timestamptz)
  AND (sqlc.narg(check_id)::uuid IS NULL OR i.check_id = sqlc.narg(check_id)::uuid);

-- name: SLAWindows :many
SELECT l.check_id, w.id, w.start_date, w.duration_minutes, w.timezone, w.days_of_week
FROM maintenance_window_checks l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
WHERE l.org_id = @org_id AND w.status = 'ENABLED'
  AND (sqlc.narg(check_id)::uuid IS NULL OR l.check_id = sqlc.narg(check_id)::uuid);

-- name: SLARollups :many
SELECT s.check_id, sum(s.runs)::bigint AS runs, sum(s.failed_runs)::bigint AS failed_runs
FROM check_daily_stats s
WHERE s.org_id = @org_id AND s.day >= @from_day::date AND s.day <= @to_day::date
  AND (sqlc.narg(check_id)::uuid IS NULL OR s.check_id = sqlc.narg(check_id)::uuid)
GROUP BY s.check_id;
