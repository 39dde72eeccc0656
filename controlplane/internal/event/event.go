// Package event defines what the outbox carries: one Go type per event, and their stored form.
// Producers (the evaluator, the certificate watcher, the heartbeat monitor, status pages,
// subscriptions, invitations)
// build these values; the notifier switches on their types. Encode and Decode (codec.go) are
// the only places an event becomes bytes or comes back, and every stored event carries the
// version of its encoding, so that a later change of a payload still decodes the rows already
// written. The package imports nothing of the control plane.
//
// Resources that an event shows as the API renders them (a heartbeat, a status page incident)
// travel as that rendering, a JSON document made by the resource's own package: this package
// keeps it, it does not know its fields.
//
// Adding an event: its type here (with Type, At and the event marker), its stored form in
// codec.go (payloadV1 and decodeV1, or a new version), a value in codec_test.go's everyEvent;
// then the producer queues it (store.OutboxEvent) and the notifier routes it (a case in
// notifier.route, and in notifier.sendMail when it is an e-mail).
package event

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Event is one event of the outbox.
type Event interface {
	// Type is the event type as webhooks subscribe to it, e.g. "uptime.down". Reminders share
	// the type of the alert they repeat.
	Type() string
	// At is when the event happened.
	At() time.Time
	event()
}

// Event types (api/openapi/webhooks.yaml, and the e-mail flows no webhook can subscribe to).
const (
	TypeUptimeDown             = "uptime.down"
	TypeUptimeUp               = "uptime.up"
	TypeHeartbeatDown          = "heartbeat.down"
	TypeHeartbeatUp            = "heartbeat.up"
	TypeIncidentStarted        = "status_page.incident.started"
	TypeIncidentUpdated        = "status_page.incident.updated"
	TypeIncidentResolved       = "status_page.incident.resolved"
	TypeSubscriberConfirmation = "subscriber.confirmation"
	TypeSubscriberNotification = "subscriber.notification"
	TypeInvitationCreated      = "invitation.created"
	// Agent regions (Vantage extensions): no live agent serves a region the organization's
	// checks run from, for longer than the grace period; and one does again.
	TypeRegionUnserved = "agent.region_unserved"
	TypeRegionServed   = "agent.region_served"
	// Degradation (Vantage extensions, docs/detection.md): a check stays UP while some of its
	// regions fail or while it is slow; and that ended.
	TypeUptimeDegraded = "uptime.degraded"
	TypeUptimeRestored = "uptime.restored"
	// Probe health (Vantage extensions, docs/detection.md): a region's probes fail checks other
	// regions pass, for many checks at once; its results are left out of verdicts. And it
	// recovered.
	TypeAgentUnhealthy = "agent.unhealthy"
	TypeAgentHealthy   = "agent.healthy"
	// Custom domains of status pages (Vantage extensions, docs/api-extensions.md): a page's
	// pending claim of a domain went back to NONE because another page verified it first; and
	// a verified domain lost its verification because its TXT record stayed missing.
	TypeCustomDomainReleased   = "status_page.custom_domain_released"
	TypeCustomDomainUnverified = "status_page.custom_domain_unverified"
	// Certificate expiry (Vantage extensions, docs/checks.md "Certificate expiry"): the
	// certificate a check's target serves came within one of the check's
	// certificate_expiry_alert_days of expiring; or it has expired. Each goes out once per
	// certificate (fingerprint) and threshold (certificate.go).
	TypeCertificateExpiring = "certificate.expiring"
	TypeCertificateExpired  = "certificate.expired"
)

// Check is the check an uptime alert is about, as it was when the alert was raised.
type Check struct {
	ID            uuid.UUID
	OrgID         uuid.UUID
	Name          string
	Kind          string // check_type
	URL           *string
	State         string // the status machine's state after the transition
	AlertPriority string
	// Alerts is the check's alert lists as stored ({"user_alerts": [...], ...}); nil when none.
	Alerts json.RawMessage
}

// CheckIncident is the check incident an uptime alert belongs to.
type CheckIncident struct {
	ID        uuid.UUID
	CheckID   uuid.UUID
	StartedAt time.Time
	EndedAt   *time.Time
}

// UptimeAlert is what every uptime event says.
type UptimeAlert struct {
	OccurredAt time.Time
	Check      Check
	Incident   *CheckIncident // nil when the check has no incident (yet, or any more)
}

// At implements Event.
func (a UptimeAlert) At() time.Time { return a.OccurredAt }

// UptimeDown reports that a check is confirmed down.
type UptimeDown struct{ UptimeAlert }

// UptimeReminder reports that a check is still down (an uptime.down with "reminder": true).
type UptimeReminder struct{ UptimeAlert }

// UptimeUp reports that a check that was reported down is up again.
type UptimeUp struct{ UptimeAlert }

// Reasons of uptime.degraded and uptime.restored (docs/detection.md): some regions fail while
// the check stays UP, or its passing runs are slower than its degraded_response_time_ms in
// the quorum's regions. A check may be degraded for both reasons at once; each has its own
// pair of events.
const (
	DegradedRegional = "regional"
	DegradedSlow     = "slow"
)

