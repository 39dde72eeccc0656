package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Encoded is an event as the outbox stores it: its type, the version of its payload's format,
// and the payload (JSON).
type Encoded struct {
	Type    string
	Version int32
	Payload []byte
}

// Version is the payload format Encode writes. Decode reads every version written so far.
//
// A change of a payload's format is a new version: add its structs beside v1's, write it here,
// and keep decoding the old one, so that rows queued before a deploy still go out after it.
const Version = 1

// Encode turns an event into its stored form.
func Encode(ev Event) (Encoded, error) {
	p, err := payloadV1(ev)
	if err != nil {
		return Encoded{}, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return Encoded{}, fmt.Errorf("encode %s: %w", ev.Type(), err)
	}
	return Encoded{Type: ev.Type(), Version: Version, Payload: b}, nil
}

// Decode reads a stored event back.
func Decode(e Encoded) (Event, error) {
	switch e.Version {
	case 1:
		ev, err := decodeV1(e.Type, e.Payload)
		if err != nil {
			return nil, fmt.Errorf("decode %s (version 1): %w", e.Type, err)
		}
		return ev, nil
	}
	return nil, fmt.Errorf("decode %s: unknown payload version %d", e.Type, e.Version)
}

// Version 1 is the format the outbox held before events were typed: {event, occurred_at,
// <members>}, plus "reminder" for alerts.

type uptimeV1 struct {
	Event      string           `json:"event"`
	Reminder   bool             `json:"reminder"`
	OccurredAt time.Time        `json:"occurred_at"`
	Check      checkV1          `json:"check"`
	Incident   *checkIncidentV1 `json:"incident"`
	// FailingRegions, Reason and SlowRegions: uptime.degraded and uptime.restored only. Rows
	// written before Reason existed have none: they were regional.
	FailingRegions []string `json:"failing_regions,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	SlowRegions    []string `json:"slow_regions,omitempty"`
}

type checkV1 struct {
	ID            uuid.UUID       `json:"id"`
	OrgID         uuid.UUID       `json:"org_id"`
	Name          string          `json:"name"`
	Kind          string          `json:"check_type"`
	URL           *string         `json:"url"`
	State         string          `json:"state"`
	AlertPriority string          `json:"alert_priority"`
	Alerts        json.RawMessage `json:"alerts,omitempty"`
}

type checkIncidentV1 struct {
	ID        uuid.UUID  `json:"id"`
	CheckID   uuid.UUID  `json:"check_id"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
}

type heartbeatV1 struct {
	Event      string          `json:"event"`
	Reminder   bool            `json:"reminder"`
	OccurredAt time.Time       `json:"occurred_at"`
	Heartbeat  json.RawMessage `json:"heartbeat"`
}

// msTime is a timestamp as status page payloads wrote it: UTC with milliseconds.
type msTime time.Time

func (t msTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z"))
}

func (t *msTime) UnmarshalJSON(b []byte) error { return (*time.Time)(t).UnmarshalJSON(b) }

type incidentV1 struct {
	Event      string          `json:"event"`
	OccurredAt msTime          `json:"occurred_at"`
	StatusPage pageRefV1       `json:"status_page"`
	Incident   json.RawMessage `json:"incident"`
}

type pageRefV1 struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

type mailPageV1 struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Subdomain string    `json:"subdomain"`
}

type confirmationV1 struct {
	Event      string     `json:"event"`
	OccurredAt time.Time  `json:"occurred_at"`
	StatusPage mailPageV1 `json:"status_page"`
	Subscriber struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email_address"`
	} `json:"subscriber"`
}

type notificationV1 struct {
	Event      string     `json:"event"`
	OccurredAt time.Time  `json:"occurred_at"`
	Reason     string     `json:"reason"`
	StatusPage mailPageV1 `json:"status_page"`
	Incident   struct {
		ID              uuid.UUID  `json:"id"`
		Title           string     `json:"title"`
		Impact          string     `json:"impact"`
		StartDate       *time.Time `json:"start_date,omitempty"`
		DurationMinutes *int       `json:"duration_minutes,omitempty"`
	} `json:"incident"`
	Update struct {
		ID           uuid.UUID `json:"id"`
		Status       string    `json:"status"`
		Description  string    `json:"description"`
		DateHappened time.Time `json:"date_happened"`
	} `json:"update"`
	Components []struct {
		ID     uuid.UUID `json:"id"`
		Name   string    `json:"name"`
		Status string    `json:"status"`
	} `json:"components"`
	ComponentIDs []uuid.UUID `json:"component_ids"`
}

