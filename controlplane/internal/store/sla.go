package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
	"github.com/vantagehq/vantage/controlplane/internal/sla"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// SLAScope chooses the checks of an SLA report: one check, a project's, the Unassigned ones,
// or (all zero) every check of the organization.
type SLAScope struct {
	CheckID    *uuid.UUID
	ProjectID  *uuid.UUID
	Unassigned bool
}

// SLACheck is one check's SLA report.
type SLACheck struct {
	CheckID uuid.UUID
	Name    string
	sla.Report
	// Runs and FailedRuns are the judged runs of the UTC days the period touches, from the
	// daily rollups.
	Runs, FailedRuns int64
	// Windows are the enabled maintenance windows whose occurrences were excluded.
	Windows []uuid.UUID
}

// SLAReport computes the SLA report of every check in scope over [from, to) as of the store's
// clock (sla.Compute): four statements — the checks, their incidents overlapping the period,
// their maintenance windows and their daily rollups — and never a scan of results. A check in
// scope that does not exist is ErrNotFound.
func (s *Store) SLAReport(ctx context.Context, orgID uuid.UUID, scope SLAScope, from, to time.Time) ([]SLACheck, error) {
	q := s.q
	checks, err := q.SLAChecks(ctx, dbsqlc.SLAChecksParams{OrgID: orgID, CheckID: scope.CheckID, ProjectID: scope.ProjectID,
		Unassigned: scope.Unassigned})
	if err != nil {
		return nil, fmt.Errorf("sla checks: %w", err)
	}
	if scope.CheckID != nil && len(checks) == 0 {
		return nil, ErrNotFound
	}
	incidents, err := q.SLAIncidents(ctx, dbsqlc.SLAIncidentsParams{OrgID: orgID, FromTime: from, ToTime: to, CheckID: scope.CheckID})
	if err != nil {
		return nil, fmt.Errorf("sla incidents: %w", err)
	}
	windows, err := q.SLAWindows(ctx, dbsqlc.SLAWindowsParams{OrgID: orgID, CheckID: scope.CheckID})
	if err != nil {
		return nil, fmt.Errorf("sla maintenance windows: %w", err)
	}
	rollups, err := q.SLARollups(ctx, dbsqlc.SLARollupsParams{OrgID: orgID, CheckID: scope.CheckID,
		FromDay: from.UTC().Truncate(24 * time.Hour), ToDay: to.Add(-time.Nanosecond).UTC().Truncate(24 * time.Hour)})
	if err != nil {
		return nil, fmt.Errorf("sla rollups: %w", err)
	}
	incOf := map[uuid.UUID][]sla.Incident{}
	for _, i := range incidents {
		incOf[i.CheckID] = append(incOf[i.CheckID], sla.Incident{Start: i.StartedAt, End: i.EndedAt})
	}
	type windowRef struct {
		id uuid.UUID
		w  recurrence.Window
	}
	winOf := map[uuid.UUID][]windowRef{}
	for _, w := range windows {
		winOf[w.CheckID] = append(winOf[w.CheckID], windowRef{w.ID, schedule(w.StartDate, int(w.DurationMinutes), w.Timezone, w.DaysOfWeek, true)})
	}
	runsOf := make(map[uuid.UUID]dbsqlc.SLARollupsRow, len(rollups))
	for _, r := range rollups {
		runsOf[r.CheckID] = r
	}
	now := s.now()
	out := make([]SLACheck, len(checks))
	for i, c := range checks {
		in := sla.Input{From: from, To: to, Now: now, CreatedAt: c.CreatedAt, Incidents: incOf[c.ID]}
		ids := []uuid.UUID{}
		for _, w := range winOf[c.ID] {
			in.Windows = append(in.Windows, w.w)
			ids = append(ids, w.id)
		}
		r := runsOf[c.ID]
		out[i] = SLACheck{CheckID: c.ID, Name: c.Name, Report: sla.Compute(in), Runs: r.Runs, FailedRuns: r.FailedRuns, Windows: ids}
	}
	return out, nil
}
