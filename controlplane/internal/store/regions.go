package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Regional states of a check (docs/detection.md "Regional view").
const (
	RegionUp     = "UP"
	RegionDown   = "DOWN"
	RegionNoData = "NO_DATA"
)

// RegionView is a check's state in one of its test regions: the region's last final result
// and what it says. LastCheckedAt and LastResult are nil when the region never reported.
type RegionView struct {
	Region        string
	Status        string // RegionUp, RegionDown or RegionNoData
	LastCheckedAt *time.Time
	LastResult    *RegionResult
	// VerdictHeldSince is when a failing verdict of the check that rests on this region alone
	// began waiting for the region's next canary round (docs/detection.md "Hold-off"); nil
	// when none waits.
	VerdictHeldSince *time.Time
}

// RegionResult is the last final result of a region, as the regional view shows it.
type RegionResult struct {
	ID             uuid.UUID
	Passing        bool
	ResponseTimeMs *int32
	ResultSummary  *string
	// Certificate is the leaf certificate the result was served; nil when it had none.
	Certificate *TLSCertificate
}

// RegionStaleAfter is how old a region's last final result may be before the region shows
// NO_DATA: three test intervals, and at least five minutes (a run's deadline and a
// confirmation run fit in it).
func RegionStaleAfter(testInterval int) time.Duration {
	return max(3*time.Duration(testInterval)*time.Second, 5*time.Minute)
}

// CheckRegions is the regional view of a check: one entry per test region, in the order of
// test_regions, as of now. A region with no final result within RegionStaleAfter is NO_DATA
// (its last result, if any, is still shown).
func (s *Store) CheckRegions(ctx context.Context, c Check) ([]RegionView, error) {
	rows, err := s.q.CheckRegions(ctx, dbsqlc.CheckRegionsParams{OrgID: c.OrgID, CheckID: c.ID})
	if err != nil {
		return nil, fmt.Errorf("read the regional view: %w", err)
	}
	views, err := regionViews(c.Spec.TestRegions, c.Spec.TestInterval, rows, s.now())
	if err != nil {
		return nil, err
	}
	held, err := s.q.HeldRegions(ctx, dbsqlc.HeldRegionsParams{OrgID: c.OrgID, CheckID: c.ID})
	if err != nil {
		return nil, fmt.Errorf("read the held verdicts: %w", err)
	}
	for _, h := range held {
		for i := range views {
			if views[i].Region == h.Region {
				at := h.HeldSince
				views[i].VerdictHeldSince = &at
			}
		}
	}
	return views, nil
}

