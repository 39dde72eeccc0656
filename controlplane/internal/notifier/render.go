package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Document is the JSON every channel sends for one event (see the package documentation).
type Document struct {
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	OccurredAt    string         `json:"occurred_at"`
	AlertPriority string         `json:"alert_priority"`
	Reminder      bool           `json:"reminder"`
	Data          map[string]any `json:"data"`
}

func timeString(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// document is the envelope of the alert's webhook document; route fills its data.
func (a alert) document() Document {
	return Document{ID: a.ID.String(), Type: a.Type, OccurredAt: timeString(a.At), AlertPriority: a.Priority,
		Reminder: a.Reminder, Data: map[string]any{}}
}

// route renders an outbox event's document and names its destinations (stage 1). An event
// whose alert cannot be read (newAlert) is a fan-out failure, retried and counted: its
// recipients are unknown, and routing it to nobody would lose it silently.
func (n *Notifier) route(ctx context.Context, ev store.PendingEvent) (store.Fanout, error) {
	var f store.Fanout
	a, err := newAlert(ev.ID, ev.Event, ev.CreatedAt, ev.AlertPriority)
	if err != nil {
		return f, err
	}
	doc := a.document()
	switch e := ev.Event.(type) {
	case event.UptimeDown:
		err = n.uptime(ctx, ev, e.UptimeAlert, &doc, &f)
	case event.UptimeReminder:
		err = n.uptime(ctx, ev, e.UptimeAlert, &doc, &f)
	case event.UptimeUp:
		err = n.uptime(ctx, ev, e.UptimeAlert, &doc, &f)
	case event.UptimeDegraded:
		err = n.uptime(ctx, ev, e.UptimeAlert, &doc, &f)
		degradation(e.RegionalAlert, &doc)
	case event.UptimeRestored:
		err = n.uptime(ctx, ev, e.UptimeAlert, &doc, &f)
		degradation(e.RegionalAlert, &doc)
	case event.HeartbeatDown:
		heartbeat(e.HeartbeatAlert, a, &doc, &f)
	case event.HeartbeatReminder:
		heartbeat(e.HeartbeatAlert, a, &doc, &f)
	case event.HeartbeatUp:
		heartbeat(e.HeartbeatAlert, a, &doc, &f)
	case event.IncidentStarted:
		incident(e.IncidentChange, &doc, &f)
	case event.IncidentUpdated:
		incident(e.IncidentChange, &doc, &f)
	case event.IncidentResolved:
		incident(e.IncidentChange, &doc, &f)
	case event.SubscriberConfirmation:
		doc.Data["status_page"] = mailPageOf(e.StatusPage)
		doc.Data["subscriber"] = subscriberDoc{ID: e.SubscriberID, Email: e.Email}
		f.Mail = &store.MailFanout{SubscriberID: &e.SubscriberID}
	case event.SubscriberNotification:
		noticeData(e, doc.Data)
		f.Mail = &store.MailFanout{PageID: &e.StatusPage.ID, ComponentIDs: e.ComponentIDs()}
	case event.AgentUnhealthy:
		regionHealth(ev, e.RegionHealthChange, &doc, &f)
	case event.AgentHealthy:
		regionHealth(ev, e.RegionHealthChange, &doc, &f)
	case event.RegionUnserved:
		region(ev, e.RegionChange, &doc, &f)
	case event.RegionServed:
		region(ev, e.RegionChange, &doc, &f)
	case event.CustomDomainReleased:
		customDomain(ev, e.CustomDomainChange, &doc, &f)
	case event.CustomDomainUnverified:
		customDomain(ev, e.CustomDomainChange, &doc, &f)
		doc.Data["missing_since"] = timeString(e.MissingSince)
	case event.CertificateExpiring:
		err = n.certificate(ctx, ev, e.CertificateAlert, &doc, &f)
		doc.Data["threshold_days"] = e.ThresholdDays
	case event.CertificateExpired:
		err = n.certificate(ctx, ev, e.CertificateAlert, &doc, &f)
	case event.InvitationCreated:
		doc.Data["invitation"] = invitationDoc{ID: e.InvitationID, Email: e.Email, Role: e.Role}
		doc.Data["organization"] = orgDoc{ID: e.OrgID, Name: e.OrgName}
		doc.Data["invited_by"] = e.InvitedBy
		f.Mail = &store.MailFanout{InvitationID: &e.InvitationID}
	default:
		return f, fmt.Errorf("no route for event %T", ev.Event)
	}
	if err != nil {
		return f, err
	}
	if alerts := a.Alerts; alerts != nil {
		f.WebhookIDs = parseIDs(alerts.Webhook)
		f.UserIDs = parseIDs(alerts.User)
		for _, l := range alerts.Lists() {
			if integration.TypeOfAlertsField(l.Field) != "" {
				f.IntegrationIDs = append(f.IntegrationIDs, parseIDs(*l.IDs)...)
			}
		}
	}
	if f.Body, err = json.Marshal(doc); err != nil {
		return f, fmt.Errorf("encode document: %w", err)
	}
	return f, nil
}

// uptime fills the document of an uptime alert: the check as the API returns it, its regional
// view as of delivery (an extension: GET /v1/checks/{id}/regions) and its incident.
func (n *Notifier) uptime(ctx context.Context, ev store.PendingEvent, a event.UptimeAlert, doc *Document, f *store.Fanout) error {
	snap := a.Check
	if ev.CheckID != nil {
		snap.ID = *ev.CheckID
	}
	f.ResourceKind, f.ResourceID = "check", snap.ID
	rendered, regions, err := n.renderCheck(ctx, ev.OrgID, snap)
	if err != nil {
		return err
	}
	doc.Data["check"] = rendered
	if regions != nil {
		doc.Data["regions"] = regions
	}
	doc.Data["incident"] = nil
	if inc := a.Incident; inc != nil {
		var ended *string
		if inc.EndedAt != nil {
			s := timeString(*inc.EndedAt)
			ended = &s
		}
		doc.Data["incident"] = map[string]any{"id": inc.ID.String(), "check_id": inc.CheckID.String(),
			"started_at": timeString(inc.StartedAt), "ended_at": ended}
	}
	return nil
}

// region fills the document of an agent region event: the region, since when no agent served
// it, and how many of the organization's checks run from it. It goes to every webhook of the
// organization subscribed to its type: it concerns no one resource.
func region(ev store.PendingEvent, c event.RegionChange, doc *Document, f *store.Fanout) {
	doc.Data["region"] = c.Region
	doc.Data["unserved_since"] = timeString(c.UnservedSince)
	doc.Data["checks"] = c.Checks
	f.ResourceKind, f.ResourceID = store.ResourceOrganization, ev.OrgID
}

// regionHealth fills the document of a probe health event (docs/detection.md): the region,
// since when it is (or was) unhealthy, why, and how many of the organization's checks use it.
// Like the region events, it goes to every webhook of the organization subscribed to it.
func regionHealth(ev store.PendingEvent, c event.RegionHealthChange, doc *Document, f *store.Fanout) {
	doc.Data["region"] = c.Region
	doc.Data["unhealthy_since"] = timeString(c.UnhealthySince)
	doc.Data["reason"] = c.Reason
	doc.Data["checks"] = c.Checks
	f.ResourceKind, f.ResourceID = store.ResourceOrganization, ev.OrgID
}

// customDomain fills the document of a custom domain event: the status page and the domain it
// lost. Like the region events, it goes to every webhook of the organization subscribed to it:
// the page's owners must hear that it no longer answers on (or may no longer claim) the domain,
// whichever webhooks the page is associated with.
func customDomain(ev store.PendingEvent, c event.CustomDomainChange, doc *Document, f *store.Fanout) {
	doc.Data["status_page"] = pageRefDoc{ID: c.StatusPage.ID, Name: c.StatusPage.Name}
	doc.Data["custom_domain"] = c.Domain
	f.ResourceKind, f.ResourceID = store.ResourceOrganization, ev.OrgID
}

// heartbeat fills the document of a heartbeat alert: the heartbeat as the API returns it.
func heartbeat(h event.HeartbeatAlert, a alert, doc *Document, f *store.Fanout) {
	f.ResourceKind, f.ResourceID = "heartbeat", a.Heartbeat.ID
	doc.Data["heartbeat"] = h.Heartbeat
}

// incident fills the document of a status page incident event: the incident as the API returns
// it, and its page.
func incident(c event.IncidentChange, doc *Document, f *store.Fanout) {
	f.ResourceKind, f.ResourceID = "status_page", c.StatusPage.ID
	doc.Data["incident"] = c.Incident
	doc.Data["status_page"] = pageRefDoc{ID: c.StatusPage.ID, Name: c.StatusPage.Name}
}

// The data members of the e-mail events' documents.
type (
	pageRefDoc struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	}
	mailPageDoc struct {
		ID        uuid.UUID `json:"id"`
		Name      string    `json:"name"`
		Subdomain string    `json:"subdomain"`
	}
	subscriberDoc struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email_address"`
	}
	noticeIncidentDoc struct {
		ID              uuid.UUID  `json:"id"`
		Title           string     `json:"title"`
		Impact          string     `json:"impact"`
		StartDate       *time.Time `json:"start_date,omitempty"`
		DurationMinutes *int       `json:"duration_minutes,omitempty"`
	}
	noticeUpdateDoc struct {
		ID           uuid.UUID `json:"id"`
		Status       string    `json:"status"`
		Description  string    `json:"description"`
		DateHappened time.Time `json:"date_happened"`
	}
	noticeComponentDoc struct {
		ID     uuid.UUID `json:"id"`
		Name   string    `json:"name"`
		Status string    `json:"status"`
	}
	invitationDoc struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email"`
		Role  string    `json:"role"`
	}
	orgDoc struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	}
)

