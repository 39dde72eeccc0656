package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// This file is what the public status page (statuspage/web) reads: the page with what guards
// it (one query), then everything it shows in one batch (one round trip).

// PublicPageAccess is a page as the public handler finds it, with what guards it.
type PublicPageAccess struct {
	OrgID  uuid.UUID
	PageID uuid.UUID
	Page   statuspage.Page
	// PasswordHash is salt(16) || PBKDF2-HMAC-SHA512 key(32) as the API stores it; nil when
	// the page has no password.
	PasswordHash []byte
}

// PublicStatusPage finds the page served at a subdomain (case-insensitive) or, when
// subdomain is empty, at a custom domain (host name, lower case). ErrNotFound when none is.
func (s *Store) PublicStatusPage(ctx context.Context, subdomain, customDomain string) (PublicPageAccess, error) {
	var a PublicPageAccess
	where := `lower(p.subdomain) = lower($1)`
	key := subdomain
	if subdomain == "" {
		where, key = `p.custom_domain = lower($1)`, customDomain
	}
	if key == "" {
		return a, ErrNotFound
	}
	row := s.pool.QueryRow(ctx, `SELECT p.org_id, p.password_hash, `+pageColumns+pageFrom+`WHERE `+where, key)
	it, err := scanPage(&headRow{row: row, head: []any{&a.OrgID, &a.PasswordHash}})
	if err != nil {
		return a, translate(err)
	}
	a.Page = it.Page
	a.PageID = uuid.MustParse(it.Page.ID)
	return a, nil
}

// headRow scans a row whose first columns go to head, the others to the caller's targets.
type headRow struct {
	row  pgx.Row
	head []any
}

func (h *headRow) Scan(dest ...any) error {
	return h.row.Scan(append(append([]any{}, h.head...), dest...)...)
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
	statuspage.Component
	// Checks is how many checks feed the component (0: it has no uptime history).
	Checks int
	// Days are the days with runs, oldest first; days without runs are absent.
	Days []PublicDay
}

// PublicIncident is an incident (or a scheduled maintenance) with its timeline, newest update
// first, and the names of the components it affects.
type PublicIncident struct {
	statuspage.IncidentSummary
	// MaintenanceState is SCHEDULED, IN_PROGRESS or COMPLETED for a scheduled maintenance,
	// "" for an incident.
	MaintenanceState string
	// MaintenanceEnd is start_date + duration for a scheduled maintenance.
	MaintenanceEnd time.Time
	Components     []string
	Updates        []statuspage.IncidentUpdate
}

