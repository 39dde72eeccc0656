package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// alert is one outbox event said once, typed: the facts that the webhook document's envelope,
// routing, each provider's message and the alert e-mail are rendered from. It is built from
// the typed event (newAlert), as alertmanager's notify.GetTemplateData builds its template data
// from the alerts, so that no channel reads another channel's rendering: a JSON name changed
// in the webhook document cannot drop a detail from a Slack message, nor a recipient.
//
// The resources an event carries as the API renders them (a heartbeat, a status page incident,
// a check's stored alert lists) are decoded here, once, into the few facts alerts say; one that
// does not decode is an error, never an alert with its facts or recipients left out.
type alert struct {
	ID       uuid.UUID // the outbox id
	Type     string    // as webhooks subscribe to it, e.g. uptime.down
	At       time.Time // when it happened
	Priority string    // LOW or HIGH (the outbox row's alert_priority)
	Reminder bool
	// Alerts are the check's or heartbeat's alert lists; nil for other events.
	Alerts *check.Alerts
	// By kind of event, one of these is set; none for an event type without a case
	// (see describer).
	Check     *alertCheck     // uptime.*
	Heartbeat *alertHeartbeat // heartbeat.*
	Page      *alertPage      // status_page.incident.*
	// Certificate is set, beside Check, for certificate.expiring and certificate.expired.
	Certificate *alertCertificate
	// Title and Summary say an event of a type without a case of its own.
	Title, Summary string
}

// alertCheck is what alerts say of a check: the snapshot of the event until withCheck reads
// the check as it is now.
type alertCheck struct {
	ID       uuid.UUID
	Name     string
	URL      *string  // the URL of uptime, browser and WebSocket checks
	Target   string   // what it probes: the URL, the DNS domain or the TCP host:port; "" when none
	Regions  []string // where it runs (test_regions); nil for a snapshot
	Incident *event.CheckIncident
	// Degraded is set for uptime.degraded and uptime.restored, with why (event.Degraded…) and
	// the regions that made it: failing ones (regional) or slow ones (slow); none on
	// uptime.restored.
	Degraded       bool
	Reason         string
	FailingRegions []string
	SlowRegions    []string
}

// alertHeartbeat is what alerts say of a heartbeat, from its API rendering.
type alertHeartbeat struct {
	ID           uuid.UUID     `json:"id"`
	Name         string        `json:"name"`
	LastSeen     *string       `json:"last_seen"`
	ReportPeriod *int          `json:"report_period"`
	Cron         *string       `json:"report_period_cron"`
	GracePeriod  int           `json:"grace_period"`
	Alerts       *check.Alerts `json:"alerts"`
}

// alertPage is what alerts say of a status page incident, from its API rendering.
type alertPage struct {
	Page     event.PageRef
	Incident struct {
		ID      string     `json:"id"`
		Title   string     `json:"title"`
		Impact  string     `json:"impact"`
		Started *time.Time `json:"started"`
		Updates []struct {
			Status      string `json:"status"`
			Description string `json:"description"`
		} `json:"updates"` // newest first
	}
}

// describer is an event type that says itself in words. An event type without a case in
// newAlert is said by its Describe when it has one, else by its type; so a new type needs no
// case to reach every channel, and at most one small one to say more.
type describer interface {
	Describe() (title, summary string)
}

// newAlert builds the alert of an outbox event. at is the event's time when it has none of its
// own (when it was queued).
func newAlert(id uuid.UUID, ev event.Event, at time.Time, priority string) (alert, error) {
	a := alert{ID: id, Type: ev.Type(), At: ev.At(), Priority: priority}
	if a.At.IsZero() {
		a.At = at
	}
	var err error
	switch e := ev.(type) {
	case event.UptimeDown:
		err = a.uptime(e.UptimeAlert)
	case event.UptimeReminder:
		a.Reminder = true
		err = a.uptime(e.UptimeAlert)
	case event.UptimeUp:
		err = a.uptime(e.UptimeAlert)
	case event.UptimeDegraded:
		err = a.degraded(e.RegionalAlert)
	case event.UptimeRestored:
		err = a.degraded(e.RegionalAlert)
	case event.HeartbeatDown:
		err = a.heartbeat(e.HeartbeatAlert)
	case event.HeartbeatReminder:
		a.Reminder = true
		err = a.heartbeat(e.HeartbeatAlert)
	case event.HeartbeatUp:
		err = a.heartbeat(e.HeartbeatAlert)
	case event.IncidentStarted:
		err = a.page(e.IncidentChange)
	case event.IncidentUpdated:
		err = a.page(e.IncidentChange)
	case event.IncidentResolved:
		err = a.page(e.IncidentChange)
	case event.CertificateExpiring:
		err = a.certificate(e.CertificateAlert, &e.ThresholdDays)
	case event.CertificateExpired:
		err = a.certificate(e.CertificateAlert, nil)
	default:
		a.Title = a.Type
		if d, ok := ev.(describer); ok {
			a.Title, a.Summary = d.Describe()
		}
	}
	if err != nil {
		return alert{}, fmt.Errorf("read %s event %s: %w", a.Type, id, err)
	}
	return a, nil
}

