package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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

// ListAuditLog returns one page of the organization's audit events, newest first, and how many
// match in all. search, when not empty, keeps the events whose audit action, auditable type or
// actor or auditable display name contains it (case-insensitive).
func (s *Store) ListAuditLog(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]AuditLogEntry, int64, error) {
	pattern := substringPattern(search)
	total, err := s.q.CountAuditEvents(ctx, dbsqlc.CountAuditEventsParams{OrgID: orgID, Pattern: pattern})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListAuditEvents(ctx, dbsqlc.ListAuditEventsParams{OrgID: orgID, Pattern: pattern, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	entries := make([]AuditLogEntry, len(rows))
	for i, r := range rows {
		e := AuditLogEntry{ID: r.ID, ActorID: r.ActorID, ActorType: r.ActorType, ActorDisplayName: r.ActorDisplayName,
			AuditableID: r.AuditableID, AuditableType: r.AuditableType, AuditableDisplayName: r.AuditableDisplayName,
			TargetID: r.TargetID, TargetType: r.TargetType, TargetDisplayName: r.TargetDisplayName,
			AuditAction: r.AuditAction, Action: r.Action, Location: r.Location, RemoteIP: r.RemoteIp, CreatedAt: r.CreatedAt}
		if len(r.Metadata) > 0 {
			if err := json.Unmarshal(r.Metadata, &e.Metadata); err != nil {
				return nil, 0, fmt.Errorf("audit event %s metadata: %w", r.ID, err)
			}
		}
		entries[i] = e
	}
	return entries, total, nil
}
