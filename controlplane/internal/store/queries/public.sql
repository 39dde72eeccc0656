-- What the public status page shows (statuspage/web).

-- name: PageGroups :many
SELECT * FROM status_page_groups WHERE org_id = @org_id AND status_page_id = @status_page_id
ORDER BY sort_order NULLS LAST, created_at, id;

-- name: PageComponents :many
-- Every component of a page in display order: ungrouped first, then each group in its order.
SELECT c.id, c.org_id, c.status_page_id, c.name, c.status, c.display_uptime, c.display_metrics, c.created_at,
    c.updated_at, c.group_id, c.sort_order, c.is_external_component, c.override_status, c.heartbeat_id,
    coalesce((SELECT array_agg(l.check_id ORDER BY l.check_id) FROM status_page_component_checks l
        WHERE l.component_id = c.id), '{}')::uuid[] AS check_ids
FROM status_page_components c
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id
ORDER BY (SELECT g.sort_order FROM status_page_groups g WHERE g.id = c.group_id) NULLS FIRST,
    c.group_id NULLS FIRST, c.sort_order NULLS LAST, c.created_at, c.id;

-- name: PageUptime :many
-- One row per check linked to a component of the page, with its days since @since (as offsets
-- in days) and their run counters in arrays, read through the primary key: 50 rows of arrays
-- cost a fraction of thousands of sorted rows of dates.
SELECT l.component_id, s.offs::int[] AS offs, s.runs::int[] AS runs, s.failed::int[] AS failed
FROM status_page_components c
JOIN status_page_component_checks l ON l.org_id = c.org_id AND l.component_id = c.id
CROSS JOIN LATERAL (SELECT array_agg(d.day - @since::date) AS offs, array_agg(d.runs) AS runs,
        array_agg(d.failed_runs) AS failed
    FROM check_daily_stats d WHERE d.check_id = l.check_id AND d.day >= @since::date) s
WHERE c.org_id = @org_id AND c.status_page_id = @status_page_id AND s.offs IS NOT NULL;

-- name: PageShownIncidents :many
-- The incidents the page shows: unresolved ones, maintenance not completed, and the history
-- (resolved incidents and completed maintenance started since @since, newest first, at most
-- @history_limit), all newest first.
SELECT * FROM status_page_incidents i
WHERE i.org_id = @org_id AND i.status_page_id = @status_page_id AND (
    (i.maintenance_state IS NULL AND i.ended IS NULL) OR i.maintenance_state IN ('SCHEDULED', 'IN_PROGRESS')
    OR i.id IN (SELECT h.id FROM status_page_incidents h WHERE h.org_id = @org_id AND h.status_page_id = @status_page_id
        AND (h.ended IS NOT NULL OR h.maintenance_state = 'COMPLETED')
        AND coalesce(h.started, h.start_date, h.created_at) >= @since::timestamptz
        ORDER BY coalesce(h.started, h.start_date, h.created_at) DESC, h.id DESC LIMIT @history_limit::bigint))
ORDER BY coalesce(i.started, i.start_date, i.created_at) DESC, i.id DESC;

-- name: IncidentComponentNames :many
-- The names of the components incidents affect, in display order.
SELECT ic.incident_id, c.name FROM status_page_incident_components ic
JOIN status_page_components c ON c.id = ic.component_id
WHERE ic.org_id = @org_id AND ic.incident_id = ANY(@incident_ids::uuid[])
ORDER BY c.sort_order NULLS LAST, c.created_at, c.id;

-- name: IncidentsUpdates :many
-- The timelines of incidents, newest date_happened first.
SELECT u.id, u.incident_id, u.status, u.description, u.date_happened, u.created_at, u.updated_at
FROM status_page_incident_updates u
WHERE u.org_id = @org_id AND u.incident_id = ANY(@incident_ids::uuid[])
ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC;
