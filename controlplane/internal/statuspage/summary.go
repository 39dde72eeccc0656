package statuspage

// SummaryStatus is the summary's status block.
type SummaryStatus struct {
	Description string `json:"description"`
}

// Summary is the public JSON summary of a page (api/openapi/status-pages.yaml).
type Summary struct {
	Status               SummaryStatus          `json:"status"`
	StatusPage           Identity               `json:"status_page"`
	Components           []Component            `json:"components"`
	ActiveIncidents      []IncidentBase         `json:"active_incidents"`
	ScheduledMaintenance []ScheduledMaintenance `json:"scheduled_maintenance"`
}

// BuildSummary assembles the public summary of page from its components, its unresolved
// incidents that are not maintenance, and its maintenance that has not completed.
func BuildSummary(page Page, components []Component, active []IncidentBase, maintenance []ScheduledMaintenance) Summary {
	s := Summary{StatusPage: page.Identity(), Components: components, ActiveIncidents: active, ScheduledMaintenance: maintenance}
	if s.Components == nil {
		s.Components = []Component{}
	}
	if s.ActiveIncidents == nil {
		s.ActiveIncidents = []IncidentBase{}
	}
	if s.ScheduledMaintenance == nil {
		s.ScheduledMaintenance = []ScheduledMaintenance{}
	}
	statuses := make([]string, len(components))
	for i, c := range components {
		statuses[i] = c.Status
	}
	impacts := make([]string, len(active))
	for i, inc := range active {
		impacts[i] = inc.Impact
	}
	inProgress := false
	for _, m := range maintenance {
		inProgress = inProgress || m.State == InProgress
	}
	s.Status.Description = Description(Overall(statuses, impacts, inProgress))
	return s
}