// RegionalAlert is what every degradation event says: the uptime alert, why (Degraded…), and
// the regions of the streak's last run that made it: failing regions (reason regional) or slow
// ones (reason slow); none on uptime.restored.
type RegionalAlert struct {
	UptimeAlert
	FailingRegions []string
	// Reason is DegradedRegional or DegradedSlow.
	Reason      string
	SlowRegions []string
}

// UptimeDegraded reports that a check stayed UP while some of its regions failed, or while it
// was slow, for its confirmation period.
type UptimeDegraded struct{ RegionalAlert }

// UptimeRestored reports that a degraded check's regions all pass again, or that it is fast
// again.
type UptimeRestored struct{ RegionalAlert }

// HeartbeatAlert is what every heartbeat event says.
type HeartbeatAlert struct {
	OccurredAt time.Time
	// Heartbeat is the heartbeat as the API renders it after the transition, with its alert
	// lists also under "alerts" (heartbeat.Record); its id and alerts route the event.
	Heartbeat json.RawMessage
}

// At implements Event.
func (a HeartbeatAlert) At() time.Time { return a.OccurredAt }

// HeartbeatDown reports that a heartbeat missed its deadline or reported a failure.
type HeartbeatDown struct{ HeartbeatAlert }

// HeartbeatReminder reports that a heartbeat is still down (a heartbeat.down with "reminder": true).
type HeartbeatReminder struct{ HeartbeatAlert }

// HeartbeatUp reports that a heartbeat that was reported down is healthy again.
type HeartbeatUp struct{ HeartbeatAlert }

// PageRef names a status page.
type PageRef struct {
	ID   uuid.UUID
	Name string
}

// IncidentChange is what every status page incident event says.
type IncidentChange struct {
	OccurredAt time.Time
	StatusPage PageRef
	// Incident is the full incident as the API renders it (statuspage.Incident).
	Incident json.RawMessage
}

// At implements Event.
func (c IncidentChange) At() time.Time { return c.OccurredAt }

// IncidentStarted reports that an incident (or a scheduled maintenance) was created.
type IncidentStarted struct{ IncidentChange }

// IncidentUpdated reports that an incident changed, or got an update that does not resolve it.
type IncidentUpdated struct{ IncidentChange }

// IncidentResolved reports that an incident got a RESOLVED update, or a maintenance completed.
type IncidentResolved struct{ IncidentChange }

// MailPage is a status page as subscriber e-mails name it.
type MailPage struct {
	ID        uuid.UUID
	Name      string
	Subdomain string
}

// SubscriberConfirmation asks a new subscriber to confirm (double opt-in).
type SubscriberConfirmation struct {
	OccurredAt   time.Time
	StatusPage   MailPage
	SubscriberID uuid.UUID
	Email        string
}

// At implements Event.
func (c SubscriberConfirmation) At() time.Time { return c.OccurredAt }

// Reasons of a subscriber notification.
const (
	ReasonIncidentCreated      = "incident.created"
	ReasonIncidentUpdated      = "incident.updated"
	ReasonMaintenanceUpcoming  = "maintenance.upcoming"
	ReasonMaintenanceStarted   = "maintenance.started"
	ReasonMaintenanceCompleted = "maintenance.completed"
)

// NoticeIncident is the incident a subscriber notification is about.
type NoticeIncident struct {
	ID     uuid.UUID
	Title  string
	Impact string
	// StartDate and DurationMinutes are set for a scheduled maintenance.
	StartDate       *time.Time
	DurationMinutes *int
}

// NoticeUpdate is the incident update a subscriber notification tells.
type NoticeUpdate struct {
	ID           uuid.UUID
	Status       string
	Description  string
	DateHappened time.Time
}

// NoticeComponent is a component the incident affects, with its status at the time.
type NoticeComponent struct {
	ID     uuid.UUID
	Name   string
	Status string
}

// SubscriberNotification tells a page's confirmed subscribers about an incident update or a
// scheduled maintenance (an hour before, at its start, at its end). Subscribers of selected
// components hear of it when one of the incident's components is theirs.
type SubscriberNotification struct {
	OccurredAt time.Time
	Reason     string // Reason*
	StatusPage MailPage
	Incident   NoticeIncident
	Update     NoticeUpdate
	Components []NoticeComponent // every component the incident affects
}

// At implements Event.
func (n SubscriberNotification) At() time.Time { return n.OccurredAt }

// ComponentIDs are the ids of the notification's components.
func (n SubscriberNotification) ComponentIDs() []uuid.UUID {
	ids := make([]uuid.UUID, len(n.Components))
	for i, c := range n.Components {
		ids[i] = c.ID
	}
	return ids
}

// InvitationCreated sends an invitation its e-mail.
type InvitationCreated struct {
	OccurredAt   time.Time
	InvitationID uuid.UUID
	Email        string
	Role         string
	OrgID        uuid.UUID
	OrgName      string
	InvitedBy    string // display name of who invited; "" when unknown
}

