-- Dependencies between checks and heartbeats (docs/detection.md).

-- name: MissingDependencies :many
-- The ids of @ids that are neither a check nor a heartbeat of the organization.
SELECT x.id::uuid FROM unnest(@ids::uuid[]) AS x(id)
WHERE NOT EXISTS (SELECT 1 FROM checks c WHERE c.org_id = @org_id AND c.id = x.id)
  AND NOT EXISTS (SELECT 1 FROM heartbeats h WHERE h.org_id = @org_id AND h.id = x.id);

-- name: LockDependencyGraph :exec
-- Serializes the writers of one organization's dependency graph until the transaction ends, so
-- that a cycle check and the edge it allows commit before the next writer reads the graph.
SELECT pg_advisory_xact_lock(hashtext('vantage.dependencies.' || (@org_id::uuid)::text));

-- name: DependencyReaches :one
-- Whether following depends_on from @ids (checks of the organization) reaches @check_id: then
-- making @check_id depend on @ids closes a cycle.
WITH RECURSIVE reach(id) AS (
    SELECT unnest(@ids::uuid[])
    UNION
    SELECT d FROM reach r JOIN checks c ON c.org_id = @org_id AND c.id = r.id, unnest(c.depends_on) AS d
)
SELECT EXISTS (SELECT 1 FROM reach WHERE id = @check_id)::bool;

-- name: DownDependencies :many
-- The dependencies of a check that are DOWN now (a check DOWN or RECOVERING, a heartbeat DOWN).
SELECT x.id::uuid FROM checks c CROSS JOIN LATERAL unnest(c.depends_on) AS x(id)
WHERE c.org_id = @org_id AND c.id = @check_id
  AND (EXISTS (SELECT 1 FROM checks p WHERE p.org_id = c.org_id AND p.id = x.id AND p.state IN ('DOWN', 'RECOVERING'))
    OR EXISTS (SELECT 1 FROM heartbeats h WHERE h.org_id = c.org_id AND h.id = x.id AND h.state = 'DOWN'))
ORDER BY x.id;

-- name: SetIncidentCause :exec
UPDATE check_incidents SET caused_by = @caused_by WHERE org_id = @org_id AND id = @id;
