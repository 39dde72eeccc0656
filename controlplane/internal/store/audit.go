package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Actor is who made a change, as the audit log records it.
type Actor struct {
	Type        string // "User", "ApiToken" or "System"
	ID          string
	DisplayName string
	RemoteIP    string
}

// SystemActor is the actor of changes Vantage makes by itself (bootstrap, status machine).
var SystemActor = Actor{Type: "System", DisplayName: "Vantage"}

// AuditEvent describes one change to one resource. The audit action is derived:
// "<auditable type in snake case>.<action>", e.g. "check.created".
type AuditEvent struct {
	Action               string // verb: created, updated, deleted, moved, ...
	AuditableType        string // e.g. "Check", "EnvironmentVariable"
	AuditableID          string
	AuditableDisplayName string
	Metadata             map[string]any
}

var camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// auditAction turns ("EnvironmentVariable", "updated") into "environment_variable.updated".
func auditAction(auditableType, action string) string {
	return strings.ToLower(camelBoundary.ReplaceAllString(auditableType, "${1}_${2}")) + "." + action
}

// writeAudit appends an audit event inside tx, so a change and its record commit together.
func writeAudit(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, actor Actor, ev AuditEvent) error {
	var meta []byte
	if ev.Metadata != nil {
		var err error
		if meta, err = json.Marshal(ev.Metadata); err != nil {
			return fmt.Errorf("audit metadata: %w", err)
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO audit_events (id, org_id, actor_id, actor_type, actor_display_name,
			auditable_id, auditable_type, auditable_display_name,
			target_id, target_type, target_display_name, audit_action, action, remote_ip, metadata)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, o.id::text, 'Organisation', o.name, $9, $10, $11, $12
		FROM organizations o WHERE o.id = $2`,
		id, orgID, nullIfEmpty(actor.ID), actor.Type, nullIfEmpty(actor.DisplayName),
		nullIfEmpty(ev.AuditableID), ev.AuditableType, nullIfEmpty(ev.AuditableDisplayName),
		auditAction(ev.AuditableType, ev.Action), ev.Action, nullIfEmpty(actor.RemoteIP), meta)
	if err != nil {
		return fmt.Errorf("write audit event %s: %w", auditAction(ev.AuditableType, ev.Action), err)
	}
	return nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
