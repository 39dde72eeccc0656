package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// seriesStore is what the console's two reads need: a check's response-time series and the
// overview of a page of checks (extensions, docs/api-extensions.md).
type seriesStore interface {
	GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (store.Check, error)
	CheckSeries(ctx context.Context, c store.Check, from, to time.Time, bucket time.Duration) ([]store.RegionSeries, error)
	ChecksOverview(ctx context.Context, org uuid.UUID, ids []uuid.UUID, now time.Time) ([]store.CheckOverview, error)
}

var _ seriesStore = (*store.Store)(nil)

// seriesHandler serves GET /v1/checks/{check_id}/timeseries and GET /v1/checks/overview.
type seriesHandler struct {
	st  seriesStore
	now func() time.Time
}

func newSeriesHandler(d Deps) *seriesHandler { return &seriesHandler{st: d.Store, now: d.now} }

// seriesRanges are the ranges a series may cover and the width of their buckets: a few dozen
// to a few hundred points each. 7d and 30d are whole hours, read from the hourly rollups.
var seriesRanges = map[string]struct{ span, bucket time.Duration }{
	"1h":  {time.Hour, time.Minute},
	"24h": {24 * time.Hour, 15 * time.Minute},
	"7d":  {7 * 24 * time.Hour, time.Hour},
	"30d": {30 * 24 * time.Hour, 6 * time.Hour},
}

const defaultSeriesRange = "24h"

// maxOverviewIDs bounds the checks of one overview request: a page of the console's list.
const maxOverviewIDs = 100

type seriesJSON struct {
	Range         string `json:"range"`
	BucketSeconds int64  `json:"bucket_seconds"`
	From          string `json:"from"`
	To            string `json:"to"`
	// PercentileErrorBound is the relative error of p50_ms and p95_ms: 0 when they are exact
	// (read from results), store.LatencyErrorBound when read from rollup histograms.
	PercentileErrorBound float64            `json:"percentile_error_bound"`
	Regions              []regionSeriesJSON `json:"regions"`
}

type regionSeriesJSON struct {
	Region string            `json:"region"`
	Points []seriesPointJSON `json:"points"`
}

type seriesPointJSON struct {
	T           string   `json:"t"`
	Runs        int32    `json:"runs"`
	Failed      int32    `json:"failed"`
	P50Ms       *float64 `json:"p50_ms"`
	P95Ms       *float64 `json:"p95_ms"`
	DNSMs       *float64 `json:"dns_ms"`
	ConnectMs   *float64 `json:"connect_ms"`
	TLSMs       *float64 `json:"tls_ms"`
	FirstByteMs *float64 `json:"first_byte_ms"`
}

// timeseries answers a check's series over the range given (default 24h), per region, in
// buckets that end with the one holding now.
func (h *seriesHandler) timeseries(c *gin.Context, id uuid.UUID) (int, any, error) {
	name := c.DefaultQuery("range", defaultSeriesRange)
	rng, known := seriesRanges[name]
	if !known {
		return 0, nil, fieldErrors{{"range", "must be one of 1h, 24h, 7d, 30d"}}
	}
	chk, err := h.st.GetCheck(c, orgID(c), id, false)
	if err != nil {
		return 0, nil, err
	}
	to := h.now().UTC().Truncate(rng.bucket).Add(rng.bucket)
	from := to.Add(-rng.span)
	regions, err := h.st.CheckSeries(c, chk, from, to, rng.bucket)
	if err != nil {
		return 0, nil, err
	}
	out := seriesJSON{Range: name, BucketSeconds: int64(rng.bucket / time.Second), From: formatTime(from), To: formatTime(to),
		Regions: make([]regionSeriesJSON, len(regions))}
	if rng.bucket%store.RollupBucket == 0 {
		out.PercentileErrorBound = store.LatencyErrorBound
	}
	for i, r := range regions {
		pts := make([]seriesPointJSON, len(r.Points))
		for j, p := range r.Points {
			pts[j] = seriesPointJSON{T: formatTime(p.Start), Runs: p.Runs, Failed: p.Failed, P50Ms: roundMs(p.P50Ms),
				P95Ms: roundMs(p.P95Ms), DNSMs: roundMs(p.DNSMs), ConnectMs: roundMs(p.ConnectMs), TLSMs: roundMs(p.TLSMs), FirstByteMs: roundMs(p.FirstByteMs)}
		}
		out.Regions[i] = regionSeriesJSON{Region: r.Region, Points: pts}
	}
	return http.StatusOK, out, nil
}

type checkOverviewJSON struct {
	CheckID      string               `json:"check_id"`
	Uptime24h    *float64             `json:"uptime_24h"`
	Uptime30d    *float64             `json:"uptime_30d"`
	Sparkline24h []sparkPointJSON     `json:"sparkline_24h"`
	Regions      []overviewRegionJSON `json:"regions"`
	LastRunAt    *string              `json:"last_run_at"`
	StatusSince  string               `json:"status_since"`
}

type sparkPointJSON struct {
	T      string   `json:"t"`
	Runs   int32    `json:"runs"`
	Failed int32    `json:"failed"`
	P50Ms  *float64 `json:"p50_ms"`
}

type overviewRegionJSON struct {
	Region    string  `json:"region"`
	Status    string  `json:"status"`
	CheckedAt *string `json:"checked_at"`
}

// overview answers, for each check of check_ids that is one of the organization's, what the
// console's list shows beside the check's record, in the order of check_ids.
func (h *seriesHandler) overview(c *gin.Context) (int, any, error) {
	ids, err := parseOverviewIDs(c.Query("check_ids"))
	if err != nil {
		return 0, nil, err
	}
	views, err := h.st.ChecksOverview(c, orgID(c), ids, h.now())
	if err != nil {
		return 0, nil, err
	}
	out := make([]checkOverviewJSON, len(views))
	for i, v := range views {
		o := checkOverviewJSON{CheckID: v.CheckID.String(), Uptime24h: v.Uptime24h, Uptime30d: v.Uptime30d,
			LastRunAt: formatTimePtr(v.LastRunAt), StatusSince: formatTime(v.StatusSince), Sparkline24h: make([]sparkPointJSON, len(v.Sparkline)),
			Regions: make([]overviewRegionJSON, len(v.Regions))}
		for j, p := range v.Sparkline {
			o.Sparkline24h[j] = sparkPointJSON{T: formatTime(p.Start), Runs: p.Runs, Failed: p.Failed, P50Ms: roundMs(p.P50Ms)}
		}
		for j, r := range v.Regions {
			o.Regions[j] = overviewRegionJSON{Region: r.Region, Status: r.Status, CheckedAt: formatTimePtr(r.LastCheckedAt)}
		}
		out[i] = o
	}
	return http.StatusOK, out, nil
}

// parseOverviewIDs reads check_ids: 1 to maxOverviewIDs check ids separated by commas.
func parseOverviewIDs(s string) ([]uuid.UUID, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fieldErrors{{"check_ids", "is required: check ids separated by commas"}}
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxOverviewIDs {
		return nil, fieldErrors{{"check_ids", "must list at most " + strconv.Itoa(maxOverviewIDs) + " check ids"}}
	}
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		id, err := uuid.Parse(p)
		if err != nil || len(p) != 36 {
			return nil, fieldErrors{{"check_ids", "item " + strconv.Itoa(i+1) + " is not a check id"}}
		}
		ids[i] = id
	}
	return ids, nil
}

// roundMs rounds a duration in milliseconds to two decimals.
func roundMs(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := math.Round(*v*100) / 100
	return &r
}
