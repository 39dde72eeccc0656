package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// RegionFailureStats is what one region's probes did over a window: checks probed, checks it
// failed in a run another region passed (lone failures), and their organizations.
type RegionFailureStats struct {
	Region             string
	Checks, Lone, Orgs int
}

// RegionFailureStats reads every region's figures over the final attempts checked since since
// (the window of recent results, which the results' daily partitions and checked_at bound).
func (s *Store) RegionFailureStats(ctx context.Context, since time.Time) ([]RegionFailureStats, error) {
	rows, err := s.q.RegionFailureStats(ctx, since)
	if err != nil {
		return nil, fmt.Errorf("region failure stats: %w", err)
	}
	out := make([]RegionFailureStats, len(rows))
	for i, r := range rows {
		out[i] = RegionFailureStats{Region: r.Region, Checks: int(r.Checks), Lone: int(r.Lone), Orgs: int(r.Orgs)}
	}
	return out, nil
}

// RegionHealth is a region's probe health: unhealthy since UnhealthySince (nil: healthy).
type RegionHealth struct {
	Region         string
	UnhealthySince *time.Time
	Reason         string
	// Cause is what the mark rests on: "checks" (tenants' checks failing only there) or
	// "canary" (its agents' canaries).
	Cause string
}

// SetRegionHealth marks a region unhealthy (with reason) or healthy, and reports whether that
// changed it; a change opens or closes its unhealthy period and queues build's events for the
// organizations whose active checks use the region, in the same transaction (of replicas
// racing, one changes it).
func (s *Store) SetRegionHealth(ctx context.Context, region string, unhealthy bool, cause, reason string, build RegionEvents) (bool, error) {
	changed := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		changed = false
		q := s.q.WithTx(tx)
		now := s.now()
		cur, err := q.LockRegionHealth(ctx, dbsqlc.LockRegionHealthParams{Region: region, Now: now})
		if err != nil {
			return err
		}
		if (cur.UnhealthySince != nil) == unhealthy {
			return nil
		}
		changed = true
		since := now
		if unhealthy {
			if err := q.SetRegionUnhealthy(ctx, dbsqlc.SetRegionUnhealthyParams{Region: region, Now: now, Reason: reason, Cause: cause}); err != nil {
				return err
			}
			if err := q.OpenUnhealthyPeriod(ctx, dbsqlc.OpenUnhealthyPeriodParams{Region: region, Now: now, Reason: reason, Cause: cause}); err != nil {
				return err
			}
		} else {
			since = *cur.UnhealthySince
			if err := q.SetRegionHealthy(ctx, dbsqlc.SetRegionHealthyParams{Region: region, Now: now}); err != nil {
				return err
			}
			if err := q.CloseUnhealthyPeriod(ctx, dbsqlc.CloseUnhealthyPeriodParams{Region: region, Now: now}); err != nil {
				return err
			}
		}
		return s.queueRegionEvents(ctx, tx, region, since, build)
	})
	return changed, translate(err)
}

// UnhealthyRegions lists the regions marked unhealthy now.
func (s *Store) UnhealthyRegions(ctx context.Context) ([]RegionHealth, error) {
	rows, err := s.q.UnhealthyRegions(ctx)
	if err != nil {
		return nil, fmt.Errorf("unhealthy regions: %w", err)
	}
	out := make([]RegionHealth, len(rows))
	for i, r := range rows {
		out[i] = RegionHealth(r)
	}
	return out, nil
}

// UnhealthyRegions are the regions whose results the evaluator leaves out of verdicts now.
func (p *PipelineTx) UnhealthyRegions(ctx context.Context) (map[string]bool, error) {
	rows, err := p.q().UnhealthyRegions(ctx)
	if err != nil {
		return nil, fmt.Errorf("unhealthy regions: %w", err)
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Region] = true
	}
	return out, nil
}
