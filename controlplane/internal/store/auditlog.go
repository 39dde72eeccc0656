package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AuditLogEntry is one stored audit event, as the audit log lists it.
type AuditLogEntry struct {
	ID                   uuid.UUID
	ActorID              *string
	ActorType            string
	ActorDisplayName     *string
	AuditableID          *string
	AuditableType        string
	AuditableDisplayName *string
	TargetID             *string
	TargetType           *string
	TargetDisplayName    *string
	AuditAction          string
	Action               string
	Location             *string
	RemoteIP             *string
	CreatedAt            time.Time
	Metadata             map[string]any // nil when the event has none
}

// auditSearch is the condition of ListAuditLog: $2 is an ILIKE pattern matched against the
// action, the auditable type and the actor's and auditable's display names.
const auditSearch = `(audit_action ILIKE $2 OR auditable_type ILIKE $2
	OR actor_display_name ILIKE $2 OR auditable_display_name ILIKE $2)`

// ListAuditLog returns one page of the organization's audit events, newest first, and how many
// match in all. search, when not empty, keeps the events whose audit action, auditable type or
// actor or auditable display name contains it (case-insensitive).
func (s *Store) ListAuditLog(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]AuditLogEntry, int64, error) {
	pattern := substringPattern(search)
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE org_id = $1 AND `+auditSearch, orgID, pattern).
		Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, actor_id, actor_type, actor_display_name, auditable_id, auditable_type, auditable_display_name,
		       target_id, target_type, target_display_name, audit_action, action, location, remote_ip, created_at, metadata
		FROM audit_events
		WHERE org_id = $1 AND `+auditSearch+`
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, orgID, pattern, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	entries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditLogEntry, error) {
		var e AuditLogEntry
		err := r.Scan(&e.ID, &e.ActorID, &e.ActorType, &e.ActorDisplayName, &e.AuditableID, &e.AuditableType,
			&e.AuditableDisplayName, &e.TargetID, &e.TargetType, &e.TargetDisplayName, &e.AuditAction, &e.Action,
			&e.Location, &e.RemoteIP, &e.CreatedAt, &e.Metadata)
		return e, err
	})
	if err != nil {
		return nil, 0, translate(err)
	}
	return entries, total, nil
}
