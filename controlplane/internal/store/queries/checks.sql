-- Checks: create, read, change, delete, list, move. A check's configuration is its columns plus
-- spec, the model's document (pkg/check Document); the Basic-auth password is sealed apart, in
-- auth_password_enc.

-- name: CreateCheck :exec
INSERT INTO checks (id, org_id, project_id, kind, name, test_interval, timeout_ms, test_regions,
    alert_priority, confirmation_period_seconds, recovery_period_seconds,
    reminder_alert_interval_minutes, alerts, spec, auth_password_enc, region_quorum, depends_on, degraded_response_time_ms, created_at, updated_at)
VALUES (@id, @org_id, @project_id, @kind, @name, @test_interval, @timeout_ms, @test_regions,
    @alert_priority, @confirmation_period_seconds, @recovery_period_seconds,
    @reminder_alert_interval_minutes, @alerts, @spec, @auth_password_enc, @region_quorum, coalesce(@depends_on::text[], '{}')::uuid[], @degraded_response_time_ms, @created_at, @created_at);

-- name: GetCheck :one
-- With the check's enabled maintenance windows, so that one primary-key lookup also decides
-- MAINTENANCE.
SELECT sqlc.embed(c),
    (SELECT coalesce(json_agg(json_build_object('start', w.start_date, 'duration', w.duration_minutes,
            'tz', w.timezone, 'days', w.days_of_week)), '[]')
        FROM maintenance_window_checks l
        JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
        WHERE l.check_id = c.id AND l.org_id = c.org_id AND w.status = 'ENABLED')::jsonb AS maintenance_windows
FROM checks c
WHERE c.org_id = @org_id AND c.id = @id;

-- name: CheckKind :one
SELECT kind FROM checks WHERE org_id = @org_id AND id = @id;

-- name: LockCheck :one
-- NO KEY UPDATE: a change keeps the check's keys, so it need not wait for the key-share locks
-- that ingest's rows referencing the check take.
SELECT sqlc.embed(checks) FROM checks WHERE org_id = @org_id AND id = @id FOR NO KEY UPDATE;

-- name: UpdateCheck :execrows
UPDATE checks SET
    paused = @paused, muted = @muted, updated_at = @updated_at,
    kind = @kind, name = @name, test_interval = @test_interval, timeout_ms = @timeout_ms,
    test_regions = @test_regions, alert_priority = @alert_priority,
    confirmation_period_seconds = @confirmation_period_seconds,
    recovery_period_seconds = @recovery_period_seconds,
    reminder_alert_interval_minutes = @reminder_alert_interval_minutes, alerts = @alerts,
    spec = @spec, auth_password_enc = @auth_password_enc, region_quorum = @region_quorum,
    depends_on = coalesce(@depends_on::text[], '{}')::uuid[],
    degraded_response_time_ms = @degraded_response_time_ms
WHERE org_id = @org_id AND id = @id;

-- name: DeleteCheck :one
-- An empty kind deletes a check of any kind.
DELETE FROM checks WHERE org_id = @org_id AND id = @id AND (@kind::text = '' OR kind = @kind::text)
RETURNING name, kind;

-- The list: a count, and a page as a deferred join: the page's ids come from an index, so the
-- rows OFFSET skips cost an index entry each, not a heap fetch; only the page's rows are read,
-- with the fields the list shows: their maintenance windows and, for DNS and TCP checks, their
-- configuration (uptime and browser checks show only url, a column).
--
-- The organization's unfiltered list, the common one, has queries of its own, whose plan is the
-- same for every argument (the (org_id, created_at, id) index alone). The filtered queries name
-- each filter once: a project (project_id), Unassigned checks (unassigned), a case-insensitive
-- substring of name or url (search, lower-cased by the caller, '' for none), a status (status:
-- '' for all, PAUSED, MUTED, or a state of a check neither paused nor muted).

-- name: CountChecks :one
-- Kept by triggers on checks, in shards (0013).
SELECT coalesce(sum(checks), 0)::bigint AS checks FROM org_check_counts WHERE org_id = @org_id;

-- name: ListChecks :many
SELECT c.id, c.project_id, c.kind, c.name, c.url, c.state, c.paused, c.muted, c.last_queued, c.test_interval, c.created_at,
    (CASE WHEN c.kind IN ('DNS', 'TCP') THEN c.spec END)::jsonb AS spec,
    (SELECT coalesce(json_agg(json_build_object('start', w.start_date, 'duration', w.duration_minutes,
            'tz', w.timezone, 'days', w.days_of_week)), '[]')
        FROM maintenance_window_checks l
        JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
        WHERE l.check_id = c.id AND l.org_id = c.org_id AND w.status = 'ENABLED')::jsonb AS maintenance_windows,
    -- skipped_runs_24h, on skipped_runs' key (check_id, scheduled_at, region)
    (SELECT count(*) FROM skipped_runs s WHERE s.check_id = c.id AND s.scheduled_at > @skipped_since::timestamptz)::bigint AS skipped_runs
