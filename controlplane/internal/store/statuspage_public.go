package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// What the public status page (statuspage/web) reads beyond the page itself: the uptime of its
// components and the incidents it shows, each with their timeline.

// UptimeRow is one check's days of a component, as offsets in days from the first day asked
// for, with the runs that got a verdict and how many of them failed (index-aligned).
type UptimeRow struct {
	ComponentID uuid.UUID
	Offsets     []int32
	Runs        []int32
	Failed      []int32
}

// PageUptime returns, for every check linked to a component of the page, its days since the
// UTC day of since that have runs.
func (r StatusPageReader) PageUptime(ctx context.Context, orgID, pageID uuid.UUID, since time.Time) ([]UptimeRow, error) {
	day := time.Date(since.UTC().Year(), since.UTC().Month(), since.UTC().Day(), 0, 0, 0, 0, time.UTC)
	rows, err := r.q.PageUptime(ctx, dbsqlc.PageUptimeParams{OrgID: orgID, StatusPageID: pageID, Since: day})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]UptimeRow, len(rows))
	for i, row := range rows {
		out[i] = UptimeRow{ComponentID: row.ComponentID, Offsets: row.Offs, Runs: row.Runs, Failed: row.Failed}
	}
	return out, nil
}

// ShownIncidents is what the public page shows of its incidents, newest first: the unresolved
// ones, maintenance not completed, and the history — resolved incidents and completed
// maintenance that started at or after historySince, at most historyLimit of them.
type ShownIncidents struct {
	Incidents []PageIncident
	// Components are the names of the components each incident affects, in display order.
	Components map[uuid.UUID][]string
	// Updates are each incident's timeline, newest first (without component changes).
	Updates map[uuid.UUID][]IncidentUpdate
}

// PageShownIncidents reads what the public page shows of a page's incidents.
func (r StatusPageReader) PageShownIncidents(ctx context.Context, orgID, pageID uuid.UUID, historySince time.Time, historyLimit int) (ShownIncidents, error) {
	out := ShownIncidents{Components: map[uuid.UUID][]string{}, Updates: map[uuid.UUID][]IncidentUpdate{}}
	rows, err := r.q.PageShownIncidents(ctx, dbsqlc.PageShownIncidentsParams{OrgID: orgID, StatusPageID: pageID,
		Since: historySince, HistoryLimit: int64(historyLimit)})
	if err != nil {
		return out, translate(err)
	}
	if out.Incidents, err = r.withLatest(ctx, orgID, rows); err != nil {
		return out, err
	}
	ids := make([]uuid.UUID, len(rows))
	for i, row := range rows {
		ids[i] = row.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	names, err := r.q.IncidentComponentNames(ctx, dbsqlc.IncidentComponentNamesParams{OrgID: orgID, IncidentIds: ids})
	if err != nil {
		return out, translate(err)
	}
	for _, n := range names {
		out.Components[n.IncidentID] = append(out.Components[n.IncidentID], n.Name)
	}
	updates, err := r.q.IncidentsUpdates(ctx, dbsqlc.IncidentsUpdatesParams{OrgID: orgID, IncidentIds: ids})
	if err != nil {
		return out, translate(err)
	}
	for _, u := range updates {
		out.Updates[u.IncidentID] = append(out.Updates[u.IncidentID], IncidentUpdate{ID: u.ID, IncidentID: u.IncidentID,
			Status: u.Status, Description: u.Description, DateHappened: u.DateHappened, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt})
	}
	return out, nil
}
