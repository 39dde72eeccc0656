package statuspage

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// What the public reads: the JSON summary (GetStatusPageSummary) and the public page
// (statuspage/web: PublicStatusPage, then LoadPublicStatusPage).

// GetStatusPageSummary assembles the public summary of the page served at subdomain. Private
// pages (password or IP restriction) are store.ErrNotFound, like pages that do not exist.
func (s *Service) GetStatusPageSummary(ctx context.Context, subdomain string) (Summary, error) {
	r := s.st.StatusPages()
	row, err := r.StatusPageByHost(ctx, subdomain, "")
	if err != nil {
		return Summary{}, err
	}
	page := PageOf(row)
	if page.Private {
		return Summary{}, store.ErrNotFound
	}
	rows, err := r.PageComponents(ctx, row.OrgID, row.ID)
	if err != nil {
		return Summary{}, err
	}
	comps := make([]Component, len(rows))
	for i, c := range rows {
		comps[i] = ComponentDetailOf(c).Component
	}
	current, err := r.CurrentIncidents(ctx, row.OrgID, row.ID)
	if err != nil {
		return Summary{}, err
	}
	var active []IncidentBase
	var maint []store.PageIncident
	var maintIDs []uuid.UUID
	for _, inc := range current {
		if inc.MaintenanceState == nil {
			active = append(active, IncidentSummaryOf(inc).IncidentBase)
			continue
		}
		maint, maintIDs = append(maint, inc), append(maintIDs, inc.ID)
	}
	var scheduled []ScheduledMaintenance
	if len(maint) > 0 {
		affected, err := r.IncidentComponents(ctx, row.OrgID, maintIDs...)
		if err != nil {
			return Summary{}, err
		}
		for _, inc := range maint {
			scheduled = append(scheduled, MaintenanceOf(inc, affected[inc.ID]))
		}
	}
	return BuildSummary(page, comps, active, scheduled), nil
}

// PublicPageAccess is a page as the public handler finds it, with what guards it.
type PublicPageAccess struct {
	OrgID  uuid.UUID
	PageID uuid.UUID
	Page   Page
	// PasswordHash is salt(16) || PBKDF2-HMAC-SHA512 key(32) as the API stores it; nil when
	// the page has no password.
	PasswordHash []byte
}

// PublicStatusPage finds the page served at a subdomain (case-insensitive) or, when
// subdomain is empty, at a custom domain (host name, lower case). store.ErrNotFound when none is.
func (s *Service) PublicStatusPage(ctx context.Context, subdomain, customDomain string) (PublicPageAccess, error) {
	p, err := s.st.StatusPages().StatusPageByHost(ctx, subdomain, customDomain)
	if err != nil {
		return PublicPageAccess{}, err
	}
	return PublicPageAccess{OrgID: p.OrgID, PageID: p.ID, Page: PageOf(p), PasswordHash: p.PasswordHash}, nil
}

// PublicDay is one day of a component's uptime: the runs its linked checks got a verdict for
// and how many failed.
type PublicDay struct {
	Day    time.Time // UTC midnight
	Runs   int
	Failed int
}

// PublicComponent is a component as the public page shows it.
type PublicComponent struct {
	Component
	// Checks is how many checks feed the component (0: it has no uptime history).
	Checks int
	// Days are the days with runs, oldest first; days without runs are absent.
	Days []PublicDay
}

// PublicIncident is an incident (or a scheduled maintenance) with its timeline, newest update
// first, and the names of the components it affects.
type PublicIncident struct {
	IncidentSummary
	// MaintenanceState is SCHEDULED, IN_PROGRESS or COMPLETED for a scheduled maintenance,
	// "" for an incident.
	MaintenanceState string
	// MaintenanceEnd is start_date + duration for a scheduled maintenance.
	MaintenanceEnd time.Time
	Components     []string
	Updates        []IncidentUpdate
}

// PublicPage is everything the public page of a status page shows.
type PublicPage struct {
	Groups     []Group
	Components []PublicComponent // display order: ungrouped first, then by group
	// Active are unresolved incidents (not maintenance), newest first.
	Active []PublicIncident
	// Maintenance is scheduled and in-progress maintenance, soonest first.
	Maintenance []PublicIncident
	// History is resolved incidents and completed maintenance since the query's HistorySince,
	// newest first, at most HistoryLimit.
	History []PublicIncident
}

