package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

//go:embed templates/*.html
var templateFS embed.FS

// templates are the parsed pages, each with the shared layout.
type templates struct {
	pages map[string]*template.Template
}

var pageFiles = []string{"page.html", "history.html", "password.html", "message.html"}

func mustTemplates() *templates {
	t := &templates{pages: map[string]*template.Template{}}
	for _, name := range pageFiles {
		t.pages[name] = template.Must(template.New(name).ParseFS(templateFS, "templates/layout.html", "templates/"+name))
	}
	return t
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render executes a page template into a buffer and writes it, gzip-compressed when the
// client accepts it (the uptime bars compress about tenfold).
func (h *Handler) render(req *request, status int, name string, data any) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := h.tpl.pages[name].ExecuteTemplate(buf, "layout", data); err != nil {
		h.log.ErrorContext(req.r.Context(), "render status page", "err", err, "template", name)
		http.Error(req.w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := req.w.Header()
	if hd.Get("Content-Type") == "" {
		hd.Set("Content-Type", "text/html; charset=utf-8")
	}
	h.write(req, status, buf.Bytes())
}

// write sends body, gzip-compressed when the client accepts it and it is worth it.
func (h *Handler) write(req *request, status int, body []byte) {
	hd := req.w.Header()
	hd.Add("Vary", "Accept-Encoding")
	if len(body) < 1024 || !acceptsGzip(req.r) {
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		req.w.WriteHeader(status)
		if req.r.Method != http.MethodHead {
			_, _ = req.w.Write(body)
		}
		return
	}
	zbuf := bufPool.Get().(*bytes.Buffer)
	zbuf.Reset()
	defer bufPool.Put(zbuf)
	zw := h.gzipWriter(zbuf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	h.gzips.Put(zw)
	hd.Set("Content-Encoding", "gzip")
	hd.Set("Content-Length", strconv.Itoa(zbuf.Len()))
	req.w.WriteHeader(status)
	if req.r.Method != http.MethodHead {
		_, _ = req.w.Write(zbuf.Bytes())
	}
}

func (h *Handler) gzipWriter(buf *bytes.Buffer) *gzip.Writer {
	if zw, ok := h.gzips.Get().(*gzip.Writer); ok {
		zw.Reset(buf)
		return zw
	}
	zw, _ := gzip.NewWriterLevel(buf, gzip.BestSpeed)
	return zw
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// -- views --

type messageView struct {
	Title, Message string
	Back           string // link back to the page, "" for none
	Noindex        bool
}

type passwordView struct {
	Name, Action, Problem string
	Noindex               bool
}

type pageView struct {
	Name         string
	Description  string
	Noindex      bool
	Base         string // "/status/{subdomain}" or ""
	Overall      string
	OverallClass string
	Active       []incidentView
	Maintenance  []incidentView
	Ungrouped    []componentView
	Groups       []groupView
	History      []incidentView
	HistoryDays  int
	UptimeDays   int
	Updated      string
	UpdatedISO   string
	Token        string // the subscribe form's token
}

type groupView struct {
	Name        string
	Description string
	Components  []componentView
}

type componentView struct {
	Name        string
	Status      string
	StatusClass string
	ShowUptime  bool
	HasChecks   bool
	Uptime      string // over the whole bar: "99.98% uptime", or "No data yet"
	Days        int
	// Bars are the <li> elements of the uptime bar, one per day, oldest first, each with its
	// class (b0 no data, b1 ≥ 99.9%, b2 ≥ 99%, b3 ≥ 95%, b4 below) and its label ("2026-11-20:
	// 99.95% uptime"). They are written here rather than by the template: 4,500 bars through
	// html/template cost more than everything else the page does.
	Bars template.HTML
}

type incidentView struct {
	ID          string
	Title       string
	Impact      string
	ImpactClass string
	State       string // maintenance: "Scheduled", "In progress", "Completed"
	Window      string // maintenance: its time window
	When        string // incident: when it started (and ended)
	WhenISO     string
	Components  string
	Updates     []updateView
}

type updateView struct {
	Status      string
	Description string
	When        string
	WhenISO     string
}

// label turns an enum value into words: "PARTIAL_OUTAGE" → "Partial outage".
func label(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "_", " "))
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// statusClass is the CSS class of a component status or impact.
func statusClass(s string) string {
	switch s {
	case statuspage.MajorOutage:
		return "s-major"
	case statuspage.PartialOutage:
		return "s-partial"
	case statuspage.DegradedPerformance:
		return "s-degraded"
	case statuspage.Maintenance:
		return "s-maint"
	}
	return "s-ok"
}

// overallClass is the CSS class of the overall status.
func overallClass(s string) string {
	switch s {
	case statuspage.MajorSystemOutage:
		return "s-major"
	case statuspage.MinorServiceOutage:
		return "s-partial"
	case statuspage.PartiallyDegradedService:
		return "s-degraded"
	case statuspage.ServiceUnderMaintenance:
		return "s-maint"
	}
	return "s-ok"
}

const (
	timeFormat = "Jan 2, 2006 15:04 UTC"
	isoFormat  = "2006-01-02T15:04:05Z"
)

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }
func isoTime(t time.Time) string { return t.UTC().Format(isoFormat) }

// percent formats an uptime ratio, rounding down so that a failure never shows as 100%.
func percent(runs, failed int) string {
	if failed == 0 {
		return "100%"
	}
	p := math.Floor((1-float64(failed)/float64(runs))*10000) / 100
	return strconv.FormatFloat(p, 'f', 2, 64) + "%"
}

// appendPercent appends percent(runs, failed).
func appendPercent(b []byte, runs, failed int) []byte {
	if failed == 0 {
		return append(b, "100%"...)
	}
	p := math.Floor((1-float64(failed)/float64(runs))*10000) / 100
	return append(strconv.AppendFloat(b, p, 'f', 2, 64), '%')
}

func barClass(runs, failed int) string {
	if runs == 0 {
		return "b0"
	}
	up := 1 - float64(failed)/float64(runs)
	switch {
	case up >= 0.999:
		return "b1"
	case up >= 0.99:
		return "b2"
	case up >= 0.95:
		return "b3"
	}
	return "b4"
}

// componentOf builds a component's view with one bar per day of the days ending today (UTC).
func componentOf(c statuspage.PublicComponent, today time.Time, days int) componentView {
	v := componentView{Name: c.Name, Status: label(c.Status), StatusClass: statusClass(c.Status),
		ShowUptime: c.DisplayUptime, HasChecks: c.Checks > 0}
	if !v.ShowUptime || !v.HasChecks {
		return v
	}
	// Labels hold only digits, '-', ':', '.', '%' and letters: nothing to escape.
	bars := make([]byte, 0, days*72)
	v.Days = days
	first := today.AddDate(0, 0, -(days - 1))
	j := 0
	for j < len(c.Days) && c.Days[j].Day.Before(first) {
		j++
	}
	totalRuns, totalFailed := 0, 0
	for i := range days {
		day := first.AddDate(0, 0, i)
		runs, failed := 0, 0
		for j < len(c.Days) && !c.Days[j].Day.After(day) {
			if c.Days[j].Day.Equal(day) {
				runs, failed = c.Days[j].Runs, c.Days[j].Failed
			}
			j++
		}
		bars = append(bars, `<li class="`...)
		bars = append(bars, barClass(runs, failed)...)
		bars = append(bars, `" role="img" aria-label="`...)
		bars = day.AppendFormat(bars, time.DateOnly)
		if runs == 0 {
			bars = append(bars, ": no data"...)
		} else {
			bars = append(bars, ": "...)
			bars = appendPercent(bars, runs, failed)
			bars = append(bars, " uptime"...)
		}
		bars = append(bars, `"></li>`...)
		totalRuns += runs
		totalFailed += failed
	}
	v.Bars = template.HTML(bars) // #nosec: dates, numbers and fixed classes only
	v.Uptime = "No data yet"
	if totalRuns > 0 {
		v.Uptime = percent(totalRuns, totalFailed) + " uptime"
	}
	return v
}

func incidentOf(inc statuspage.PublicIncident) incidentView {
	v := incidentView{ID: inc.ID, Title: inc.Title, Impact: label(inc.Impact), ImpactClass: statusClass(inc.Impact),
		Components: strings.Join(inc.Components, ", ")}
	if inc.MaintenanceState != "" {
		start := time.Time(inc.ScheduledMaintenance.StartDate)
		v.State = label(inc.MaintenanceState)
		v.Window = fmt.Sprintf("%s – %s", fmtTime(start), fmtTime(inc.MaintenanceEnd))
		v.WhenISO = isoTime(start)
	} else {
		started := time.Time(inc.CreatedAt)
		if inc.Started != nil {
			started = time.Time(*inc.Started)
		}
		v.When, v.WhenISO = fmtTime(started), isoTime(started)
		if inc.Ended != nil {
			v.When += " – " + fmtTime(time.Time(*inc.Ended))
		}
	}
	for _, u := range inc.Updates {
		at := time.Time(u.DateHappened)
		v.Updates = append(v.Updates, updateView{Status: label(u.Status), Description: u.Description,
			When: fmtTime(at), WhenISO: isoTime(at)})
	}
	return v
}

func incidentsOf(list []statuspage.PublicIncident) []incidentView {
	out := make([]incidentView, len(list))
	for i, inc := range list {
		out[i] = incidentOf(inc)
	}
	return out
}

// pageViewOf assembles the page's view: components ungrouped first, then by group in order.
func (h *Handler) pageViewOf(req *request, a statuspage.PublicPageAccess, p statuspage.PublicPage, now time.Time) pageView {
	today := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	v := pageView{Name: a.Page.Name, Noindex: a.Page.HideFromSearchEngines, Base: req.base,
		Overall: statuspage.Description(a.Page.Status), OverallClass: overallClass(a.Page.Status),
		Active: incidentsOf(p.Active), Maintenance: incidentsOf(p.Maintenance), History: incidentsOf(p.History),
		HistoryDays: h.cfg.HistoryDays, UptimeDays: h.cfg.UptimeDays, Updated: fmtTime(now), UpdatedISO: isoTime(now),
		Token: h.subscribeToken(a.Page.ID, now)}
	if a.Page.Description != nil {
		v.Description = *a.Page.Description
	}
	groupAt := map[string]int{}
	for _, g := range p.Groups {
		gv := groupView{Name: g.Name}
		if g.Description != nil {
			gv.Description = *g.Description
		}
		groupAt[g.ID] = len(v.Groups)
		v.Groups = append(v.Groups, gv)
	}
	for _, c := range p.Components {
		cv := componentOf(c, today, h.cfg.UptimeDays)
		if c.GroupID != nil {
			if i, ok := groupAt[*c.GroupID]; ok {
				v.Groups[i].Components = append(v.Groups[i].Components, cv)
				continue
			}
		}
		v.Ungrouped = append(v.Ungrouped, cv)
	}
	// Groups without components are not shown.
	groups := v.Groups[:0]
	for _, g := range v.Groups {
		if len(g.Components) > 0 {
			groups = append(groups, g)
		}
	}
	v.Groups = groups
	return v
}
