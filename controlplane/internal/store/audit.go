package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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
	var meta json.RawMessage
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
	action := auditAction(ev.AuditableType, ev.Action)
	err = dbsqlc.New(tx).WriteAuditEvent(ctx, dbsqlc.WriteAuditEventParams{ID: id, OrgID: orgID,
		ActorID: nullIfEmpty(actor.ID), ActorType: actor.Type, ActorDisplayName: nullIfEmpty(actor.DisplayName),
		AuditableID: nullIfEmpty(ev.AuditableID), AuditableType: ev.AuditableType,
		AuditableDisplayName: nullIfEmpty(ev.AuditableDisplayName), AuditAction: action, Action: ev.Action,
		RemoteIp: nullIfEmpty(actor.RemoteIP), Metadata: meta})
	if err != nil {
		return fmt.Errorf("write audit event %s: %w", action, err)
	}
	return nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
