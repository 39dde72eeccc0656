package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Incident sources: what a FeedIncident is an incident of.
const (
	FeedSourceCheck     = "CHECK"
	FeedSourceHeartbeat = "HEARTBEAT"
)

// FeedFilter narrows the incident feed. IncludeChecks and IncludeHeartbeats are the caller's
// grants; Open and Resolved select the statuses (both for all); CheckID, when set, keeps one
// check's incidents only.
type FeedFilter struct {
	IncludeChecks, IncludeHeartbeats bool
	Open, Resolved                   bool
	CheckID                          *uuid.UUID
}

// FeedIncident is one entry of the incident feed: a check's incident, or a DOWN heartbeat (which
// keeps no incident record: its entry is open, started when its state last changed, and its ID
// is the heartbeat's).
type FeedIncident struct {
	ID        uuid.UUID
	Source    string // FeedSourceCheck or FeedSourceHeartbeat
	SourceID  uuid.UUID
	Name      string
	Kind      string // the check's kind, or HEARTBEAT
	StartedAt time.Time
	EndedAt   *time.Time
	CausedBy  *uuid.UUID
}

// IncidentFeed returns one page of the organization's incident feed: the open entries first,
// then the resolved ones, each newest started_at first, then id descending; and how many
// entries the feed holds. Open entries are few, so the page is cut from the open part and the
// resolved part by their counts, each read from its own index.
func (s *Store) IncidentFeed(ctx context.Context, orgID uuid.UUID, f FeedFilter, limit, offset int64) ([]FeedIncident, int64, error) {
	var open, resolved int64
	var err error
	if f.Open {
		open, err = s.q.CountOpenFeed(ctx, dbsqlc.CountOpenFeedParams{OrgID: orgID, IncludeChecks: f.IncludeChecks,
			CheckID: f.CheckID, IncludeHeartbeats: f.IncludeHeartbeats})
		if err != nil {
			return nil, 0, translate(err)
		}
	}
	if f.Resolved {
		resolved, err = s.q.CountResolvedFeed(ctx, dbsqlc.CountResolvedFeedParams{OrgID: orgID, IncludeChecks: f.IncludeChecks,
			CheckID: f.CheckID})
		if err != nil {
			return nil, 0, translate(err)
		}
	}
	items := []FeedIncident{}
	if offset < open {
		rows, err := s.q.ListOpenFeed(ctx, dbsqlc.ListOpenFeedParams{OrgID: orgID, IncludeChecks: f.IncludeChecks,
			CheckID: f.CheckID, IncludeHeartbeats: f.IncludeHeartbeats, MaxRows: limit, SkipRows: offset})
		if err != nil {
			return nil, 0, translate(err)
		}
		for _, r := range rows {
			items = append(items, FeedIncident{ID: r.ID, Source: r.Source, SourceID: r.SourceID, Name: r.Name, Kind: r.Kind,
				StartedAt: r.StartedAt, CausedBy: r.CausedBy})
		}
	}
	if rest := limit - int64(len(items)); rest > 0 && resolved > 0 && offset+int64(len(items)) < open+resolved {
		rows, err := s.q.ListResolvedFeed(ctx, dbsqlc.ListResolvedFeedParams{OrgID: orgID, IncludeChecks: f.IncludeChecks,
			CheckID: f.CheckID, MaxRows: rest, SkipRows: max(0, offset-open)})
		if err != nil {
			return nil, 0, translate(err)
		}
		for _, r := range rows {
			items = append(items, FeedIncident{ID: r.ID, Source: FeedSourceCheck, SourceID: r.CheckID, Name: r.Name, Kind: r.Kind,
				StartedAt: r.StartedAt, EndedAt: r.EndedAt, CausedBy: r.CausedBy})
		}
	}
	return items, open + resolved, nil
}
