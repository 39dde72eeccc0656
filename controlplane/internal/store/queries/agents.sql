-- Agent tokens, the live agents of every replica and the regions no agent serves (agents.go).
-- The agents are the deployment's, not an organization's: these queries are, with the
-- scheduler's, the ones that read across organizations; they never return a row to a tenant.

-- name: CreateAgentToken :one
INSERT INTO agent_tokens (id, name, regions, secret_hash, created_at)
VALUES (@id, @name, @regions, @secret_hash, @created_at)
RETURNING id, name, regions, created_at, revoked_at;

-- name: ListAgentTokens :many
SELECT id, name, regions, created_at, revoked_at FROM agent_tokens ORDER BY created_at, id;

-- name: RevokeAgentToken :one
-- Revokes a token once; a token already revoked keeps its first revocation time.
UPDATE agent_tokens SET revoked_at = coalesce(revoked_at, @now::timestamptz) WHERE id = @id
RETURNING id, name, regions, created_at, revoked_at;

-- name: AgentTokenBySecret :one
SELECT id, name, regions FROM agent_tokens WHERE secret_hash = @secret_hash AND revoked_at IS NULL;

-- name: ActiveAgentTokens :many
-- Those of ids that exist and are not revoked.
SELECT id FROM agent_tokens WHERE id = ANY (@ids::uuid[]) AND revoked_at IS NULL;

-- name: UpsertAgentSession :batchexec
INSERT INTO agent_sessions (session_id, replica_id, replica, agent_id, token_id, regions, version, hostname,
    capabilities, connected_at, probes_running, results_per_second, seen_at)
VALUES (@session_id, @replica_id, @replica, @agent_id, sqlc.narg(token_id)::uuid, @regions, @version, @hostname,
    @capabilities, @connected_at, @probes_running, @results_per_second, @seen_at)
ON CONFLICT (session_id) DO UPDATE SET probes_running = EXCLUDED.probes_running,
    results_per_second = EXCLUDED.results_per_second, seen_at = EXCLUDED.seen_at;

-- name: DeleteReplicaSessionsExcept :exec
-- The sessions a replica published that are gone from it.
DELETE FROM agent_sessions WHERE replica_id = @replica_id AND session_id <> ALL (@keep::uuid[]);

-- name: DeleteExpiredAgentSessions :exec
DELETE FROM agent_sessions WHERE seen_at < @cutoff;

-- name: LiveAgentSessions :many
-- With the name of the session's token (NULL for the shared token, or a token deleted since).
SELECT s.session_id, s.replica_id, s.replica, s.agent_id, s.token_id, t.name AS token_name, s.regions, s.version,
    s.hostname, s.capabilities, s.connected_at, s.probes_running, s.results_per_second, s.seen_at
FROM agent_sessions s LEFT JOIN agent_tokens t ON t.id = s.token_id
WHERE s.seen_at >= @cutoff
ORDER BY s.connected_at, s.session_id;

-- name: RegionsInUse :many
-- Every region active checks run from, with how many checks of every organization use it.
SELECT r.region::text AS region, count(*) AS checks
FROM checks c CROSS JOIN LATERAL unnest(c.test_regions) AS r(region)
WHERE NOT c.paused
GROUP BY r.region ORDER BY r.region;

-- name: RegionOrganizations :many
-- The organizations whose active checks use a region, with how many of their checks do.
SELECT org_id, count(*) AS checks FROM checks
WHERE NOT paused AND @region::text = ANY (test_regions)
GROUP BY org_id ORDER BY org_id;

-- name: UnservedRegions :many
SELECT region, since, alerted_at FROM unserved_regions ORDER BY region;

-- name: MarkRegionUnserved :exec
INSERT INTO unserved_regions (region, since) VALUES (@region, @since) ON CONFLICT (region) DO NOTHING;

-- name: AlertUnservedRegion :one
-- Takes the alert of a region unserved since cutoff or earlier, once: a concurrent replica's
-- statement finds alerted_at set and returns no row.
UPDATE unserved_regions SET alerted_at = @now::timestamptz
WHERE region = @region AND alerted_at IS NULL AND since <= @cutoff::timestamptz
RETURNING since;

-- name: MarkRegionServed :one
-- Forgets a region that is served again, once; returns when it had been alerted.
DELETE FROM unserved_regions WHERE region = @region RETURNING since, alerted_at;