type invitationV1 struct {
	Event      string    `json:"event"`
	OccurredAt time.Time `json:"occurred_at"`
	Invitation struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email"`
		Role  string    `json:"role"`
	} `json:"invitation"`
	Organization struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"organization"`
	InvitedBy string `json:"invited_by"`
}

type regionV1 struct {
	Event         string    `json:"event"`
	OccurredAt    time.Time `json:"occurred_at"`
	Region        string    `json:"region"`
	UnservedSince time.Time `json:"unserved_since"`
	Checks        int       `json:"checks"`
}

func regionToV1(c RegionChange, typ string) regionV1 {
	return regionV1{Event: typ, OccurredAt: c.OccurredAt.UTC(), Region: c.Region, UnservedSince: c.UnservedSince.UTC(), Checks: c.Checks}
}

type healthV1 struct {
	Event          string    `json:"event"`
	OccurredAt     time.Time `json:"occurred_at"`
	Region         string    `json:"region"`
	UnhealthySince time.Time `json:"unhealthy_since"`
	Reason         string    `json:"reason,omitempty"`
	Checks         int       `json:"checks"`
}

func healthToV1(c RegionHealthChange, typ string) healthV1 {
	return healthV1{Event: typ, OccurredAt: c.OccurredAt.UTC(), Region: c.Region, UnhealthySince: c.UnhealthySince.UTC(),
		Reason: c.Reason, Checks: c.Checks}
}

type customDomainV1 struct {
	Event        string     `json:"event"`
	OccurredAt   msTime     `json:"occurred_at"`
	StatusPage   pageRefV1  `json:"status_page"`
	CustomDomain string     `json:"custom_domain"`
	MissingSince *time.Time `json:"missing_since,omitempty"` // status_page.custom_domain_unverified only
}

func customDomainToV1(c CustomDomainChange, typ string) customDomainV1 {
	return customDomainV1{Event: typ, OccurredAt: msTime(c.OccurredAt), StatusPage: pageRefV1(c.StatusPage), CustomDomain: c.Domain}
}

func uptimeToV1(a UptimeAlert, typ string, reminder bool) uptimeV1 {
	c := a.Check
	p := uptimeV1{Event: typ, Reminder: reminder, OccurredAt: a.OccurredAt.UTC(), Check: checkV1(c)}
	if len(c.Alerts) == 0 {
		p.Check.Alerts = nil
	}
	if inc := a.Incident; inc != nil {
		p.Incident = &checkIncidentV1{ID: inc.ID, CheckID: inc.CheckID, StartedAt: inc.StartedAt.UTC(), EndedAt: inc.EndedAt}
	}
	return p
}

func incidentToV1(c IncidentChange, typ string) incidentV1 {
	return incidentV1{Event: typ, OccurredAt: msTime(c.OccurredAt), StatusPage: pageRefV1(c.StatusPage), Incident: c.Incident}
}

func payloadV1(ev Event) (any, error) {
	switch ev := ev.(type) {
	case UptimeDown:
		return uptimeToV1(ev.UptimeAlert, ev.Type(), false), nil
	case UptimeReminder:
		return uptimeToV1(ev.UptimeAlert, ev.Type(), true), nil
	case UptimeUp:
		return uptimeToV1(ev.UptimeAlert, ev.Type(), false), nil
	case UptimeDegraded:
		p := uptimeToV1(ev.UptimeAlert, ev.Type(), false)
		p.FailingRegions, p.Reason, p.SlowRegions = ev.FailingRegions, ev.Reason, ev.SlowRegions
		return p, nil
	case UptimeRestored:
		p := uptimeToV1(ev.UptimeAlert, ev.Type(), false)
		p.FailingRegions, p.Reason, p.SlowRegions = ev.FailingRegions, ev.Reason, ev.SlowRegions
		return p, nil
	case HeartbeatDown:
		return heartbeatV1{Event: ev.Type(), OccurredAt: ev.OccurredAt.UTC(), Heartbeat: ev.Heartbeat}, nil
	case HeartbeatReminder:
		return heartbeatV1{Event: ev.Type(), Reminder: true, OccurredAt: ev.OccurredAt.UTC(), Heartbeat: ev.Heartbeat}, nil
	case HeartbeatUp:
		return heartbeatV1{Event: ev.Type(), OccurredAt: ev.OccurredAt.UTC(), Heartbeat: ev.Heartbeat}, nil
	case IncidentStarted:
		return incidentToV1(ev.IncidentChange, ev.Type()), nil
	case IncidentUpdated:
		return incidentToV1(ev.IncidentChange, ev.Type()), nil
	case IncidentResolved:
		return incidentToV1(ev.IncidentChange, ev.Type()), nil
	case SubscriberConfirmation:
		p := confirmationV1{Event: ev.Type(), OccurredAt: ev.OccurredAt.UTC(), StatusPage: mailPageV1(ev.StatusPage)}
		p.Subscriber.ID, p.Subscriber.Email = ev.SubscriberID, ev.Email
		return p, nil
	case SubscriberNotification:
		p := notificationV1{Event: ev.Type(), OccurredAt: ev.OccurredAt.UTC(), Reason: ev.Reason, StatusPage: mailPageV1(ev.StatusPage)}
		p.Incident.ID, p.Incident.Title, p.Incident.Impact = ev.Incident.ID, ev.Incident.Title, ev.Incident.Impact
		if ev.Incident.StartDate != nil && ev.Incident.DurationMinutes != nil {
			start := ev.Incident.StartDate.UTC()
			p.Incident.StartDate, p.Incident.DurationMinutes = &start, ev.Incident.DurationMinutes
		}
		u := ev.Update
		p.Update.ID, p.Update.Status, p.Update.Description, p.Update.DateHappened = u.ID, u.Status, u.Description, u.DateHappened.UTC()
		p.Components = make([]struct {
			ID     uuid.UUID `json:"id"`
			Name   string    `json:"name"`
			Status string    `json:"status"`
		}, len(ev.Components))
		for i, c := range ev.Components {
			p.Components[i].ID, p.Components[i].Name, p.Components[i].Status = c.ID, c.Name, c.Status
		}
		p.ComponentIDs = ev.ComponentIDs()
		return p, nil
	case InvitationCreated:
		p := invitationV1{Event: ev.Type(), OccurredAt: ev.OccurredAt.UTC(), InvitedBy: ev.InvitedBy}
		p.Invitation.ID, p.Invitation.Email, p.Invitation.Role = ev.InvitationID, ev.Email, ev.Role
		p.Organization.ID, p.Organization.Name = ev.OrgID, ev.OrgName
		return p, nil
	case AgentUnhealthy:
		return healthToV1(ev.RegionHealthChange, ev.Type()), nil
	case AgentHealthy:
		return healthToV1(ev.RegionHealthChange, ev.Type()), nil
	case RegionUnserved:
		return regionToV1(ev.RegionChange, ev.Type()), nil
	case RegionServed:
		return regionToV1(ev.RegionChange, ev.Type()), nil
	case CustomDomainReleased:
		return customDomainToV1(ev.CustomDomainChange, ev.Type()), nil
	case CustomDomainUnverified:
		p := customDomainToV1(ev.CustomDomainChange, ev.Type())
		since := ev.MissingSince.UTC()
		p.MissingSince = &since
		return p, nil
	case CertificateExpiring:
		return certificateToV1(ev.CertificateAlert, ev.Type(), &ev.ThresholdDays), nil
	case CertificateExpired:
		return certificateToV1(ev.CertificateAlert, ev.Type(), nil), nil
	}
	return nil, fmt.Errorf("encode: unknown event %T", ev)
}

func decodeV1(typ string, b []byte) (Event, error) {
	switch typ {
	case TypeUptimeDown, TypeUptimeUp, TypeUptimeDegraded, TypeUptimeRestored:
		var p uptimeV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		a := UptimeAlert{OccurredAt: p.OccurredAt, Check: Check{ID: p.Check.ID, OrgID: p.Check.OrgID, Name: p.Check.Name,
			Kind: p.Check.Kind, URL: p.Check.URL, State: p.Check.State, AlertPriority: p.Check.AlertPriority, Alerts: p.Check.Alerts}}
		if inc := p.Incident; inc != nil {
			a.Incident = &CheckIncident{ID: inc.ID, CheckID: inc.CheckID, StartedAt: inc.StartedAt, EndedAt: inc.EndedAt}
		}
		ra := RegionalAlert{UptimeAlert: a, FailingRegions: p.FailingRegions, Reason: p.Reason, SlowRegions: p.SlowRegions}
		if ra.Reason == "" {
			ra.Reason = DegradedRegional
		}
		switch {
		case typ == TypeUptimeDegraded:
			return UptimeDegraded{ra}, nil
		case typ == TypeUptimeRestored:
			return UptimeRestored{ra}, nil
		case typ == TypeUptimeUp:
			return UptimeUp{a}, nil
		case p.Reminder:
			return UptimeReminder{a}, nil
		}
		return UptimeDown{a}, nil
	case TypeHeartbeatDown, TypeHeartbeatUp:
		var p heartbeatV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if len(p.Heartbeat) == 0 || string(p.Heartbeat) == "null" {
			return nil, errors.New("no heartbeat")
		}
		a := HeartbeatAlert{OccurredAt: p.OccurredAt, Heartbeat: p.Heartbeat}
		switch {
		case typ == TypeHeartbeatUp:
			return HeartbeatUp{a}, nil
		case p.Reminder:
			return HeartbeatReminder{a}, nil
		}
		return HeartbeatDown{a}, nil
	case TypeIncidentStarted, TypeIncidentUpdated, TypeIncidentResolved:
		var p incidentV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if len(p.Incident) == 0 || string(p.Incident) == "null" {
			return nil, errors.New("no incident")
		}
		c := IncidentChange{OccurredAt: time.Time(p.OccurredAt), StatusPage: PageRef(p.StatusPage), Incident: p.Incident}
		switch typ {
		case TypeIncidentStarted:
			return IncidentStarted{c}, nil
		case TypeIncidentResolved:
			return IncidentResolved{c}, nil
		}
		return IncidentUpdated{c}, nil
	case TypeSubscriberConfirmation:
		var p confirmationV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		return SubscriberConfirmation{OccurredAt: p.OccurredAt, StatusPage: MailPage(p.StatusPage),
			SubscriberID: p.Subscriber.ID, Email: p.Subscriber.Email}, nil
	case TypeSubscriberNotification:
		var p notificationV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		n := SubscriberNotification{OccurredAt: p.OccurredAt, Reason: p.Reason, StatusPage: MailPage(p.StatusPage),
			Incident: NoticeIncident{ID: p.Incident.ID, Title: p.Incident.Title, Impact: p.Incident.Impact,
				StartDate: p.Incident.StartDate, DurationMinutes: p.Incident.DurationMinutes},
			Update: NoticeUpdate{ID: p.Update.ID, Status: p.Update.Status, Description: p.Update.Description,
				DateHappened: p.Update.DateHappened},
			Components: make([]NoticeComponent, len(p.Components))}
		for i, c := range p.Components {
			n.Components[i] = NoticeComponent{ID: c.ID, Name: c.Name, Status: c.Status}
		}
		return n, nil
	case TypeInvitationCreated:
		var p invitationV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		return InvitationCreated{OccurredAt: p.OccurredAt, InvitationID: p.Invitation.ID, Email: p.Invitation.Email,
			Role: p.Invitation.Role, OrgID: p.Organization.ID, OrgName: p.Organization.Name, InvitedBy: p.InvitedBy}, nil
	case TypeAgentUnhealthy, TypeAgentHealthy:
		var p healthV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if p.Region == "" {
			return nil, errors.New("no region")
		}
		c := RegionHealthChange{OccurredAt: p.OccurredAt, Region: p.Region, UnhealthySince: p.UnhealthySince, Reason: p.Reason, Checks: p.Checks}
		if typ == TypeAgentHealthy {
			return AgentHealthy{c}, nil
		}
		return AgentUnhealthy{c}, nil
	case TypeRegionUnserved, TypeRegionServed:
		var p regionV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if p.Region == "" {
			return nil, errors.New("no region")
		}
		c := RegionChange{OccurredAt: p.OccurredAt, Region: p.Region, UnservedSince: p.UnservedSince, Checks: p.Checks}
		if typ == TypeRegionServed {
			return RegionServed{c}, nil
		}
		return RegionUnserved{c}, nil
	case TypeCustomDomainReleased, TypeCustomDomainUnverified:
		var p customDomainV1
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if p.CustomDomain == "" {
			return nil, errors.New("no custom domain")
		}
		c := CustomDomainChange{OccurredAt: time.Time(p.OccurredAt), StatusPage: PageRef(p.StatusPage), Domain: p.CustomDomain}
		if typ == TypeCustomDomainReleased {
			return CustomDomainReleased{c}, nil
		}
		if p.MissingSince == nil {
			return nil, errors.New("no missing_since")
		}
		return CustomDomainUnverified{c, *p.MissingSince}, nil
	case TypeCertificateExpiring, TypeCertificateExpired:
		return decodeCertificateV1(typ, b)
	}
	return nil, fmt.Errorf("unknown event type %q", typ)
}
