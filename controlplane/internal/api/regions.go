package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// regionsStore is what the regional view reads.
type regionsStore interface {
	GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (store.Check, error)
	CheckRegions(ctx context.Context, c store.Check) ([]store.RegionView, error)
}

var _ regionsStore = (*store.Store)(nil)

// regionsHandler serves GET /v1/checks/{check_id}/regions (an extension, docs/detection.md).
type regionsHandler struct{ st regionsStore }

func newRegionsHandler(d Deps) *regionsHandler { return &regionsHandler{st: d.Store} }

// checkRegionJSON is one region of the regional view.
type checkRegionJSON struct {
	Region        string  `json:"region"`
	Status        string  `json:"status"`
	LastCheckedAt *string `json:"last_checked_at"`
	// VerdictHeldSince: a failing verdict resting on this region waits for its canaries.
	VerdictHeldSince *string           `json:"verdict_held_since"`
	LastResult       *regionResultJSON `json:"last_result"`
}

type regionResultJSON struct {
	ID            string                 `json:"id"`
	Passing       bool                   `json:"passing"`
	ResponseTime  *int32                 `json:"response_time"`
	ResultSummary *string                `json:"result_summary"`
	Certificate   *regionCertificateJSON `json:"certificate"`
}

// regionCertificateJSON is the leaf certificate a region's last result was served: regions
// that see different certificates (a CDN edge serving an old one) show it here.
type regionCertificateJSON struct {
	SHA256   string `json:"sha256_fingerprint"`
	NotAfter string `json:"not_after"`
	// Mismatch: another region's last result was served another certificate, so that a
	// client need not compare fingerprints itself to see it.
	Mismatch bool `json:"mismatch"`
}

// get answers the check's state in each of its test regions, in test_regions order.
func (h *regionsHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	chk, err := h.st.GetCheck(c, orgID(c), id, false)
	if err != nil {
		return 0, nil, err
	}
	views, err := h.st.CheckRegions(c, chk)
	if err != nil {
		return 0, nil, err
	}
	served := map[string]bool{} // the leaf fingerprints the regions' last results were served
	for _, v := range views {
		if v.LastResult != nil && v.LastResult.Certificate != nil {
			served[v.LastResult.Certificate.SHA256] = true
		}
	}
	out := make([]checkRegionJSON, 0, len(views))
	for _, v := range views {
		r := checkRegionJSON{Region: v.Region, Status: v.Status, LastCheckedAt: formatTimePtr(v.LastCheckedAt),
			VerdictHeldSince: formatTimePtr(v.VerdictHeldSince)}
		if res := v.LastResult; res != nil {
			r.LastResult = &regionResultJSON{ID: res.ID.String(), Passing: res.Passing, ResponseTime: res.ResponseTimeMs,
				ResultSummary: res.ResultSummary}
			if crt := res.Certificate; crt != nil {
				r.LastResult.Certificate = &regionCertificateJSON{SHA256: crt.SHA256, NotAfter: formatTime(crt.NotAfter),
					Mismatch: len(served) > 1}
			}
		}
		out = append(out, r)
	}
	return http.StatusOK, out, nil
}

// regionHealthStore is what the probe health view reads.
type regionHealthStore interface {
	UnhealthyRegions(ctx context.Context) ([]store.RegionHealth, error)
}

type unhealthyRegionJSON struct {
	Region         string  `json:"region"`
	UnhealthySince *string `json:"unhealthy_since"`
	Reason         string  `json:"reason"`
	Cause          string  `json:"cause"`
}

// unhealthyRegions is GET /v1/regions/unhealthy (an operators' extension, docs/detection.md):
// the regions whose probes are judged broken now, whose results are left out of verdicts.
func unhealthyRegions(st regionHealthStore) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		rs, err := st.UnhealthyRegions(c)
		if err != nil {
			return 0, nil, err
		}
		out := make([]unhealthyRegionJSON, len(rs))
		for i, r := range rs {
			out[i] = unhealthyRegionJSON{Region: r.Region, UnhealthySince: formatTimePtr(r.UnhealthySince), Reason: r.Reason, Cause: r.Cause}
		}
		return http.StatusOK, out, nil
	}
}
