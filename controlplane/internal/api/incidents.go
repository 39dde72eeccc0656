package api

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// incidentFeedStore is what the organization's incident feed needs (an extension,
// docs/api-extensions.md).
type incidentFeedStore interface {
	IncidentFeed(ctx context.Context, orgID uuid.UUID, f store.FeedFilter, limit, offset int64) ([]store.FeedIncident, int64, error)
	CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error)
}

var _ incidentFeedStore = (*store.Store)(nil)

// incidentFeedHandler serves GET /v1/incidents.
type incidentFeedHandler struct{ st incidentFeedStore }

func newIncidentFeedHandler(d Deps) *incidentFeedHandler { return &incidentFeedHandler{st: d.Store} }

// feedIncidentJSON is one entry of the feed; exactly one of check_id and heartbeat_id is set.
type feedIncidentJSON struct {
	ID          string  `json:"id"`
	Source      string  `json:"source"`
	CheckID     *string `json:"check_id"`
	HeartbeatID *string `json:"heartbeat_id"`
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	StartedAt   string  `json:"started_at"`
	EndedAt     *string `json:"ended_at"`
	CausedBy    *string `json:"caused_by"`
}

// list answers a page of the organization's incidents across its checks and heartbeats, open
// first. The caller sees the sources its grants cover: check incidents with UPTIME_CHECKS:READ,
// DOWN heartbeats with HEARTBEAT_CHECKS:READ; with neither, the route is forbidden.
func (h *incidentFeedHandler) list(c *gin.Context) (int, any, error) {
	perms := principal(c).Perms
	f := store.FeedFilter{IncludeChecks: perms.Allows(auth.UptimeChecks, auth.Read),
		IncludeHeartbeats: perms.Allows(auth.HeartbeatChecks, auth.Read)}
	if !f.IncludeChecks && !f.IncludeHeartbeats {
		return 0, nil, forbidden("this token lacks the UPTIME_CHECKS:READ and HEARTBEAT_CHECKS:READ permissions")
	}
	p, err := parsePage(c, historyPages)
	if err != nil {
		return 0, nil, err
	}
	if err := h.parseFilter(c, &f); err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.IncidentFeed(c, orgID(c), f, p.PerPage, p.Offset())
	if err != nil {
		return 0, nil, err
	}
	out := make([]feedIncidentJSON, len(items))
	for i, in := range items {
		o := feedIncidentJSON{ID: in.ID.String(), Source: in.Source, Name: in.Name, Kind: in.Kind,
			StartedAt: formatTime(in.StartedAt), EndedAt: formatTimePtr(in.EndedAt), CausedBy: uuidString(in.CausedBy)}
		src := in.SourceID.String()
		if in.Source == store.FeedSourceHeartbeat {
			o.HeartbeatID = &src
		} else {
			o.CheckID = &src
		}
		out[i] = o
	}
	return listed(out, p, total, nil)
}

// parseFilter reads status (open, resolved; both when absent) and check_id, which must name a
// check of the organization the caller may read.
func (h *incidentFeedHandler) parseFilter(c *gin.Context, f *store.FeedFilter) error {
	switch status, _ := c.GetQuery("status"); status {
	case "":
		f.Open, f.Resolved = true, true
	case "open":
		f.Open = true
	case "resolved":
		f.Resolved = true
	default:
		return fieldErrors{{"status", "must be open or resolved"}}
	}
	s, given := c.GetQuery("check_id")
	if !given {
		return nil
	}
	s = strings.TrimSpace(s)
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return fieldErrors{{"check_id", "is not a check id"}}
	}
	if !f.IncludeChecks {
		return forbidden("this token lacks the UPTIME_CHECKS:READ permission")
	}
	if _, err := h.st.CheckKind(c, orgID(c), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound("check")
		}
		return err
	}
	f.CheckID = &id
	return nil
}
