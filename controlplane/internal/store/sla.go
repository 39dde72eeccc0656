package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

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
// their maintenance windows and their run counters — and never a scan of results. A check in
// scope that does not exist is ErrNotFound.
func (s *Store) SLAReport(ctx context.Context, orgID uuid.UUID, scope SLAScope, from, to time.Time) ([]SLACheck, error) {
	// The three reads are independent: they run at once, on three connections of the pool.
	var (
		checks    []dbsqlc.SLAChecksRow
		incidents []dbsqlc.SLAOrgIncidentsRow
		runs      map[uuid.UUID][2]int64
		windows   []dbsqlc.SLAWindowsRow
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		checks, err = s.q.SLAChecks(gctx, dbsqlc.SLAChecksParams{OrgID: orgID, CheckID: scope.CheckID, ProjectID: scope.ProjectID,
			Unassigned: scope.Unassigned})
		if err != nil {
			return fmt.Errorf("sla checks: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		incidents, runs, err = s.slaFacts(gctx, orgID, scope, from, to)
		return err
	})
	g.Go(func() (err error) {
		windows, err = s.q.SLAWindows(gctx, dbsqlc.SLAWindowsParams{OrgID: orgID, CheckID: scope.CheckID})
		if err != nil {
			return fmt.Errorf("sla maintenance windows: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if scope.CheckID != nil && len(checks) == 0 {
		return nil, ErrNotFound
	}
	incOf := map[uuid.UUID][]sla.Incident{}
	for _, i := range incidents {
		incOf[i.CheckID] = append(incOf[i.CheckID], sla.Incident{Start: i.StartedAt, End: i.EndedAt})
	}
	// Each window's occurrences are computed once, however many checks it lists.
	occurrences := map[uuid.UUID][]sla.Interval{}
	winOf := map[uuid.UUID][]uuid.UUID{}
	for _, w := range windows {
		if _, done := occurrences[w.ID]; !done {
			occurrences[w.ID] = sla.Occurrences(schedule(w.StartDate, int(w.DurationMinutes), w.Timezone, w.DaysOfWeek, true), from, to)
		}
		winOf[w.CheckID] = append(winOf[w.CheckID], w.ID)
	}
	now := s.now()
	out := make([]SLACheck, len(checks))
	for i, c := range checks {
		in := sla.Input{From: from, To: to, Now: now, CreatedAt: c.CreatedAt, Incidents: incOf[c.ID]}
		ids := []uuid.UUID{}
		for _, w := range winOf[c.ID] {
			in.Maintenance = append(in.Maintenance, occurrences[w]...)
			ids = append(ids, w)
		}
		r := runs[c.ID]
		out[i] = SLACheck{CheckID: c.ID, Name: c.Name, Report: sla.Compute(in), Runs: r[0], FailedRuns: r[1], Windows: ids}
	}
	return out, nil
}

// slaFacts reads the incidents overlapping [from, to) and the run counters of the UTC days it
// touches: one check's from its own indexes, an organization's by organization, whole folded
// months from the monthly counters and every other day from the daily ones (stats_fold.go).
func (s *Store) slaFacts(ctx context.Context, orgID uuid.UUID, scope SLAScope, from, to time.Time) ([]dbsqlc.SLAOrgIncidentsRow, map[uuid.UUID][2]int64, error) {
	q := s.q
	fromDay := from.UTC().Truncate(24 * time.Hour)
	toDay := to.Add(-time.Nanosecond).UTC().Truncate(24*time.Hour).AddDate(0, 0, 1) // exclusive
	runs := map[uuid.UUID][2]int64{}
	if id := scope.CheckID; id != nil {
		rows, err := q.SLACheckIncidents(ctx, dbsqlc.SLACheckIncidentsParams{OrgID: orgID, CheckID: *id, FromTime: from, ToTime: to})
		if err != nil {
			return nil, nil, fmt.Errorf("sla incidents: %w", err)
		}
		incs := make([]dbsqlc.SLAOrgIncidentsRow, len(rows))
		for i, r := range rows {
			incs[i] = dbsqlc.SLAOrgIncidentsRow(r)
		}
		r, err := q.SLACheckRuns(ctx, dbsqlc.SLACheckRunsParams{OrgID: orgID, CheckID: *id, FromDay: fromDay, ToDay: toDay})
		if err != nil {
			return nil, nil, fmt.Errorf("sla run counters: %w", err)
		}
		runs[*id] = [2]int64{r.Runs, r.FailedRuns}
		return incs, runs, nil
	}
	incs, err := q.SLAOrgIncidents(ctx, dbsqlc.SLAOrgIncidentsParams{OrgID: orgID, FromTime: from, ToTime: to})
	if err != nil {
		return nil, nil, fmt.Errorf("sla incidents: %w", err)
	}
	fullFrom := time.Date(fromDay.Year(), fromDay.Month(), 1, 0, 0, 0, 0, time.UTC)
	if fullFrom.Before(fromDay) {
		fullFrom = fullFrom.AddDate(0, 1, 0)
	}
	fullTo := time.Date(toDay.Year(), toDay.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !fullFrom.Before(fullTo) {
		fullFrom, fullTo = fromDay, fromDay // no whole month: every day from the daily counters
	}
	rows, err := q.SLAOrgRuns(ctx, dbsqlc.SLAOrgRunsParams{OrgID: orgID, FullFrom: fullFrom, FullTo: fullTo, FromDay: fromDay, ToDay: toDay})
	if err != nil {
		return nil, nil, fmt.Errorf("sla run counters: %w", err)
	}
	for _, r := range rows {
		runs[r.CheckID] = [2]int64{r.Runs, r.FailedRuns}
	}
	return incs, runs, nil
}
