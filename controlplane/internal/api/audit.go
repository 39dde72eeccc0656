package api

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// auditStore is what the audit log API needs from the store.
type auditStore interface {
	ListAuditLog(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]store.AuditLogEntry, int64, error)
}

var _ auditStore = (*store.Store)(nil)

// auditHandler serves GET /v1/audit_logs (api/openapi/audit-logs.yaml).
type auditHandler struct{ store auditStore }

func newAuditHandler(d Deps) *auditHandler { return &auditHandler{store: d.Store} }

// auditSearchMaxLen bounds the search query parameter.
const auditSearchMaxLen = 255

// auditEventJSON is one audit log item; every field is always present, nullable ones as null.
type auditEventJSON struct {
	ID                   string         `json:"id"`
	Type                 string         `json:"type"`
	ActorID              *string        `json:"actor_id"`
	ActorType            string         `json:"actor_type"`
	ActorDisplayName     *string        `json:"actor_display_name"`
	AuditableID          *string        `json:"auditable_id"`
	AuditableType        string         `json:"auditable_type"`
	AuditableDisplayName *string        `json:"auditable_display_name"`
	TargetID             *string        `json:"target_id"`
	TargetType           *string        `json:"target_type"`
	TargetDisplayName    *string        `json:"target_display_name"`
	AuditAction          string         `json:"audit_action"`
	Action               string         `json:"action"`
	Location             *string        `json:"location"`
	RemoteIP             *string        `json:"remote_ip"`
	CreatedAt            string         `json:"created_at"`
	Metadata             map[string]any `json:"metadata"`
}

func toAuditEventJSON(e store.AuditLogEntry) auditEventJSON {
	return auditEventJSON{
		ID: e.ID.String(), Type: "AuditLogEvent",
		ActorID: e.ActorID, ActorType: e.ActorType, ActorDisplayName: e.ActorDisplayName,
		AuditableID: e.AuditableID, AuditableType: e.AuditableType, AuditableDisplayName: e.AuditableDisplayName,
		TargetID: e.TargetID, TargetType: e.TargetType, TargetDisplayName: e.TargetDisplayName,
		AuditAction: e.AuditAction, Action: e.Action, Location: e.Location, RemoteIP: e.RemoteIP,
		CreatedAt: formatTime(e.CreatedAt), Metadata: e.Metadata,
	}
}

// list pages through the organization's audit log, newest first. search matches the audit
// action, the auditable type and the actor's and auditable's display names, case-insensitively.
func (h *auditHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	search, err := searchQuery(c, auditSearchMaxLen)
	if err != nil {
		return 0, nil, err
	}
	entries, total, err := h.store.ListAuditLog(c.Request.Context(), orgID(c), search, p.PerPage, p.Offset())
	return listed(mapped(entries, toAuditEventJSON), p, total, err)
}
