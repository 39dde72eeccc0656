package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	// SkippedRuns24h counts the regions' runs of the last 24 hours that did not run.
	SkippedRuns24h int64
	// InMaintenance: an active, enabled maintenance window lists the check (store's clock).
	InMaintenance bool
	// The specification of a DNS or a TCP check (nil for other kinds, whose list item shows only
	// URL).
	DNS *check.DNSSpec
	TCP *check.TCPSpec
}

// ListChecks returns one page of the organization's checks, newest first (created_at, then id,
// descending: the checks_org / checks_org_project index order), and the total matching f.
func (s *Store) ListChecks(ctx context.Context, orgID uuid.UUID, f CheckFilter, limit, offset int64) ([]CheckSummary, int64, error) {
	if f.ProjectID != nil {
		if err := s.ProjectExists(ctx, orgID, f.ProjectID); err != nil {
			return nil, 0, err
		}
	}
	var total int64
	var rows []dbsqlc.ListChecksRow
	var err error
	skippedSince := s.now().Add(-SkippedRunsWindow)
	if f == (CheckFilter{}) {
		total, err = s.q.CountChecks(ctx, orgID)
		if err == nil && total > offset {
			rows, err = s.q.ListChecks(ctx, dbsqlc.ListChecksParams{OrgID: orgID, PageLimit: limit, PageOffset: offset,
				SkippedSince: skippedSince})
		}
	} else {
		q := dbsqlc.New(customPlans{s.pool})
		search := strings.ToLower(f.Search)
		total, err = q.CountFilteredChecks(ctx, dbsqlc.CountFilteredChecksParams{
			OrgID: orgID, ProjectID: f.ProjectID, Unassigned: f.Unassigned, Search: search, Status: f.Status})
		if err == nil && total > offset {
			var filtered []dbsqlc.ListFilteredChecksRow
			filtered, err = q.ListFilteredChecks(ctx, dbsqlc.ListFilteredChecksParams{
				OrgID: orgID, ProjectID: f.ProjectID, Unassigned: f.Unassigned, Search: search, Status: f.Status,
				PageLimit: limit, PageOffset: offset, SkippedSince: skippedSince})
			for _, r := range filtered {
				rows = append(rows, dbsqlc.ListChecksRow(r)) // the same select list
			}
		}
	}
	if err != nil {
		return nil, 0, translate(err)
	}
	now := s.now()
	progress := s.schedulerProgress(ctx)
	items := make([]CheckSummary, len(rows))
	for i, r := range rows {
		sp := check.Spec{Kind: check.Kind(r.Kind)}
		if r.Spec != nil {
			if err := sp.LoadDocument(r.Spec); err != nil {
				return nil, 0, fmt.Errorf("check %s: %w", r.ID, err)
			}
		}
		inWindow, err := windowsActive(r.MaintenanceWindows, now)
		if err != nil {
			return nil, 0, err
		}
		items[i] = CheckSummary{ID: r.ID, ProjectID: r.ProjectID, Kind: sp.Kind, Name: r.Name, URL: r.Url, State: r.State,
			Paused: r.Paused, Muted: r.Muted, InMaintenance: inWindow,
			LastQueued:     lastQueued(r.ID, time.Duration(r.TestInterval)*time.Second, r.Paused, r.CreatedAt, r.LastQueued, progress),
			SkippedRuns24h: r.SkippedRuns, DNS: sp.DNS, TCP: sp.TCP}
	}
	return items, total, nil
}

// customPlans runs queries as unnamed statements, which PostgreSQL plans for their actual
// arguments on every run. The list's optional filters are written once, as "(arg IS NULL OR
// column = arg)" and CASE: a cached generic plan must keep every filter, so it cannot use the
// project index, and PostgreSQL may pick the generic plan after a few runs. A custom plan drops
// the filters that are off. The statement's description is still cached, so a query stays one
// round trip.
type customPlans struct{ db dbsqlc.DBTX }

var _ dbsqlc.DBTX = customPlans{}

func (c customPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.db.Exec(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

func (c customPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.db.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

func (c customPlans) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return c.db.CopyFrom(ctx, table, columns, src)
}

func (c customPlans) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.db.SendBatch(ctx, b)
}

func (c customPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.db.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}