func mailPageOf(p event.MailPage) mailPageDoc { return mailPageDoc(p) }

// noticeData fills the data of a subscriber notification.
func noticeData(n event.SubscriberNotification, data map[string]any) {
	inc := noticeIncidentDoc{ID: n.Incident.ID, Title: n.Incident.Title, Impact: n.Incident.Impact}
	if n.Incident.StartDate != nil && n.Incident.DurationMinutes != nil {
		start := n.Incident.StartDate.UTC()
		inc.StartDate, inc.DurationMinutes = &start, n.Incident.DurationMinutes
	}
	comps := make([]noticeComponentDoc, len(n.Components))
	for i, c := range n.Components {
		comps[i] = noticeComponentDoc(c)
	}
	data["reason"] = n.Reason
	data["status_page"] = mailPageOf(n.StatusPage)
	data["incident"] = inc
	data["update"] = noticeUpdateDoc{ID: n.Update.ID, Status: n.Update.Status, Description: n.Update.Description,
		DateHappened: n.Update.DateHappened.UTC()}
	data["components"] = comps
	data["component_ids"] = n.ComponentIDs()
}

// renderCheck is the check as the API returns it and its regional view, or the snapshot and
// no regions (nil) when the check is gone.
func (n *Notifier) renderCheck(ctx context.Context, orgID uuid.UUID, snap event.Check) (any, []regionDoc, error) {
	if n.render != nil {
		c, err := n.st.GetCheck(ctx, orgID, snap.ID, false)
		switch {
		case err == nil:
			views, err := n.st.CheckRegions(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			regions := make([]regionDoc, 0, len(views))
			for _, v := range views {
				regions = append(regions, regionDocOf(v))
			}
			return n.render(c), regions, nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, fmt.Errorf("read check %s: %w", snap.ID, err)
		}
	}
	out := map[string]any{}
	if len(snap.Alerts) > 0 {
		if err := json.Unmarshal(snap.Alerts, &out); err != nil {
			return nil, nil, fmt.Errorf("the alert lists of check %s: %w", snap.ID, err)
		}
		if out == nil { // the lists were null
			out = map[string]any{}
		}
	}
	out["id"], out["name"], out["check_type"], out["url"] = snap.ID.String(), snap.Name, snap.Kind, snap.URL
	out["status"], out["alert_priority"] = snap.State, snap.AlertPriority
	return out, nil, nil
}

// regionDoc is one region of a check's regional view, as GET /v1/checks/{id}/regions shows it.
type regionDoc struct {
	Region        string        `json:"region"`
	Status        string        `json:"status"`
	LastCheckedAt *string       `json:"last_checked_at"`
	LastResult    *regionResult `json:"last_result"`
}

type regionResult struct {
	ID            string  `json:"id"`
	Passing       bool    `json:"passing"`
	ResponseTime  *int32  `json:"response_time"`
	ResultSummary *string `json:"result_summary"`
}

func regionDocOf(v store.RegionView) regionDoc {
	d := regionDoc{Region: v.Region, Status: v.Status}
	if v.LastCheckedAt != nil {
		s := timeString(*v.LastCheckedAt)
		d.LastCheckedAt = &s
	}
	if r := v.LastResult; r != nil {
		d.LastResult = &regionResult{ID: r.ID.String(), Passing: r.Passing, ResponseTime: r.ResponseTimeMs, ResultSummary: r.ResultSummary}
	}
	return d
}

// degradation fills what uptime.degraded and uptime.restored add to the uptime data: why, and
// the regions that made it (failing_regions for regional, slow_regions for slow).
func degradation(a event.RegionalAlert, doc *Document) {
	doc.Data["reason"] = a.Reason
	doc.Data["failing_regions"] = regionList(a.FailingRegions)
	doc.Data["slow_regions"] = regionList(a.SlowRegions)
}

// regionList is a list of regions that is never null.
func regionList(rs []string) []string {
	if rs == nil {
		return []string{}
	}
	return rs
}

// parseIDs keeps the ids that are UUIDs (ours); others cannot name a webhook or user.
func parseIDs(ss []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ss))
	for _, s := range ss {
		if id, err := uuid.Parse(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}