// At implements Event.
func (c InvitationCreated) At() time.Time { return c.OccurredAt }

// RegionChange is what every agent region event says: a region the organization's active
// checks run from, and since when no live agent served it. Runs of such a region go nowhere:
// they neither pass nor fail (a region without an agent never flips a check).
type RegionChange struct {
	OccurredAt    time.Time
	Region        string
	UnservedSince time.Time
	Checks        int // the organization's active checks that run from the region
}

// At implements Event.
func (c RegionChange) At() time.Time { return c.OccurredAt }

// RegionUnserved reports that no agent has served the region for the grace period.
type RegionUnserved struct{ RegionChange }

// RegionServed reports that an agent serves the region again, after a RegionUnserved.
type RegionServed struct{ RegionChange }

// RegionHealthChange is what every probe health event says: the region, since when it was
// unhealthy, why, and how many of the organization's active checks run from it.
type RegionHealthChange struct {
	OccurredAt     time.Time
	Region         string
	UnhealthySince time.Time
	Reason         string // empty on agent.healthy
	Checks         int
}

// At implements Event.
func (c RegionHealthChange) At() time.Time { return c.OccurredAt }

// AgentUnhealthy reports that a region's probes were judged broken; its results no longer count.
type AgentUnhealthy struct{ RegionHealthChange }

// AgentHealthy reports that an unhealthy region's probes agree with the other regions again.
type AgentHealthy struct{ RegionHealthChange }

// CustomDomainChange is what every custom domain event says: the status page and the domain
// it lost.
type CustomDomainChange struct {
	OccurredAt time.Time
	StatusPage PageRef
	Domain     string
}

// At implements Event.
func (c CustomDomainChange) At() time.Time { return c.OccurredAt }

// CustomDomainReleased reports that a page's pending claim of a domain went back to NONE:
// another status page, of any organization, verified the domain first.
type CustomDomainReleased struct{ CustomDomainChange }

// CustomDomainUnverified reports that a page's verified domain is PENDING again, and the page
// no longer answers on it: its TXT record was missing from MissingSince for longer than the
// grace period.
type CustomDomainUnverified struct {
	CustomDomainChange
	MissingSince time.Time
}

// Type implements Event.
// Type implements Event.
func (UptimeDown) Type() string { return TypeUptimeDown }

// Type implements Event.
func (UptimeReminder) Type() string { return TypeUptimeDown }

// Type implements Event.
func (UptimeUp) Type() string { return TypeUptimeUp }

// Type implements Event.
func (HeartbeatDown) Type() string { return TypeHeartbeatDown }

// Type implements Event.
func (HeartbeatReminder) Type() string { return TypeHeartbeatDown }

// Type implements Event.
func (HeartbeatUp) Type() string { return TypeHeartbeatUp }

// Type implements Event.
func (IncidentStarted) Type() string { return TypeIncidentStarted }

// Type implements Event.
func (IncidentUpdated) Type() string { return TypeIncidentUpdated }

// Type implements Event.
func (IncidentResolved) Type() string { return TypeIncidentResolved }

// Type implements Event.
func (SubscriberConfirmation) Type() string { return TypeSubscriberConfirmation }

// Type implements Event.
func (SubscriberNotification) Type() string { return TypeSubscriberNotification }

// Type implements Event.
func (InvitationCreated) Type() string { return TypeInvitationCreated }

// Type implements Event.
func (RegionUnserved) Type() string { return TypeRegionUnserved }

// Type implements Event.
func (RegionServed) Type() string { return TypeRegionServed }

// Type implements Event.
func (UptimeDegraded) Type() string { return TypeUptimeDegraded }

// Type implements Event.
func (UptimeRestored) Type() string { return TypeUptimeRestored }

// Type implements Event.
func (AgentUnhealthy) Type() string { return TypeAgentUnhealthy }

// Type implements Event.
func (AgentHealthy) Type() string { return TypeAgentHealthy }

// Type implements Event.
func (CustomDomainReleased) Type() string { return TypeCustomDomainReleased }

// Type implements Event.
func (CustomDomainUnverified) Type() string { return TypeCustomDomainUnverified }

func (UptimeDown) event()             {}
func (UptimeReminder) event()         {}
func (UptimeUp) event()               {}
func (HeartbeatDown) event()          {}
func (HeartbeatReminder) event()      {}
func (HeartbeatUp) event()            {}
func (IncidentStarted) event()        {}
func (IncidentUpdated) event()        {}
func (IncidentResolved) event()       {}
func (SubscriberConfirmation) event() {}
func (SubscriberNotification) event() {}
func (InvitationCreated) event()      {}
func (RegionUnserved) event()         {}
func (RegionServed) event()           {}
func (UptimeDegraded) event()         {}
func (UptimeRestored) event()         {}
func (AgentUnhealthy) event()         {}
func (AgentHealthy) event()           {}
func (CustomDomainReleased) event()   {}
func (CustomDomainUnverified) event() {}
