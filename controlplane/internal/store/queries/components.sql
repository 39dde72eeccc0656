-- name: CountComponents :one
SELECT count(*) FROM status_page_components c
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(c.name), lower(@search::text)) > 0);

-- name: ListComponents :many
-- Display order: ungrouped components first, then each group in its order.
SELECT c.id, c.org_id, c.status_page_id, c.name, c.status, c.display_uptime, c.display_metrics, c.created_at,
    c.updated_at, c.group_id, c.sort_order, c.is_external_component, c.override_status, c.heartbeat_id,
    coalesce((SELECT array_agg(l.check_id ORDER BY l.check_id) FROM status_page_component_checks l
        WHERE l.component_id = c.id), '{}')::uuid[] AS check_ids
FROM status_page_components c
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(c.name), lower(@search::text)) > 0)
ORDER BY (SELECT g.sort_order FROM status_page_groups g WHERE g.id = c.group_id) NULLS FIRST,
    c.group_id NULLS FIRST, c.sort_order NULLS LAST, c.created_at, c.id
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetComponent :one
SELECT c.id, c.org_id, c.status_page_id, c.name, c.status, c.display_uptime, c.display_metrics, c.created_at,
    c.updated_at, c.group_id, c.sort_order, c.is_external_component, c.override_status, c.heartbeat_id,
    coalesce((SELECT array_agg(l.check_id ORDER BY l.check_id) FROM status_page_component_checks l
        WHERE l.component_id = c.id), '{}')::uuid[] AS check_ids
FROM status_page_components c
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id AND c.id = @id;

-- name: CreateComponent :exec
-- Appended after the page's ungrouped components.
INSERT INTO status_page_components (id, org_id, status_page_id, name, status, display_uptime, display_metrics,
    sort_order, created_at, updated_at)
VALUES (@id, @org_id, @status_page_id, @name, @status, @display_uptime, @display_metrics,
    (SELECT count(*) FROM status_page_components WHERE status_page_id = @status_page_id AND group_id IS NULL), @now, @now);

-- name: GroupOnPage :one
SELECT EXISTS (SELECT 1 FROM status_page_groups WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id);

-- name: MoveComponentToGroup :exec
-- Appended after the components of its new group (NULL: the ungrouped ones).
UPDATE status_page_components c SET group_id = sqlc.narg(group_id)::uuid,
    sort_order = (SELECT count(*) FROM status_page_components o WHERE o.status_page_id = @status_page_id::uuid
        AND o.group_id IS NOT DISTINCT FROM sqlc.narg(group_id)::uuid AND o.id <> @id::uuid)
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id::uuid AND c.id = @id::uuid;

-- name: CountOrgChecks :one
SELECT count(*) FROM checks WHERE org_id = @org_id AND id = ANY(@ids::uuid[]);

-- name: ClearComponentChecks :exec
DELETE FROM status_page_component_checks WHERE org_id = @org_id AND component_id = @component_id;

-- name: AddComponentChecks :exec
INSERT INTO status_page_component_checks (org_id, component_id, check_id)
SELECT @org_id::uuid, @component_id::uuid, unnest(@check_ids::uuid[]);

-- name: HeartbeatExists :one
SELECT EXISTS (SELECT 1 FROM heartbeats WHERE org_id = @org_id AND id = @id);

-- name: SetComponentHeartbeat :exec
UPDATE status_page_components SET heartbeat_id = sqlc.narg(heartbeat_id)::uuid WHERE org_id = @org_id AND id = @id;

-- name: UpdateComponentFields :exec
UPDATE status_page_components SET name = coalesce(sqlc.narg(name)::text, name),
    display_uptime = coalesce(sqlc.narg(display_uptime)::bool, display_uptime),
    display_metrics = coalesce(sqlc.narg(display_metrics)::bool, display_metrics),
    override_status = coalesce(sqlc.narg(override_status)::bool, override_status),
    updated_at = @now
WHERE org_id = @org_id AND id = @id;

-- name: SetComponentStatus :exec
UPDATE status_page_components SET status = @status, updated_at = @now WHERE org_id = @org_id AND id = @id;

