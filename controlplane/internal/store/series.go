package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The reads behind the console's API extensions (docs/api-extensions.md): a check's
// response-time series per region, and the overview of many checks in a few queries.

// SeriesPoint is one bucket of a region's series. Runs and Failed count final results; the
// latencies and phases are those of the passing ones (nil: none, or no result recorded the phase).
type SeriesPoint struct {
	Start          time.Time
	Runs, Failed   int32
	P50Ms, P95Ms   *float64
	DNSMs          *float64
	ConnectMs      *float64
	TLSMs          *float64
	FirstByteMs    *float64
	FromHistograms bool // P50Ms and P95Ms are read from rollup histograms (within LatencyErrorBound)
}

// RegionSeries is a region's points, one per bucket of the range, in time order.
type RegionSeries struct {
	Region string
	Points []SeriesPoint
}

// CheckSeries returns c's series over [from, to) in buckets of bucket (from and to are whole
// buckets), one per region: c's test regions in their order, then any other region with
// results in the range, in name order. Buckets of whole hours are read from the hourly rollups;
// shorter ones from the results themselves, where the percentiles are exact.
func (s *Store) CheckSeries(ctx context.Context, c Check, from, to time.Time, bucket time.Duration) ([]RegionSeries, error) {
	var byRegion map[string]map[time.Time]SeriesPoint
	var err error
	if bucket%RollupBucket == 0 {
		byRegion, err = s.rollupSeries(ctx, c, from, to, bucket)
	} else {
		byRegion, err = s.rawSeries(ctx, c, from, to, bucket)
	}
	if err != nil {
		return nil, err
	}
	regions := slices.Clone(c.Spec.TestRegions)
	var others []string
	for r := range byRegion {
		if !slices.Contains(regions, r) {
			others = append(others, r)
		}
	}
	slices.Sort(others)
	regions = append(regions, others...)
	out := make([]RegionSeries, 0, len(regions))
	for _, r := range regions {
		pts := make([]SeriesPoint, 0, int(to.Sub(from)/bucket))
		for t := from; t.Before(to); t = t.Add(bucket) {
			p, ok := byRegion[r][t]
			if !ok {
				p = SeriesPoint{Start: t}
			}
			pts = append(pts, p)
		}
		out = append(out, RegionSeries{Region: r, Points: pts})
	}
	return out, nil
}

func (s *Store) rawSeries(ctx context.Context, c Check, from, to time.Time, bucket time.Duration) (map[string]map[time.Time]SeriesPoint, error) {
	rows, err := s.q.CheckRawSeries(ctx, dbsqlc.CheckRawSeriesParams{OrgID: c.OrgID, CheckID: c.ID,
		FromTime: from, ToTime: to, BucketSeconds: int32(bucket / time.Second)})
	if err != nil {
		return nil, fmt.Errorf("read the series of check %s: %w", c.ID, err)
	}
	out := map[string]map[time.Time]SeriesPoint{}
	for _, r := range rows {
		if out[r.Region] == nil {
			out[r.Region] = map[time.Time]SeriesPoint{}
		}
		t := r.BucketStart.UTC()
		out[r.Region][t] = SeriesPoint{Start: t, Runs: r.Runs, Failed: r.Failed, P50Ms: unlessNegative(r.P50Ms),
			P95Ms: unlessNegative(r.P95Ms), DNSMs: unlessNegative(r.DnsMs), ConnectMs: unlessNegative(r.ConnectMs),
			TLSMs: unlessNegative(r.TlsMs), FirstByteMs: unlessNegative(r.FirstByteMs)}
	}
	return out, nil
}

func (s *Store) rollupSeries(ctx context.Context, c Check, from, to time.Time, bucket time.Duration) (map[string]map[time.Time]SeriesPoint, error) {
	rows, err := s.q.CheckRollups(ctx, dbsqlc.CheckRollupsParams{OrgID: c.OrgID, CheckID: c.ID, FromTime: from, ToTime: to})
	if err != nil {
		return nil, fmt.Errorf("read the rollups of check %s: %w", c.ID, err)
	}
	merged := map[string]map[time.Time]*rollup{}
	for _, r := range rows {
		if merged[r.Region] == nil {
			merged[r.Region] = map[time.Time]*rollup{}
		}
		// Buckets are aligned on from, which the caller aligned on the bucket.
		t := from.Add(r.BucketStart.Sub(from) / bucket * bucket)
		ru := merged[r.Region][t]
		if ru == nil {
			ru = &rollup{}
			merged[r.Region][t] = ru
		}
		ru.merge(&rollup{runs: r.Runs, failed: r.Failed, dns: phaseSum{r.DnsMsSum, r.DnsN},
			connect: phaseSum{r.ConnectMsSum, r.ConnectN}, tls: phaseSum{r.TlsMsSum, r.TlsN},
			firstByte: phaseSum{r.FirstByteMsSum, r.FirstByteN}})
		ru.addHist(r.LatencyHist)
	}
	out := make(map[string]map[time.Time]SeriesPoint, len(merged))
	for region, points := range merged {
		out[region] = make(map[time.Time]SeriesPoint, len(points))
		for t, ru := range points {
			out[region][t] = SeriesPoint{Start: t, Runs: ru.runs, Failed: ru.failed,
				P50Ms: LatencyQuantile(ru.hist[:], 0.5), P95Ms: LatencyQuantile(ru.hist[:], 0.95), FromHistograms: true,
				DNSMs: ru.dns.mean(), ConnectMs: ru.connect.mean(), TLSMs: ru.tls.mean(), FirstByteMs: ru.firstByte.mean()}
		}
	}
	return out, nil
}

func unlessNegative(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return &v
}

// OverviewHours is how many hourly points an overview's sparkline has: the current hour and
// the 23 before it.
const OverviewHours = 24