// PublicPage is everything the public page of a status page shows.
type PublicPage struct {
	Groups     []statuspage.Group
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

// LoadPublicStatusPage reads what the public page shows, in one round trip.
func (s *Store) LoadPublicStatusPage(ctx context.Context, a PublicPageAccess, q PublicPageQuery) (PublicPage, error) {
	var out PublicPage
	if q.HistoryLimit <= 0 {
		q.HistoryLimit = 50
	}
	org, page := a.OrgID, a.PageID
	b := &pgx.Batch{}
	b.Queue(`SELECT `+groupColumns+` FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2
		ORDER BY sort_order NULLS LAST, created_at, id`, org, page).Query(func(rows pgx.Rows) error {
		var err error
		out.Groups, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.Group, error) { return scanGroup(r) })
		return err
	})
	at := map[string]int{}
	b.Queue(`SELECT `+componentColumns+` FROM status_page_components c WHERE c.org_id = $1 AND c.status_page_id = $2`+componentOrder,
		org, page).Query(func(rows pgx.Rows) error {
		var err error
		out.Components, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (PublicComponent, error) {
			d, err := scanComponent(r)
			return PublicComponent{Component: d.Component, Checks: len(d.CheckIDs)}, err
		})
		for i, c := range out.Components {
			at[c.ID] = i
		}
		return err
	})
	if !q.UptimeSince.IsZero() {
		// One row per linked check with its days (offsets from UptimeSince) and counters in
		// arrays, read through the primary key; the days are summed per component here. 50
		// rows of arrays cost a fraction of 4,500 sorted rows of dates.
		since := time.Date(q.UptimeSince.UTC().Year(), q.UptimeSince.UTC().Month(), q.UptimeSince.UTC().Day(), 0, 0, 0, 0, time.UTC)
		b.Queue(`SELECT l.component_id::text, s.offs, s.runs, s.failed
			FROM status_page_components c
			JOIN status_page_component_checks l ON l.org_id = c.org_id AND l.component_id = c.id
			CROSS JOIN LATERAL (SELECT array_agg(d.day - $3::date) AS offs, array_agg(d.runs) AS runs,
					array_agg(d.failed_runs) AS failed
				FROM check_daily_stats d WHERE d.check_id = l.check_id AND d.day >= $3::date) s
			WHERE c.org_id = $1 AND c.status_page_id = $2 AND s.offs IS NOT NULL`,
			org, page, since.Format(time.DateOnly)).Query(func(rows pgx.Rows) error {
			var id string
			var offs, runs, failed []int32
			sums := map[int][]PublicDay{} // component index → days by offset
			_, err := pgx.ForEachRow(rows, []any{&id, &offs, &runs, &failed}, func() error {
				i, ok := at[id]
				if !ok {
					return nil
				}
				days := sums[i]
				for j, off := range offs {
					for int(off) >= len(days) {
						days = append(days, PublicDay{})
					}
					days[off].Runs += int(runs[j])
					days[off].Failed += int(failed[j])
				}
				sums[i] = days
				return nil
			})
			for i, days := range sums {
				list := make([]PublicDay, 0, len(days))
				for off, d := range days {
					if d.Runs > 0 {
						d.Day = since.AddDate(0, 0, off)
						list = append(list, d)
					}
				}
				out.Components[i].Days = list
			}
			return err
		})
	}
	// The incidents shown: unresolved ones, maintenance not completed, and the history.
	const shown = `i.org_id = $1 AND i.status_page_id = $2 AND (
			(i.maintenance_state IS NULL AND i.ended IS NULL) OR i.maintenance_state IN ('SCHEDULED', 'IN_PROGRESS')
			OR i.id IN (SELECT h.id FROM status_page_incidents h WHERE h.org_id = $1 AND h.status_page_id = $2
				AND (h.ended IS NOT NULL OR h.maintenance_state = 'COMPLETED')
				AND coalesce(h.started, h.start_date, h.created_at) >= $3
				ORDER BY coalesce(h.started, h.start_date, h.created_at) DESC, h.id DESC LIMIT $4))`
	since := q.HistorySince
	if since.IsZero() {
		since = time.Unix(0, 0)
	}
	var incidents []PublicIncident
	byID := map[string]int{}
	b.Queue(`SELECT `+incidentColumns+`WHERE `+shown+` ORDER BY coalesce(i.started, i.start_date, i.created_at) DESC, i.id DESC`,
		org, page, since, q.HistoryLimit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r, err := scanIncident(rows)
			if err != nil {
				return err
			}
			inc := PublicIncident{IncidentSummary: r.IncidentSummary, Updates: []statuspage.IncidentUpdate{}}
			if r.state != nil {
				inc.MaintenanceState = *r.state
				start := time.Time(r.ScheduledMaintenance.StartDate)
				inc.MaintenanceEnd = start.Add(time.Duration(r.ScheduledMaintenance.DurationMinutes) * time.Minute)
			}
			byID[inc.ID] = len(incidents)
			incidents = append(incidents, inc)
		}
		return rows.Err()
	})
	b.Queue(`SELECT ic.incident_id::text, c.name FROM status_page_incident_components ic
		JOIN status_page_components c ON c.id = ic.component_id
		JOIN status_page_incidents i ON i.org_id = ic.org_id AND i.id = ic.incident_id
		WHERE `+shown+` ORDER BY c.sort_order NULLS LAST, c.created_at, c.id`, org, page, since, q.HistoryLimit).Query(func(rows pgx.Rows) error {
		var id, name string
		_, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
			if i, ok := byID[id]; ok {
				incidents[i].Components = append(incidents[i].Components, name)
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT `+updateColumns+` FROM status_page_incident_updates u
		JOIN status_page_incidents i ON i.org_id = u.org_id AND i.id = u.incident_id
		WHERE `+shown+updateOrder, org, page, since, q.HistoryLimit).Query(func(rows pgx.Rows) error {
		var u statuspage.IncidentUpdate
		var id, inc uuid.UUID
		var happened, created, updated time.Time
		_, err := pgx.ForEachRow(rows, []any{&id, &inc, &u.Status, &u.Description, &happened, &created, &updated}, func() error {
			u.ID, u.IncidentID, u.DateHappened, u.CreatedAt, u.UpdatedAt = id.String(), inc.String(), spTime(happened), spTime(created), spTime(updated)
			if i, ok := byID[u.IncidentID]; ok {
				incidents[i].Updates = append(incidents[i].Updates, u)
			}
			return nil
		})
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return out, translate(err)
	}
	for _, inc := range incidents {
		switch {
		case inc.MaintenanceState == statuspage.Scheduled || inc.MaintenanceState == statuspage.InProgress:
			out.Maintenance = append(out.Maintenance, inc)
		case inc.MaintenanceState == "" && inc.Ended == nil:
			out.Active = append(out.Active, inc)
		default:
			out.History = append(out.History, inc)
		}
	}
	// Maintenance soonest first (incidents came newest first).
	for i, j := 0, len(out.Maintenance)-1; i < j; i, j = i+1, j-1 {
		out.Maintenance[i], out.Maintenance[j] = out.Maintenance[j], out.Maintenance[i]
	}
	return out, nil
}
