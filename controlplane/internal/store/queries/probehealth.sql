-- Probe health (docs/detection.md "Probe-health-aware evaluation").

-- name: RegionFailureStats :many
-- Per region, over the final attempts checked since @since: the checks it probed, those it
-- failed in a run that another region passed ("lone" failures), and their organizations. The
-- agent's own failures are left out.
WITH recent AS (
    SELECT r.org_id, r.check_id, r.job_id, r.region, r.passing FROM check_results r
    WHERE r.checked_at >= @since AND r.is_final_attempt AND r.failure_source IS DISTINCT FROM 'AGENT'),
per_check AS (
    SELECT a.region, a.org_id, a.check_id,
        bool_or(NOT a.passing AND EXISTS (SELECT 1 FROM recent o WHERE o.job_id = a.job_id AND o.region <> a.region AND o.passing)) AS lone
    FROM recent a GROUP BY a.region, a.org_id, a.check_id)
SELECT p.region, count(*)::int AS checks, (count(*) FILTER (WHERE p.lone))::int AS lone,
    (count(DISTINCT p.org_id) FILTER (WHERE p.lone))::int AS orgs
FROM per_check p GROUP BY p.region ORDER BY p.region;

-- name: LockRegionHealth :one
INSERT INTO region_health AS h (region, changed_at) VALUES (@region, @now)
ON CONFLICT (region) DO UPDATE SET region = h.region
RETURNING h.region, h.unhealthy_since, h.reason, h.cause;

-- name: SetRegionUnhealthy :exec
UPDATE region_health SET unhealthy_since = @now::timestamptz, reason = @reason, cause = @cause, changed_at = @now::timestamptz WHERE region = @region;

-- name: SetRegionHealthy :exec
UPDATE region_health SET unhealthy_since = NULL, reason = '', cause = 'checks', changed_at = @now WHERE region = @region;

-- name: OpenUnhealthyPeriod :exec
INSERT INTO region_unhealthy_periods (region, started_at, reason, cause) VALUES (@region, @now, @reason, @cause)
ON CONFLICT DO NOTHING;

-- name: CloseUnhealthyPeriod :exec
UPDATE region_unhealthy_periods SET ended_at = @now::timestamptz WHERE region = @region AND ended_at IS NULL;

-- name: UnhealthyRegions :many
SELECT region, unhealthy_since, reason, cause FROM region_health WHERE unhealthy_since IS NOT NULL ORDER BY region;

-- name: RegionHealthAll :many
SELECT region, unhealthy_since, reason, changed_at FROM region_health ORDER BY region;

-- name: UpsertCanary :exec
-- An agent's last canary round replaces its previous one.
INSERT INTO agent_canaries (agent_id, regions, checked_at, received_at, targets, failing, failing_targets,
    agent_healthy, agent_reason, clock_offset_ms)
VALUES (@agent_id, @regions::text[], @checked_at, @received_at, @targets, @failing, @failing_targets::text[],
    @agent_healthy, @agent_reason, @clock_offset_ms)
ON CONFLICT (agent_id) DO UPDATE SET regions = EXCLUDED.regions, checked_at = EXCLUDED.checked_at,
    received_at = EXCLUDED.received_at, targets = EXCLUDED.targets, failing = EXCLUDED.failing,
    failing_targets = EXCLUDED.failing_targets, agent_healthy = EXCLUDED.agent_healthy,
    agent_reason = EXCLUDED.agent_reason, clock_offset_ms = EXCLUDED.clock_offset_ms;

-- name: RecentCanaries :many
-- The canary rounds received since @since, one per agent.
SELECT agent_id, regions, checked_at, received_at, targets, failing, failing_targets, agent_healthy,
    agent_reason, clock_offset_ms
FROM agent_canaries WHERE received_at >= @since ORDER BY agent_id;

-- name: DeleteStaleCanaries :exec
-- Agents gone for longer than @before leave no canary row behind.
DELETE FROM agent_canaries WHERE received_at < @before;