// OverviewDays is how many UTC days, today included, the overview's 30-day uptime covers.
const OverviewDays = 30

// CheckOverview is what the console's check list shows of a check besides its record.
type CheckOverview struct {
	CheckID uuid.UUID
	// Uptime24h is the share of passing final results of the last OverviewHours hours, all
	// regions together (rollups); Uptime30d the share of passing judged runs of the last
	// OverviewDays UTC days (the daily counters of the SLA report and status pages). Percent,
	// four decimals; nil without runs.
	Uptime24h, Uptime30d *float64
	Sparkline            []SparkPoint // OverviewHours points, oldest first
	Regions              []RegionView // the regional view, in test_regions order
	LastRunAt            *time.Time   // the due time of the last judged run
	// StatusSince is when the check's state last changed (the evaluator writes it with the
	// state); a check never judged has been PENDING since its creation.
	StatusSince time.Time
}

// SparkPoint is one hour of a sparkline, all regions together.
type SparkPoint struct {
	Start        time.Time
	Runs, Failed int32
	P50Ms        *float64 // from the rollup histograms, within LatencyErrorBound
}

// ChecksOverview returns the overview of the checks of org among ids, as of now, in the order of
// ids; ids that are not checks of org are left out. It makes four queries whatever the number
// of ids.
func (s *Store) ChecksOverview(ctx context.Context, org uuid.UUID, ids []uuid.UUID, now time.Time) ([]CheckOverview, error) {
	checks, err := s.q.OverviewChecks(ctx, dbsqlc.OverviewChecksParams{OrgID: org, CheckIds: ids})
	if err != nil {
		return nil, fmt.Errorf("read the overview's checks: %w", err)
	}
	if len(checks) == 0 {
		return []CheckOverview{}, nil
	}
	found := make([]uuid.UUID, len(checks))
	for i, c := range checks {
		found[i] = c.ID
	}
	to := now.UTC().Truncate(RollupBucket).Add(RollupBucket)
	from := to.Add(-OverviewHours * RollupBucket)
	hours, err := s.q.OverviewRollups(ctx, dbsqlc.OverviewRollupsParams{OrgID: org, CheckIds: found, FromTime: from, ToTime: to})
	if err != nil {
		return nil, fmt.Errorf("read the overview's rollups: %w", err)
	}
	today := now.UTC().Truncate(24 * time.Hour)
	days, err := s.q.OverviewDailyRuns(ctx, dbsqlc.OverviewDailyRunsParams{OrgID: org, CheckIds: found,
		FromDay: today.AddDate(0, 0, 1-OverviewDays)})
	if err != nil {
		return nil, fmt.Errorf("read the overview's daily counters: %w", err)
	}
	regions, err := s.q.OverviewRegions(ctx, dbsqlc.OverviewRegionsParams{OrgID: org, CheckIds: found})
	if err != nil {
		return nil, fmt.Errorf("read the overview's regional views: %w", err)
	}

	spark := map[uuid.UUID]map[time.Time]*rollup{}
	for _, h := range hours {
		if spark[h.CheckID] == nil {
			spark[h.CheckID] = map[time.Time]*rollup{}
		}
		t := h.BucketStart.UTC()
		ru := spark[h.CheckID][t]
		if ru == nil {
			ru = &rollup{}
			spark[h.CheckID][t] = ru
		}
		ru.runs += h.Runs
		ru.failed += h.Failed
		ru.addHist(h.LatencyHist)
	}
	uptime30 := map[uuid.UUID]*float64{}
	for _, d := range days {
		uptime30[d.CheckID] = uptimePercent(d.Runs, d.FailedRuns)
	}
	regionRows := map[uuid.UUID][]dbsqlc.CheckRegionsRow{}
	for _, r := range regions {
		regionRows[r.CheckID] = append(regionRows[r.CheckID], dbsqlc.CheckRegionsRow{Region: r.Region, Passing: r.Passing,
			CheckedAt: r.CheckedAt, ResultID: r.ResultID, ResponseTimeMs: r.ResponseTimeMs, ResultSummary: r.ResultSummary})
	}

	byID := make(map[uuid.UUID]CheckOverview, len(checks))
	for _, c := range checks {
		views, err := regionViews(c.TestRegions, int(c.TestInterval), regionRows[c.ID], now)
		if err != nil {
			return nil, err
		}
		o := CheckOverview{CheckID: c.ID, Uptime30d: uptime30[c.ID], LastRunAt: c.LastRunAt, StatusSince: c.StatusSince,
			Regions: views, Sparkline: make([]SparkPoint, 0, OverviewHours)}
		var runs, failed int64
		for t := from; t.Before(to); t = t.Add(RollupBucket) {
			p := SparkPoint{Start: t}
			if ru := spark[c.ID][t]; ru != nil {
				p.Runs, p.Failed, p.P50Ms = ru.runs, ru.failed, LatencyQuantile(ru.hist[:], 0.5)
				runs, failed = runs+int64(ru.runs), failed+int64(ru.failed)
			}
			o.Sparkline = append(o.Sparkline, p)
		}
		o.Uptime24h = uptimePercent(runs, failed)
		byID[c.ID] = o
	}
	out := make([]CheckOverview, 0, len(byID))
	for _, id := range ids {
		if o, ok := byID[id]; ok {
			out = append(out, o)
			delete(byID, id) // an id given twice is answered once
		}
	}
	return out, nil
}

// uptimePercent is the share of passing runs in percent, four decimals; nil without runs.
func uptimePercent(runs, failed int64) *float64 {
	if runs <= 0 {
		return nil
	}
	p := math.Round(float64(runs-failed)/float64(runs)*100*1e4) / 1e4
	return &p
}