// PublicPageQuery says how much of a page to load.
type PublicPageQuery struct {
	// UptimeSince is the first day of uptime history to load; zero loads none.
	UptimeSince time.Time
	// HistorySince bounds the history by the incident's start; zero means no bound.
	HistorySince time.Time
	// HistoryLimit caps the history (default 50).
	HistoryLimit int
}

// LoadPublicStatusPage reads what the public page shows.
func (s *Service) LoadPublicStatusPage(ctx context.Context, a PublicPageAccess, q PublicPageQuery) (PublicPage, error) {
	var out PublicPage
	if q.HistoryLimit <= 0 {
		q.HistoryLimit = 50
	}
	r := s.st.StatusPages()
	groups, err := r.PageGroups(ctx, a.OrgID, a.PageID)
	if err != nil {
		return out, err
	}
	out.Groups = groupsOf(groups)
	comps, err := r.PageComponents(ctx, a.OrgID, a.PageID)
	if err != nil {
		return out, err
	}
	out.Components = make([]PublicComponent, len(comps))
	at := make(map[uuid.UUID]int, len(comps))
	for i, c := range comps {
		out.Components[i] = PublicComponent{Component: ComponentDetailOf(c).Component, Checks: len(c.CheckIDs)}
		at[c.ID] = i
	}
	if !q.UptimeSince.IsZero() {
		rows, err := r.PageUptime(ctx, a.OrgID, a.PageID, q.UptimeSince)
		if err != nil {
			return out, err
		}
		since := q.UptimeSince.UTC()
		addDays(out.Components, at, rows, time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC))
	}
	since := q.HistorySince
	if since.IsZero() {
		since = time.Unix(0, 0)
	}
	shown, err := r.PageShownIncidents(ctx, a.OrgID, a.PageID, since, q.HistoryLimit)
	if err != nil {
		return out, err
	}
	for _, inc := range shown.Incidents {
		p := PublicIncident{IncidentSummary: IncidentSummaryOf(inc), Components: shown.Components[inc.ID],
			Updates: updatesOf(shown.Updates[inc.ID])}
		if inc.MaintenanceState != nil {
			p.MaintenanceState = *inc.MaintenanceState
			p.MaintenanceEnd = inc.StartDate.Add(time.Duration(*inc.DurationMinutes) * time.Minute)
		}
		switch {
		case p.MaintenanceState == Scheduled || p.MaintenanceState == InProgress:
			out.Maintenance = append(out.Maintenance, p)
		case p.MaintenanceState == "" && p.Ended == nil:
			out.Active = append(out.Active, p)
		default:
			out.History = append(out.History, p)
		}
	}
	// Maintenance soonest first (incidents came newest first).
	for i, j := 0, len(out.Maintenance)-1; i < j; i, j = i+1, j-1 {
		out.Maintenance[i], out.Maintenance[j] = out.Maintenance[j], out.Maintenance[i]
	}
	return out, nil
}

// addDays sums the checks' days into their components' Days (at maps a component id to its
// index in comps); since is the UTC day the offsets count from.
func addDays(comps []PublicComponent, at map[uuid.UUID]int, rows []store.UptimeRow, since time.Time) {
	sums := map[int][]PublicDay{} // component index → days by offset
	for _, row := range rows {
		i, ok := at[row.ComponentID]
		if !ok {
			continue
		}
		days := sums[i]
		for j, off := range row.Offsets {
			for int(off) >= len(days) {
				days = append(days, PublicDay{})
			}
			days[off].Runs += int(row.Runs[j])
			days[off].Failed += int(row.Failed[j])
		}
		sums[i] = days
	}
	for i, days := range sums {
		list := make([]PublicDay, 0, len(days))
		for off, d := range days {
			if d.Runs > 0 {
				d.Day = since.AddDate(0, 0, off)
				list = append(list, d)
			}
		}
		comps[i].Days = list
	}
}
