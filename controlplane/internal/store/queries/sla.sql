-- SLA reports (docs/detection.md): incidents, maintenance windows and run counters of the
-- checks of a report, never raw results. One check's report has queries of its own, on the
-- check's indexes; an organization's reads by organization.

-- name: SLAChecks :many
-- @check_id NULL: every check of the organization (in @project_id when given, Unassigned when
-- @unassigned).
SELECT c.id, c.name, c.created_at FROM checks c
WHERE c.org_id = @org_id
  AND (sqlc.narg(check_id)::uuid IS NULL OR c.id = sqlc.narg(check_id)::uuid)
  AND (sqlc.narg(project_id)::uuid IS NULL OR c.project_id = sqlc.narg(project_id)::uuid)
  AND (NOT @unassigned::bool OR c.project_id IS NULL)
ORDER BY c.created_at, c.id;

-- name: SLAOrgIncidents :many
SELECT i.check_id, i.started_at, i.ended_at FROM check_incidents i
WHERE i.org_id = @org_id AND i.started_at < @to_time
  AND (i.ended_at IS NULL OR i.ended_at > @from_time::timestamptz);

-- name: SLACheckIncidents :many
SELECT i.check_id, i.started_at, i.ended_at FROM check_incidents i
WHERE i.check_id = @check_id AND i.org_id = @org_id AND i.started_at < @to_time
  AND (i.ended_at IS NULL OR i.ended_at > @from_time::timestamptz);

-- name: SLAWindows :many
SELECT l.check_id, w.id, w.start_date, w.duration_minutes, w.timezone, w.days_of_week
FROM maintenance_window_checks l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
WHERE l.org_id = @org_id AND w.status = 'ENABLED'
  AND (sqlc.narg(check_id)::uuid IS NULL OR l.check_id = sqlc.narg(check_id)::uuid);

-- name: SLAOrgRuns :many
-- Whole folded months (check_stats_folded) in [@full_from, @full_to) from the monthly
-- counters, every other day of [@from_day, @to_day) from the daily ones.
SELECT x.check_id, sum(x.runs)::bigint AS runs, sum(x.failed_runs)::bigint AS failed_runs FROM (
    SELECT m.check_id, m.runs, m.failed_runs FROM check_monthly_stats m
    JOIN check_stats_folded f ON f.month = m.month
    WHERE m.org_id = @org_id AND m.month >= @full_from::date AND m.month < @full_to::date
    UNION ALL
    SELECT d.check_id, d.runs::bigint, d.failed_runs::bigint FROM check_daily_stats d
    WHERE d.org_id = @org_id AND d.day >= @from_day::date AND d.day < @to_day::date
      AND NOT (d.day >= @full_from::date AND d.day < @full_to::date
          AND date_trunc('month', d.day::timestamp)::date IN (SELECT month FROM check_stats_folded))) x
GROUP BY x.check_id;

-- name: SLACheckRuns :one
SELECT coalesce(sum(d.runs), 0)::bigint AS runs, coalesce(sum(d.failed_runs), 0)::bigint AS failed_runs
FROM check_daily_stats d
WHERE d.check_id = @check_id AND d.org_id = @org_id AND d.day >= @from_day::date AND d.day < @to_day::date;

-- name: MonthFolded :one
SELECT EXISTS (SELECT 1 FROM check_stats_folded WHERE month = @month::date) AS folded;

-- name: LockDailyStatsForFold :exec
-- Waits for the transactions counting verdicts to commit and holds new ones back until the
-- fold commits: a verdict is then either in the daily rows the fold sums, or counted after
-- it, when the month is marked folded and CountVerdicts adds it to the monthly row too.
LOCK TABLE check_daily_stats IN SHARE MODE;

-- name: MarkMonthFolded :execrows
INSERT INTO check_stats_folded (month) VALUES (@month::date) ON CONFLICT DO NOTHING;

-- name: FoldMonth :execrows
-- Every check's daily counters of @month; a row kept by the triggers before
-- 0027_monthly_stats_fold.sql is replaced.
INSERT INTO check_monthly_stats AS m (org_id, check_id, month, runs, failed_runs)
SELECT org_id, check_id, @month::date AS month, sum(runs), sum(failed_runs)
FROM check_daily_stats
WHERE day >= @month::date AND day < @month_end::date
GROUP BY org_id, check_id
ON CONFLICT (check_id, month) DO UPDATE SET runs = EXCLUDED.runs, failed_runs = EXCLUDED.failed_runs;
