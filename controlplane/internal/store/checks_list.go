package store

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/check"
)

// CheckFilter narrows ListChecks.
type CheckFilter struct {
	ProjectID  *uuid.UUID // only this project's checks (ErrProjectNotFound when it does not exist)
	Unassigned bool       // only checks without a project
	Search     string     // case-insensitive substring of name or url
	// Status: PAUSED (paused), MUTED (muted, not paused), or a state (not paused, not muted);
	// "" for all.
	Status string
}

// CheckSummary is a check as the list shows it.
type CheckSummary struct {
	ID         uuid.UUID
	ProjectID  *uuid.UUID
	Kind       check.Kind
	Name       string
	URL        *string
	State      string
	Paused     bool
	Muted      bool
	LastQueued *time.Time
	// InMaintenance: an active, enabled maintenance window lists the check (store's clock).
	InMaintenance bool
	// The kind's specification (one of the three; the HTTP one without the script).
	HTTP *check.HTTPSpec
	DNS  *check.DNSSpec
	TCP  *check.TCPSpec
}

// ListChecks returns one page of the organization's checks, newest first (created_at, then id,
// descending: the checks_org / checks_org_project index order), and the total matching f.
func (s *Store) ListChecks(ctx context.Context, orgID uuid.UUID, f CheckFilter, limit, offset int64) ([]CheckSummary, int64, error) {
	if f.ProjectID != nil {
		if err := s.ProjectExists(ctx, orgID, f.ProjectID); err != nil {
			return nil, 0, err
		}
	}
	search := strings.ToLower(f.Search)
	total, err := s.q.CountChecks(ctx, dbsqlc.CountChecksParams{
		OrgID: orgID, ProjectID: f.ProjectID, Unassigned: f.Unassigned, Search: search, Status: f.Status})
	if err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckSummary{}, total, nil
	}
	rows, err := s.q.ListChecks(ctx, dbsqlc.ListChecksParams{
		OrgID: orgID, ProjectID: f.ProjectID, Unassigned: f.Unassigned, Search: search, Status: f.Status,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	now := s.now()
	items := make([]CheckSummary, len(rows))
	for i, r := range rows {
		sp := check.Spec{Kind: check.Kind(r.Kind)}
		if err := sp.LoadDocument(r.Spec); err != nil {
			return nil, 0, err
		}
		inWindow, err := windowsActive(r.MaintenanceWindows, now)
		if err != nil {
			return nil, 0, err
		}
		items[i] = CheckSummary{ID: r.ID, ProjectID: r.ProjectID, Kind: sp.Kind, Name: r.Name, URL: r.Url, State: r.State,
			Paused: r.Paused, Muted: r.Muted, LastQueued: r.LastQueued, InMaintenance: inWindow,
			HTTP: sp.HTTP, DNS: sp.DNS, TCP: sp.TCP}
	}
	return items, total, nil
}