func (a *alert) uptime(u event.UptimeAlert) error {
	c := u.Check
	a.Check = &alertCheck{ID: c.ID, Name: c.Name, URL: c.URL, Incident: u.Incident}
	if c.URL != nil {
		a.Check.Target = *c.URL
	}
	if len(c.Alerts) > 0 {
		a.Alerts = new(check.Alerts)
		if err := json.Unmarshal(c.Alerts, a.Alerts); err != nil {
			return fmt.Errorf("the alert lists of check %s: %w", c.ID, err)
		}
	}
	return nil
}

func (a *alert) degraded(r event.RegionalAlert) error {
	if err := a.uptime(r.UptimeAlert); err != nil {
		return err
	}
	a.Check.Degraded, a.Check.Reason = true, r.Reason
	a.Check.FailingRegions, a.Check.SlowRegions = r.FailingRegions, r.SlowRegions
	return nil
}

func (a *alert) heartbeat(h event.HeartbeatAlert) error {
	a.Heartbeat = new(alertHeartbeat)
	if err := json.Unmarshal(h.Heartbeat, a.Heartbeat); err != nil {
		return fmt.Errorf("the heartbeat: %w", err)
	}
	if a.Heartbeat.ID == uuid.Nil {
		return errors.New("the heartbeat has no id")
	}
	a.Alerts = a.Heartbeat.Alerts
	return nil
}

func (a *alert) page(c event.IncidentChange) error {
	a.Page = &alertPage{Page: c.StatusPage}
	if err := json.Unmarshal(c.Incident, &a.Page.Incident); err != nil {
		return fmt.Errorf("the incident: %w", err)
	}
	return nil
}

// withCheck replaces the snapshot of an uptime alert's check by the check as it is now: its
// name, what it probes and its regions. A check deleted meanwhile keeps its snapshot.
func (n *Notifier) withCheck(ctx context.Context, orgID uuid.UUID, a *alert) error {
	if a.Check == nil {
		return nil
	}
	c, err := n.st.GetCheck(ctx, orgID, a.Check.ID, false)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read check %s: %w", a.Check.ID, err)
	}
	a.Check.Name, a.Check.URL, a.Check.Target = c.Spec.Name, checkURL(c.Spec), checkTarget(c.Spec)
	a.Check.Regions = c.Spec.TestRegions
	return nil
}

// checkURL is the URL a check has, as the API shows it: uptime, browser and WebSocket checks.
func checkURL(s check.Spec) *string {
	switch {
	case s.HTTP != nil:
		return s.HTTP.URL
	case s.WebSocket != nil:
		u := s.WebSocket.URL
		return &u
	}
	return nil
}

// checkTarget is what a check probes, by kind: its URL, DNS domain or TCP host and port.
func checkTarget(s check.Spec) string {
	switch {
	case checkURL(s) != nil:
		return *checkURL(s)
	case s.DNS != nil:
		return s.DNS.Domain
	case s.TCP != nil:
		return net.JoinHostPort(s.TCP.Hostname, strconv.Itoa(s.TCP.Port))
	}
	return ""
}

// alertOf is the alert of a delivery, from its stored event ev, with the check as it is now.
func (n *Notifier) alertOf(ctx context.Context, d store.DueDelivery, ev event.Event) (alert, error) {
	a, err := newAlert(d.EventID, ev, d.CreatedAt, d.AlertPriority)
	if err != nil {
		return alert{}, err
	}
	return a, n.withCheck(ctx, d.OrgID, &a)
}
