package api

import (
	"context"
	"encoding/csv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/sla"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// slaStore is what SLA reports read.
type slaStore interface {
	SLAReport(ctx context.Context, orgID uuid.UUID, scope store.SLAScope, from, to time.Time) ([]store.SLACheck, error)
}

var _ slaStore = (*store.Store)(nil)

// slaHandler serves the SLA reports (extensions, docs/detection.md): GET /v1/checks/{id}/sla
// and GET /v1/reports/sla, as JSON or CSV.
type slaHandler struct{ st slaStore }

func newSLAHandler(d Deps) *slaHandler { return &slaHandler{st: d.Store} }

// slaFigures are a report's figures; minutes have two decimals, availability four.
type slaFigures struct {
	AvailabilityPercent  float64 `json:"availability_percent"`
	DowntimeMinutes      float64 `json:"downtime_minutes"`
	IncidentCount        int     `json:"incident_count"`
	MTTRMinutes          float64 `json:"mttr_minutes"`
	LongestOutageMinutes float64 `json:"longest_outage_minutes"`
	ObservedMinutes      float64 `json:"observed_minutes"`
	MaintenanceMinutes   float64 `json:"maintenance_minutes"`
}

type slaCheckJSON struct {
	CheckID string `json:"check_id"`
	Name    string `json:"name"`
	slaFigures
	Runs               int64    `json:"runs"`
	FailedRuns         int64    `json:"failed_runs"`
	MaintenanceWindows []string `json:"maintenance_windows"`
}

type slaCheckReportJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
	slaCheckJSON
}

type slaOrgReportJSON struct {
	From   string         `json:"from"`
	To     string         `json:"to"`
	Total  slaFigures     `json:"total"`
	Checks []slaCheckJSON `json:"checks"`
}

func minutes(d time.Duration) float64 { return math.Round(d.Minutes()*100) / 100 }

func figuresOf(r sla.Report) slaFigures {
	return slaFigures{AvailabilityPercent: r.Availability, DowntimeMinutes: minutes(r.Downtime), IncidentCount: r.Incidents,
		MTTRMinutes: minutes(r.MTTR), LongestOutageMinutes: minutes(r.Longest), ObservedMinutes: minutes(r.Observed),
		MaintenanceMinutes: minutes(r.Maintenance)}
}

func slaCheckOf(c store.SLACheck) slaCheckJSON {
	ids := make([]string, len(c.Windows))
	for i, id := range c.Windows {
		ids[i] = id.String()
	}
	return slaCheckJSON{CheckID: c.CheckID.String(), Name: c.Name, slaFigures: figuresOf(c.Report), Runs: c.Runs,
		FailedRuns: c.FailedRuns, MaintenanceWindows: ids}
}

// slaQuery reads from, to (both required, at most 13 months apart) and the format: format=csv
// or json, else CSV when the Accept header asks for text/csv.
func slaQuery(c *gin.Context) (from, to time.Time, csvOut bool, err error) {
	r, err := parseRange(c, false)
	if err != nil {
		return from, to, false, err
	}
	var errs fieldErrors
	if r.From == nil {
		errs = append(errs, fieldError{"from", "is required"})
	}
	if r.To == nil {
		errs = append(errs, fieldError{"to", "is required"})
	}
	switch f := c.Query("format"); f {
	case "csv":
		csvOut = true
	case "json":
	case "":
		csvOut = strings.Contains(c.GetHeader("Accept"), "text/csv")
	default:
		errs = append(errs, fieldError{"format", "must be json or csv"})
	}
	if len(errs) > 0 {
		return from, to, false, errs
	}
	from, to = *r.From, *r.To
	if to.After(from.AddDate(0, 13, 0)) {
		return from, to, false, fieldErrors{{"to", "the range from..to must not exceed 13 months"}}
	}
	return from, to, csvOut, nil
}

// check is GET /v1/checks/{check_id}/sla.
func (h *slaHandler) check(c *gin.Context, id uuid.UUID) (int, any, error) {
	from, to, csvOut, err := slaQuery(c)
	if err != nil {
		return 0, nil, err
	}
	rows, err := h.st.SLAReport(c, orgID(c), store.SLAScope{CheckID: &id}, from, to)
	if err != nil {
		return 0, nil, err
	}
	if csvOut {
		writeSLACSV(c, from, to, rows, nil)
		return selfWritten, nil, nil
	}
	return http.StatusOK, slaCheckReportJSON{From: formatTime(from), To: formatTime(to), slaCheckJSON: slaCheckOf(rows[0])}, nil
}

// org is GET /v1/reports/sla: every check of the organization, or of project_id (a project id,
// or "unassigned"), and their total.
func (h *slaHandler) org(c *gin.Context) (int, any, error) {
	var scope store.SLAScope
	var err error
	if scope.ProjectID, scope.Unassigned, err = projectQuery(c); err != nil {
		return 0, nil, err
	}
	from, to, csvOut, err := slaQuery(c)
	if err != nil {
		return 0, nil, err
	}
	rows, err := h.st.SLAReport(c, orgID(c), scope, from, to)
	if err != nil {
		return 0, nil, err
	}
	reports := make([]sla.Report, len(rows))
	for i, r := range rows {
		reports[i] = r.Report
	}
	total := sla.Total(reports)
	if csvOut {
		writeSLACSV(c, from, to, rows, &total)
		return selfWritten, nil, nil
	}
	out := slaOrgReportJSON{From: formatTime(from), To: formatTime(to), Total: figuresOf(total), Checks: make([]slaCheckJSON, len(rows))}
	for i, r := range rows {
		out.Checks[i] = slaCheckOf(r)
	}
	return http.StatusOK, out, nil
}

// slaCSVHeader names the CSV columns; maintenance_windows are ids separated by spaces.
var slaCSVHeader = []string{"check_id", "name", "from", "to", "availability_percent", "downtime_minutes", "incident_count",
	"mttr_minutes", "longest_outage_minutes", "observed_minutes", "maintenance_minutes", "runs", "failed_runs",
	"maintenance_windows"}

// writeSLACSV writes one row per check and, for an organization report, a last row whose
// check_id is TOTAL.
func writeSLACSV(c *gin.Context, from, to time.Time, rows []store.SLACheck, total *sla.Report) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="sla.csv"`)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	line := func(id, name string, f slaFigures, runs, failed string, windows string) {
		_ = writeCSVRow(w, id, name, formatTime(from), formatTime(to), num(f.AvailabilityPercent), num(f.DowntimeMinutes),
			strconv.Itoa(f.IncidentCount), num(f.MTTRMinutes), num(f.LongestOutageMinutes), num(f.ObservedMinutes),
			num(f.MaintenanceMinutes), runs, failed, windows)
	}
	_ = writeCSVRow(w, slaCSVHeader...)
	var runs, failed int64
	for _, r := range rows {
		j := slaCheckOf(r)
		runs, failed = runs+r.Runs, failed+r.FailedRuns
		line(j.CheckID, j.Name, j.slaFigures, strconv.FormatInt(r.Runs, 10), strconv.FormatInt(r.FailedRuns, 10),
			strings.Join(j.MaintenanceWindows, " "))
	}
	if total != nil {
		line("TOTAL", "", figuresOf(*total), strconv.FormatInt(runs, 10), strconv.FormatInt(failed, 10), "")
	}
	w.Flush()
}