FROM checks c
-- The page's ids come from the index alone (an index-only scan, however deep the offset), and
-- their rows by key: as an array, which the planner looks up in (org_id, id). Joined to a
-- subquery instead, it hashed a sequential scan of every check of the organization (3-4 ms
-- at 10,000 checks, against 0.3 ms).
WHERE c.org_id = @org_id AND c.id = ANY(ARRAY(
      SELECT p.id FROM checks p WHERE p.org_id = @org_id
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT @page_limit::bigint OFFSET @page_offset::bigint))
ORDER BY c.created_at DESC, c.id DESC;

-- name: CountFilteredChecks :one
SELECT count(*) FROM checks p
WHERE p.org_id = @org_id
  AND (sqlc.narg(project_id)::uuid IS NULL OR p.project_id = sqlc.narg(project_id)::uuid)
  AND (NOT @unassigned::boolean OR p.project_id IS NULL)
  AND (@search::text = '' OR strpos(lower(p.name), @search::text) > 0 OR strpos(lower(coalesce(p.url, '')), @search::text) > 0)
  AND CASE @status::text
        WHEN '' THEN true
        WHEN 'PAUSED' THEN p.paused
        WHEN 'MUTED' THEN p.muted AND NOT p.paused
        ELSE p.state = @status::text AND NOT p.paused AND NOT p.muted
      END;

-- name: ListFilteredChecks :many
SELECT c.id, c.project_id, c.kind, c.name, c.url, c.state, c.paused, c.muted, c.last_queued, c.test_interval, c.created_at,
    (CASE WHEN c.kind IN ('DNS', 'TCP') THEN c.spec END)::jsonb AS spec,
    (SELECT coalesce(json_agg(json_build_object('start', w.start_date, 'duration', w.duration_minutes,
            'tz', w.timezone, 'days', w.days_of_week)), '[]')
        FROM maintenance_window_checks l
        JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
        WHERE l.check_id = c.id AND l.org_id = c.org_id AND w.status = 'ENABLED')::jsonb AS maintenance_windows,
    (SELECT count(*) FROM skipped_runs s WHERE s.check_id = c.id AND s.scheduled_at > @skipped_since::timestamptz)::bigint AS skipped_runs
FROM checks c
WHERE c.org_id = @org_id AND c.id = ANY(ARRAY(
      SELECT p.id FROM checks p
      WHERE p.org_id = @org_id
      AND (sqlc.narg(project_id)::uuid IS NULL OR p.project_id = sqlc.narg(project_id)::uuid)
      AND (NOT @unassigned::boolean OR p.project_id IS NULL)
      AND (@search::text = '' OR strpos(lower(p.name), @search::text) > 0 OR strpos(lower(coalesce(p.url, '')), @search::text) > 0)
      AND CASE @status::text
            WHEN '' THEN true
            WHEN 'PAUSED' THEN p.paused
            WHEN 'MUTED' THEN p.muted AND NOT p.paused
            ELSE p.state = @status::text AND NOT p.paused AND NOT p.muted
          END
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT @page_limit::bigint OFFSET @page_offset::bigint))
ORDER BY c.created_at DESC, c.id DESC;

-- name: LockCheckForMove :one
SELECT project_id, name FROM checks WHERE org_id = @org_id AND id = @id FOR NO KEY UPDATE;

-- name: SetCheckProject :exec
UPDATE checks SET project_id = @project_id, updated_at = @updated_at WHERE org_id = @org_id AND id = @id;

-- Variable references: which variables a check's saved configuration uses.

-- name: ClearCheckVarRefs :exec
DELETE FROM check_env_refs WHERE org_id = @org_id AND check_id = @check_id;

-- name: AddCheckVarRefs :exec
INSERT INTO check_env_refs (org_id, check_id, env_var_id)
SELECT @org_id, @check_id, unnest(@env_var_ids::uuid[]);

-- name: KeepCheckVarRefs :exec
-- Drops the check's references to variables whose names are not in names.
DELETE FROM check_env_refs r USING env_vars v
WHERE r.org_id = @org_id AND r.check_id = @check_id AND v.org_id = r.org_id AND v.id = r.env_var_id
  AND NOT (v.name = ANY(@names::text[]));

-- name: CheckVarRefs :many
SELECT v.id, v.name, v.type FROM check_env_refs r
JOIN env_vars v ON v.org_id = r.org_id AND v.id = r.env_var_id
WHERE r.org_id = @org_id AND r.check_id = @check_id;

-- name: ScopeVarsByName :many
-- The variables of one scope (a project, or the organization pool when project_id is NULL)
-- with the given names.
SELECT id, name, type FROM env_vars
WHERE org_id = @org_id AND project_id IS NOT DISTINCT FROM sqlc.narg(project_id)::uuid AND name = ANY(@names::text[]);

-- name: ShareScopeVarsByName :many
-- ScopeVarsByName, keeping the variables from being renamed or deleted until the transaction ends.
SELECT id, name, type FROM env_vars
WHERE org_id = @org_id AND project_id IS NOT DISTINCT FROM sqlc.narg(project_id)::uuid AND name = ANY(@names::text[])
ORDER BY id FOR SHARE;