-- name: SetFollowedComponentStatus :execrows
-- The status a component's monitors give it, unless it changed or was overridden meanwhile.
UPDATE status_page_components SET status = @status, updated_at = @now
WHERE org_id = @org_id AND id = @id AND status = @old_status AND NOT override_status;

-- name: DeleteComponent :one
DELETE FROM status_page_components WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id RETURNING name;

-- name: UngroupedComponentIDs :many
SELECT id FROM status_page_components WHERE org_id = @org_id AND status_page_id = @status_page_id AND group_id IS NULL;

-- name: GroupComponentIDs :many
SELECT id FROM status_page_components WHERE org_id = @org_id AND group_id = @group_id;

-- name: SetComponentSortOrder :exec
UPDATE status_page_components SET sort_order = @sort_order WHERE org_id = @org_id AND id = @id;

-- name: FollowingComponents :many
-- The components that follow their monitors - linked to a check or a heartbeat, not overridden,
-- and not in a maintenance in progress (the maintenance owns their status until it ends) - of
-- every organization, with the states of their monitors (checks in id order; an UP check with
-- confirmed regional degradation or slowness reads DEGRADED, docs/detection.md). A deleted heartbeat gives no
-- state.
SELECT c.org_id, c.id, c.name, c.status,
    coalesce((SELECT array_agg(CASE WHEN ch.state = 'UP' AND (EXISTS (SELECT 1 FROM check_degradations d
                WHERE d.org_id = ch.org_id AND d.check_id = ch.id AND d.degraded)
            OR EXISTS (SELECT 1 FROM check_slowness sl
                WHERE sl.org_id = ch.org_id AND sl.check_id = ch.id AND sl.degraded)) THEN 'DEGRADED' ELSE ch.state END
            ORDER BY ch.id) FROM status_page_component_checks l
        JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}')::text[] AS check_states,
    coalesce((SELECT array_agg(ch.paused ORDER BY ch.id) FROM status_page_component_checks l
        JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}')::bool[] AS check_paused,
    h.state AS heartbeat_state, h.paused AS heartbeat_paused
FROM status_page_components c
LEFT JOIN heartbeats h ON h.org_id = c.org_id AND h.id = c.heartbeat_id
WHERE NOT c.override_status
  AND (c.heartbeat_id IS NOT NULL OR EXISTS (SELECT 1 FROM status_page_component_checks l WHERE l.component_id = c.id))
  AND NOT EXISTS (SELECT 1 FROM status_page_incident_components ic JOIN status_page_incidents i ON i.id = ic.incident_id
      WHERE ic.component_id = c.id AND i.maintenance_state = 'IN_PROGRESS')
ORDER BY c.id;

-- name: FollowingComponent :many
-- One component of an organization as FollowingComponents reads it; none when it does not
-- follow its monitors.
SELECT c.org_id, c.id, c.name, c.status,
    coalesce((SELECT array_agg(CASE WHEN ch.state = 'UP' AND (EXISTS (SELECT 1 FROM check_degradations d
                WHERE d.org_id = ch.org_id AND d.check_id = ch.id AND d.degraded)
            OR EXISTS (SELECT 1 FROM check_slowness sl
                WHERE sl.org_id = ch.org_id AND sl.check_id = ch.id AND sl.degraded)) THEN 'DEGRADED' ELSE ch.state END
            ORDER BY ch.id) FROM status_page_component_checks l
        JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}')::text[] AS check_states,
    coalesce((SELECT array_agg(ch.paused ORDER BY ch.id) FROM status_page_component_checks l
        JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}')::bool[] AS check_paused,
    h.state AS heartbeat_state, h.paused AS heartbeat_paused
FROM status_page_components c
LEFT JOIN heartbeats h ON h.org_id = c.org_id AND h.id = c.heartbeat_id
WHERE c.org_id = @org_id AND c.id = @id AND NOT c.override_status
  AND (c.heartbeat_id IS NOT NULL OR EXISTS (SELECT 1 FROM status_page_component_checks l WHERE l.component_id = c.id))
  AND NOT EXISTS (SELECT 1 FROM status_page_incident_components ic JOIN status_page_incidents i ON i.id = ic.incident_id
      WHERE ic.component_id = c.id AND i.maintenance_state = 'IN_PROGRESS');
