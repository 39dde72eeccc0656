package statuspage

import (
	"encoding/json"
	"time"
)

// Time is a timestamp rendered as the API renders every timestamp: UTC with milliseconds.
type Time time.Time

// TimeLayout is the API's timestamp format.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON renders t in TimeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format(TimeLayout))
}

// TimePtr converts a nullable timestamp.
func TimePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	v := Time(*t)
	return &v
}

// Ref is {id, name}: a component as an incident lists it, a page as an event names it.
type Ref struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Identity is a page as creation and the public summary return it.
type Identity struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Subdomain    string  `json:"subdomain"`
	CustomDomain *string `json:"custom_domain,omitempty"`
}

// Page is the full status page record (api/openapi/status-pages.yaml).
type Page struct {
	ID                    string   `json:"id"`
	Name                  string   `json:"name"`
	Subdomain             string   `json:"subdomain"`
	CustomDomain          *string  `json:"custom_domain"`
	Status                string   `json:"status"`
	FaviconURL            *string  `json:"favicon_url"`
	LogoURL               *string  `json:"logo_url"`
	DarkLogoURL           *string  `json:"dark_logo_url"`
	Description           *string  `json:"description"`
	HideFromSearchEngines bool     `json:"hide_from_search_engines"`
	HasPassword           bool     `json:"has_password"`
	AllowedIPs            []string `json:"allowed_ips"`

	// Private reports a page the public summary does not serve (password or IP restriction).
	Private bool `json:"-"`
}

// Identity is the page's identity part.
func (p Page) Identity() Identity {
	return Identity{ID: p.ID, Name: p.Name, Subdomain: p.Subdomain, CustomDomain: p.CustomDomain}
}

// Component is a status page component (api/openapi/status-page-components.yaml), as the public summary shows it.
type Component struct {
	ID                  string  `json:"id"`
	Name                string  `json:"name"`
	Status              string  `json:"status"`
	DisplayUptime       bool    `json:"display_uptime"`
	DisplayMetrics      bool    `json:"display_metrics"`
	CreatedAt           Time    `json:"created_at"`
	UpdatedAt           Time    `json:"updated_at"`
	GroupID             *string `json:"group_id"`
	SortOrder           *int    `json:"sort_order"`
	IsExternalComponent bool    `json:"is_external_component"`
}

// ComponentDetail is a component as the authenticated API returns it: with the monitors that
// feed it and whether its status is set by hand.
type ComponentDetail struct {
	Component
	CheckIDs       []string `json:"check_ids"`
	HeartbeatID    *string  `json:"heartbeat_id"`
	OverrideStatus bool     `json:"override_status"`
}

// Group is a component group (api/openapi/status-page-components.yaml).
type Group struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	SortOrder   *int    `json:"sort_order"`
	CreatedAt   Time    `json:"created_at"`
	UpdatedAt   Time    `json:"updated_at"`
}

// IncidentBase is the part every incident shape shares.
type IncidentBase struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Impact    string `json:"impact"`
	Started   *Time  `json:"started"`
	Ended     *Time  `json:"ended,omitempty"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// LatestUpdate is the incident's update with the latest date_happened.
type LatestUpdate struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	DateHappened Time   `json:"date_happened"`
}

// MaintenanceRef is the scheduled_maintenance block of an incident that is a maintenance.
type MaintenanceRef struct {
	ID                       string `json:"id"`
	StartDate                Time   `json:"start_date"`
	DurationMinutes          int    `json:"duration_minutes"`
	NotifySubscribersAtStart bool   `json:"notify_subscribers_at_start"`
	NotifySubscribersAtEnd   bool   `json:"notify_subscribers_at_end"`
}

// IncidentSummary is an incident as lists show it (api/openapi).
type IncidentSummary struct {
	IncidentBase
	LatestUpdate         *LatestUpdate   `json:"latest_update,omitempty"`
	ScheduledMaintenance *MaintenanceRef `json:"scheduled_maintenance,omitempty"`
}

// Incident is the full incident (api/openapi): the summary with its components and timeline, and,
// beyond the contract, its current status and description (those of its latest update) so that
// a client that created it with them — the reference Terraform provider — reads them back.
type Incident struct {
	IncidentSummary
	Components  []Ref            `json:"components"`
	Updates     []IncidentUpdate `json:"updates"`
	Status      *string          `json:"status"`
	Description *string          `json:"description"`
}

// StatusChange is one component status change an update made.
type StatusChange struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	OldStatus *string `json:"old_status"`
	NewStatus string  `json:"new_status"`
}

// IncidentUpdate is one entry of an incident's timeline (api/openapi/status-page-incidents.yaml).
type IncidentUpdate struct {
	ID           string         `json:"id"`
	IncidentID   string         `json:"incident_id"`
	Status       string         `json:"status"`
	Description  string         `json:"description"`
	DateHappened Time           `json:"date_happened"`
	CreatedAt    Time           `json:"created_at"`
	UpdatedAt    Time           `json:"updated_at"`
	Components   []StatusChange `json:"components"`
}

// Notifications are a scheduled maintenance's subscriber notification flags.
type Notifications struct {
	AnHourBefore bool `json:"an_hour_before"`
	AtStart      bool `json:"at_start"`
	AtEnd        bool `json:"at_end"`
}

// ScheduledMaintenance is the scheduled maintenance record (api/openapi/status-page-maintenance.yaml).
type ScheduledMaintenance struct {
	IncidentBase
	StartDate       Time          `json:"start_date"`
	DurationMinutes int           `json:"duration_minutes"`
	Notifications   Notifications `json:"notifications"`
	Components      []Ref         `json:"components"`

	// State is SCHEDULED, IN_PROGRESS or COMPLETED (kept for the summary, not rendered).
	State string `json:"-"`
}

// MaintenanceDetail is a scheduled maintenance as the authenticated API returns it: beyond the
// contract, with its status (SCHEDULED, IN_PROGRESS or COMPLETED) and description (the
// announcement's text, which PATCH replaces), which the reference Terraform provider reads back.
type MaintenanceDetail struct {
	ScheduledMaintenance
	Status      string `json:"status"`
	Description string `json:"description"`
}

// Subscriber is an e-mail subscriber of a page (api/openapi).
type Subscriber struct {
	ID                        string   `json:"id"`
	EmailAddress              string   `json:"email_address"`
	Confirmed                 bool     `json:"confirmed"`
	ComponentSubscriptionMode string   `json:"component_subscription_mode"`
	ComponentIDs              []string `json:"component_ids"`
	CreatedAt                 Time     `json:"created_at"`
}

// Subscription modes.
const (
	AllComponents      = "ALL_COMPONENTS"
	SelectedComponents = "SELECTED_COMPONENTS"
)
