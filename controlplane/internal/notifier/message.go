package notifier

import (
	"fmt"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
)

// message is the provider-neutral message of an alert; base is the public URL its links start
// with. What the check's latest run found is added by lastRun.
func (a alert) message(base string) provider.Message {
	m := provider.Message{EventID: a.ID.String(), EventType: a.Type, Reminder: a.Reminder, Priority: a.Priority, At: a.At}
	switch {
	case a.Certificate != nil:
		a.certificateMessage(base, &m)
	case a.Check != nil && a.Check.Degraded:
		// Degradation (docs/detection.md): opened while some regions fail, or while the check
		// is slow, and it stays UP; resolved when that ends. Each reason is its own incident: a
		// check may be slow and regionally degraded at once.
		c := a.Check
		m.Kind, m.Name, m.State, m.Regions = "check", c.Name+" (regional degradation)", provider.Open, c.FailingRegions
		m.Summary = "UP, but failing in " + strings.Join(c.FailingRegions, ", ")
		m.DedupKey = "vantage/check/" + c.ID.String() + "/degraded"
		resolved := "passing in every region again"
		if c.Reason == event.DegradedSlow {
			m.Name, m.Regions = c.Name+" (slow)", c.SlowRegions
			m.Summary = "UP, but slower than its threshold in " + strings.Join(c.SlowRegions, ", ")
			m.DedupKey = "vantage/check/" + c.ID.String() + "/slow"
			resolved = "fast again"
		}
		if a.Type == event.TypeUptimeRestored {
			m.State, m.Summary = provider.Resolved, resolved
		}
		m.Target = c.Target
		m.Link = base + "/v1/checks/" + c.ID.String() + "/regions"
	case a.Check != nil:
		c := a.Check
		m.Kind, m.Name, m.State, m.Regions, m.Target = "check", c.Name, provider.Down, c.Regions, c.Target
		if a.Type == event.TypeUptimeUp {
			m.State = provider.Up
		}
		m.Link = base + "/v1/checks/" + c.ID.String()
		m.DedupKey = "vantage/check/" + c.ID.String()
		if inc := c.Incident; inc != nil {
			m.Since, m.Until = inc.StartedAt, inc.EndedAt
			m.DedupKey += "/incident/" + inc.ID.String()
		}
	case a.Heartbeat != nil:
		h := a.Heartbeat
		m.Kind, m.Name, m.State = "heartbeat", h.Name, provider.Down
		if a.Type == event.TypeHeartbeatUp {
			m.State = provider.Up
		}
		last := "never"
		if h.LastSeen != nil {
			last = *h.LastSeen
		}
		expect := ""
		switch {
		case h.ReportPeriod != nil:
			expect = fmt.Sprintf("every %ds", *h.ReportPeriod)
		case h.Cron != nil:
			expect = "on " + *h.Cron
		}
		m.Summary = fmt.Sprintf("last ping %s; expected %s with %ds of grace", last, expect, h.GracePeriod)
		m.Link = base + "/v1/heartbeats/" + h.ID.String()
		m.DedupKey = "vantage/heartbeat/" + h.ID.String()
	case a.Page != nil:
		inc, page := a.Page.Incident, a.Page.Page
		m.Kind, m.Name, m.State = "status page incident", inc.Title+" ("+page.Name+")", provider.Open
		if inc.Started != nil {
			m.Since = *inc.Started
		}
		if a.Type == event.TypeIncidentResolved {
			m.State = provider.Resolved
		}
		if len(inc.Updates) > 0 {
			u := inc.Updates[0]
			m.Summary = strings.TrimSpace(u.Status + ": " + u.Description)
		}
		if inc.Impact != "" {
			m.Summary = strings.TrimSpace(inc.Impact + " — " + m.Summary)
		}
		m.Link = base + "/v1/status_pages/" + page.ID.String() + "/incidents/" + inc.ID
		m.DedupKey = "vantage/status_page_incident/" + inc.ID
	default:
		// A type without a case: its title and summary, as a notice that opens nothing to
		// resolve; its dedup key is the event's own, so that no two such events merge.
		m.Kind, m.Name, m.State, m.Summary = "event", a.Title, provider.Notice, a.Summary
		m.Link = base
		m.DedupKey = "vantage/event/" + a.ID.String()
	}
	return m
}
