-- The audit log (audit.go, auditlog.go).

-- name: WriteAuditEvent :exec
-- The target is always the organization.
INSERT INTO audit_events (id, org_id, actor_id, actor_type, actor_display_name,
    auditable_id, auditable_type, auditable_display_name,
    target_id, target_type, target_display_name, audit_action, action, remote_ip, metadata)
SELECT @id::uuid, o.id, sqlc.narg(actor_id)::text, @actor_type::text, sqlc.narg(actor_display_name)::text,
    sqlc.narg(auditable_id)::text, @auditable_type::text, sqlc.narg(auditable_display_name)::text,
    o.id::text, 'Organisation', o.name, @audit_action::text, @action::text, sqlc.narg(remote_ip)::text,
    sqlc.narg(metadata)::jsonb
FROM organizations o WHERE o.id = @org_id;

-- name: CountAuditEvents :one
-- @pattern is an ILIKE pattern matched against the action, the auditable type and the actor's
-- and auditable's display names.
SELECT count(*) FROM audit_events
WHERE org_id = @org_id AND (audit_action ILIKE @pattern OR auditable_type ILIKE @pattern
    OR actor_display_name ILIKE @pattern OR auditable_display_name ILIKE @pattern);

-- name: ListAuditEvents :many
SELECT id, actor_id, actor_type, actor_display_name, auditable_id, auditable_type, auditable_display_name,
    target_id, target_type, target_display_name, audit_action, action, location, remote_ip, created_at, metadata
FROM audit_events
WHERE org_id = @org_id AND (audit_action ILIKE @pattern OR auditable_type ILIKE @pattern
    OR actor_display_name ILIKE @pattern OR auditable_display_name ILIKE @pattern)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint OFFSET @skip_rows::bigint;
