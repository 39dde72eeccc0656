package heartbeat

import (
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Record is a heartbeat as the API returns it (the expanded heartbeat of api/openapi/heartbeats.yaml) and
// as alerts carry it. last_duration_ms is Vantage's addition: the last run's duration from a
// /start ping to the success or /fail ping that completed it.
type Record struct {
	ID                           string  `json:"id"`
	Name                         string  `json:"name"`
	Status                       string  `json:"status"`
	LastSeen                     *string `json:"last_seen"`
	ReportPeriod                 *int    `json:"report_period"`
	ReportPeriodCron             *string `json:"report_period_cron"`
	Timezone                     *string `json:"timezone"`
	GracePeriod                  int     `json:"grace_period"`
	ReminderAlertIntervalMinutes *int    `json:"reminder_alert_interval_minutes"`
	AlertPriority                string  `json:"alert_priority"`
	LastDurationMs               *int64  `json:"last_duration_ms"`
	ProjectID                    *string `json:"project_id"`
	CreatedAt                    string  `json:"created_at"`
	UpdatedAt                    string  `json:"updated_at"`

	UserAlerts           []string `json:"user_alerts"`
	SlackAlerts          []string `json:"slack_alerts"`
	DiscordAlerts        []string `json:"discord_alerts"`
	WebhookAlerts        []string `json:"webhook_alerts"`
	OncallAlerts         []string `json:"oncall_alerts"`
	IncidentIOAlerts     []string `json:"incident_io_alerts"`
	MicrosoftTeamsAlerts []string `json:"microsoft_teams_alerts"`
	TelegramAlerts       []string `json:"telegram_alerts"`
	PushoverAlerts       []string `json:"pushover_alerts"`
}

// Summary is a heartbeat as lists show it: Record without the nine alert lists.
type Summary struct {
	ID                           string  `json:"id"`
	Name                         string  `json:"name"`
	Status                       string  `json:"status"`
	LastSeen                     *string `json:"last_seen"`
	ReportPeriod                 *int    `json:"report_period"`
	ReportPeriodCron             *string `json:"report_period_cron"`
	Timezone                     *string `json:"timezone"`
	GracePeriod                  int     `json:"grace_period"`
	ReminderAlertIntervalMinutes *int    `json:"reminder_alert_interval_minutes"`
	AlertPriority                string  `json:"alert_priority"`
	LastDurationMs               *int64  `json:"last_duration_ms"`
	ProjectID                    *string `json:"project_id"`
	CreatedAt                    string  `json:"created_at"`
	UpdatedAt                    string  `json:"updated_at"`
}

// Status is what a heartbeat shows: PAUSED wins over MAINTENANCE, which wins over MUTED, which
// wins over the monitor's state (PENDING, UP, DOWN).
func Status(h store.Heartbeat) string {
	switch {
	case h.Paused:
		return "PAUSED"
	case h.InMaintenance:
		return "MAINTENANCE"
	case h.Muted:
		return "MUTED"
	}
	return h.State
}

// Render is the expanded heartbeat.
func Render(h store.Heartbeat) Record {
	s := Summarize(h)
	a := h.Alerts
	a.Normalize()
	return Record{ID: s.ID, Name: s.Name, Status: s.Status, LastSeen: s.LastSeen, ReportPeriod: s.ReportPeriod,
		ReportPeriodCron: s.ReportPeriodCron, Timezone: s.Timezone, GracePeriod: s.GracePeriod,
		ReminderAlertIntervalMinutes: s.ReminderAlertIntervalMinutes, AlertPriority: s.AlertPriority,
		LastDurationMs: s.LastDurationMs, ProjectID: s.ProjectID, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		UserAlerts: a.User, SlackAlerts: a.Slack, DiscordAlerts: a.Discord, WebhookAlerts: a.Webhook,
		OncallAlerts: a.Oncall, IncidentIOAlerts: a.IncidentIO, MicrosoftTeamsAlerts: a.MicrosoftTeams,
		TelegramAlerts: a.Telegram, PushoverAlerts: a.Pushover}
}

// Summarize is the list item.
func Summarize(h store.Heartbeat) Summary {
	s := Summary{ID: h.ID.String(), Name: h.Name, Status: Status(h), LastSeen: timePtr(h.LastSeen),
		ReportPeriod: h.ReportPeriod, ReportPeriodCron: h.ReportPeriodCron, Timezone: h.Timezone,
		GracePeriod: h.GracePeriod, ReminderAlertIntervalMinutes: h.ReminderAlertIntervalMinutes,
		AlertPriority: h.AlertPriority, LastDurationMs: h.LastDurationMs,
		CreatedAt: formatTime(h.CreatedAt), UpdatedAt: formatTime(h.UpdatedAt)}
	if h.ProjectID != nil {
		p := h.ProjectID.String()
		s.ProjectID = &p
	}
	return s
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}