func regionViews(regions []string, interval int, rows []dbsqlc.CheckRegionsRow, now time.Time) ([]RegionView, error) {
	out := make([]RegionView, 0, len(regions))
	stale := RegionStaleAfter(interval)
	for _, region := range regions {
		v := RegionView{Region: region, Status: RegionNoData}
		if i := slices.IndexFunc(rows, func(r dbsqlc.CheckRegionsRow) bool { return r.Region == region }); i >= 0 {
			r := rows[i]
			at := r.CheckedAt
			v.LastCheckedAt = &at
			v.LastResult = &RegionResult{ID: r.ResultID, Passing: r.Passing, ResponseTimeMs: r.ResponseTimeMs, ResultSummary: r.ResultSummary}
			if len(r.TlsLeaf) > 0 && string(r.TlsLeaf) != "null" {
				var leaf TLSCertificate
				if err := json.Unmarshal(r.TlsLeaf, &leaf); err != nil {
					return nil, fmt.Errorf("region %s: certificate of result %s: %w", region, r.ResultID, err)
				}
				v.LastResult.Certificate = &leaf
			}
			switch {
			case now.Sub(at) > stale:
			case r.Passing:
				v.Status = RegionUp
			default:
				v.Status = RegionDown
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// saveRegionResults records the batch's final attempts in the regional view, the latest per
// check and region. Failures of the agent itself (its browser crashed) are left out, as the
// evaluator leaves them out of verdicts: they say nothing about the target.
func saveRegionResults(ctx context.Context, q *dbsqlc.Queries, rows []ResultRow) error {
	type key struct {
		check  uuid.UUID
		region string
	}
	latest := map[key]int{}
	var order []key
	for i, r := range rows {
		if !r.IsFinalAttempt || (r.FailureSource != nil && *r.FailureSource == wire.FailureSourceAgent) {
			continue
		}
		k := key{r.CheckID, r.Region}
		j, ok := latest[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || r.CheckedAt.After(rows[j].CheckedAt) {
			latest[k] = i
		}
	}
	if len(order) == 0 {
		return nil
	}
	var arg dbsqlc.SaveRegionResultsParams
	for _, k := range order {
		r := rows[latest[k]]
		ms := int32(-1)
		if r.ResponseTimeMs >= 0 && r.ResponseTimeMs < math.MaxInt32 {
			ms = int32(math.Round(r.ResponseTimeMs))
		}
		summary := ""
		if r.ResultSummary != nil {
			summary = *r.ResultSummary
		}
		arg.OrgIds, arg.CheckIds, arg.Regions = append(arg.OrgIds, r.OrgID), append(arg.CheckIds, r.CheckID), append(arg.Regions, r.Region)
		arg.Passing, arg.CheckedAts, arg.ResultIds = append(arg.Passing, r.Passing), append(arg.CheckedAts, r.CheckedAt), append(arg.ResultIds, r.ID)
		arg.ResponseTimes, arg.Summaries = append(arg.ResponseTimes, ms), append(arg.Summaries, summary)
	}
	if err := q.SaveRegionResults(ctx, arg); err != nil {
		return fmt.Errorf("save the regional view: %w", err)
	}
	return nil
}

// Degradation is a check's regional degradation (check_degradations): a streak of passing
// runs with failing regions, since the first of them; Degraded once it was confirmed.
type Degradation struct {
	OrgID, CheckID uuid.UUID
	Since          time.Time
	Degraded       bool
	FailingRegions []string
}

// Degradations returns the degradation rows of the given (locked) checks, by check id.
func (p *PipelineTx) Degradations(ctx context.Context, checks []*PipelineCheck) (map[uuid.UUID]Degradation, error) {
	out := map[uuid.UUID]Degradation{}
	if len(checks) == 0 {
		return out, nil
	}
	arg := dbsqlc.DegradationsParams{OrgIds: make([]uuid.UUID, len(checks)), CheckIds: make([]uuid.UUID, len(checks))}
	for i, c := range checks {
		arg.OrgIds[i], arg.CheckIds[i] = c.OrgID, c.ID
	}
	rows, err := p.q().Degradations(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read degradations: %w", err)
	}
	for _, r := range rows {
		out[r.CheckID] = Degradation(r)
	}
	return out, nil
}

// SaveDegradation writes a check's degradation; a zero Since deletes it (no streak).
func (p *PipelineTx) SaveDegradation(ctx context.Context, d Degradation) error {
	var err error
	if d.Since.IsZero() {
		err = p.q().DeleteDegradation(ctx, dbsqlc.DeleteDegradationParams{OrgID: d.OrgID, CheckID: d.CheckID})
	} else {
		regions := d.FailingRegions
		if regions == nil {
			regions = []string{}
		}
		err = p.q().SaveDegradation(ctx, dbsqlc.SaveDegradationParams{OrgID: d.OrgID, CheckID: d.CheckID,
			Since: d.Since, Degraded: d.Degraded, FailingRegions: regions})
	}
	if err != nil {
		return fmt.Errorf("save degradation: %w", err)
	}
	return nil
}

// Slowness is a check's streak of slow runs (check_slowness, docs/detection.md "Slowness"):
// passing runs slower than its degraded_response_time_ms in the quorum's regions, since the
// first of them; Degraded once it was confirmed.
type Slowness struct {
	OrgID, CheckID uuid.UUID
	Since          time.Time
	Degraded       bool
	SlowRegions    []string
}

// Slowness returns the slowness rows of the given (locked) checks, by check id.
func (p *PipelineTx) Slowness(ctx context.Context, checks []*PipelineCheck) (map[uuid.UUID]Slowness, error) {
	out := map[uuid.UUID]Slowness{}
	if len(checks) == 0 {
		return out, nil
	}
	arg := dbsqlc.SlownessParams{OrgIds: make([]uuid.UUID, len(checks)), CheckIds: make([]uuid.UUID, len(checks))}
	for i, c := range checks {
		arg.OrgIds[i], arg.CheckIds[i] = c.OrgID, c.ID
	}
	rows, err := p.q().Slowness(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read slowness: %w", err)
	}
	for _, r := range rows {
		out[r.CheckID] = Slowness(r)
	}
	return out, nil
}

// SaveSlowness writes a check's slowness; a zero Since deletes it (no streak).
func (p *PipelineTx) SaveSlowness(ctx context.Context, sl Slowness) error {
	var err error
	if sl.Since.IsZero() {
		err = p.q().DeleteSlowness(ctx, dbsqlc.DeleteSlownessParams{OrgID: sl.OrgID, CheckID: sl.CheckID})
	} else {
		regions := sl.SlowRegions
		if regions == nil {
			regions = []string{}
		}
		err = p.q().SaveSlowness(ctx, dbsqlc.SaveSlownessParams{OrgID: sl.OrgID, CheckID: sl.CheckID,
			Since: sl.Since, Degraded: sl.Degraded, SlowRegions: regions})
	}
	if err != nil {
		return fmt.Errorf("save slowness: %w", err)
	}
	return nil
}

// degradedReasons says why a check of the organization is degraded now: regional, slow, both
// or none.
func (s *Store) degradedReasons(ctx context.Context, orgID, checkID uuid.UUID) ([]string, error) {
	reasons, err := s.q.DegradedReasons(ctx, dbsqlc.DegradedReasonsParams{OrgID: orgID, CheckID: checkID})
	if err != nil {
		return nil, fmt.Errorf("read degradation of check %s: %w", checkID, err)
	}
	return reasons, nil
}
