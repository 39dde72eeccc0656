// Package statuspage is the domain of public status pages over their storage (Service): status
// derivation (a page's overall status, a component that follows its monitors), the incident
// lifecycle and its announcements (status_page.incident.* events, subscriber e-mails), the
// scheduled-maintenance lifecycle (Service.Run), the records as the API and webhooks render
// them, and what the public summary and public page show.
package statuspage

// Component statuses (api/openapi/status-page-components.yaml).
const (
	Operational         = "OPERATIONAL"
	MajorOutage         = "MAJOR_OUTAGE"
	PartialOutage       = "PARTIAL_OUTAGE"
	DegradedPerformance = "DEGRADED_PERFORMANCE"
	Maintenance         = "MAINTENANCE"
	NoImpact            = "NO_IMPACT"
)

// ComponentStatuses are the six component statuses, in the contract's order.
var ComponentStatuses = []string{Operational, MajorOutage, PartialOutage, DegradedPerformance, Maintenance, NoImpact}

// Impacts are the incident impact values (api/openapi).
var Impacts = []string{MajorOutage, PartialOutage, DegradedPerformance, NoImpact, Maintenance}

// Incident update statuses (api/openapi/status-page-incidents.yaml).
const (
	Investigating = "INVESTIGATING"
	Identified    = "IDENTIFIED"
	Monitoring    = "MONITORING"
	Resolved      = "RESOLVED"
	Update        = "UPDATE"
	Scheduled     = "SCHEDULED"
	InProgress    = "IN_PROGRESS"
	Verifying     = "VERIFYING"
	Completed     = "COMPLETED"
)

// IncidentCreateStatuses are the statuses accepted when an incident is created.
var IncidentCreateStatuses = []string{Investigating, Identified, Monitoring, Resolved, Update}

// UpdateStatuses are every status an incident update may carry.
var UpdateStatuses = []string{Investigating, Identified, Monitoring, Resolved, Update, Scheduled, InProgress, Verifying, Completed}

// IsFinal reports whether an update status ends its incident (RESOLVED, COMPLETED).
func IsFinal(status string) bool { return status == Resolved || status == Completed }

// Overall page statuses (api/openapi/status-pages.yaml).
const (
	AllSystemsOperational    = "ALL_SYSTEMS_OPERATIONAL"
	PartiallyDegradedService = "PARTIALLY_DEGRADED_SERVICE"
	MinorServiceOutage       = "MINOR_SERVICE_OUTAGE"
	MajorSystemOutage        = "MAJOR_SYSTEM_OUTAGE"
	ServiceUnderMaintenance  = "SERVICE_UNDER_MAINTENANCE"
)

// PageStatuses are the overall statuses.
var PageStatuses = []string{AllSystemsOperational, PartiallyDegradedService, MinorServiceOutage, MajorSystemOutage, ServiceUnderMaintenance}

// severity orders component statuses and impacts from harmless to worst. An outage outranks
// maintenance: a page with one component down and another in maintenance is in an outage.
var severity = map[string]int{
	Operational: 0, NoImpact: 0, Maintenance: 1, DegradedPerformance: 2, PartialOutage: 3, MajorOutage: 4,
}

// Worst returns the most severe of statuses (OPERATIONAL when there are none).
func Worst(statuses ...string) string {
	worst := Operational
	for _, s := range statuses {
		if severity[s] > severity[worst] {
			worst = s
		}
	}
	return worst
}

// Overall derives a page's status (api/openapi/status-pages.yaml [I]) from the worst of its component
// statuses, the impacts of its active (unresolved, not maintenance) incidents, and MAINTENANCE
// when a scheduled maintenance is in progress:
//
//	MAJOR_OUTAGE          → MAJOR_SYSTEM_OUTAGE
//	PARTIAL_OUTAGE        → MINOR_SERVICE_OUTAGE
//	DEGRADED_PERFORMANCE  → PARTIALLY_DEGRADED_SERVICE
//	MAINTENANCE           → SERVICE_UNDER_MAINTENANCE
//	anything else         → ALL_SYSTEMS_OPERATIONAL
func Overall(componentStatuses, activeImpacts []string, maintenanceInProgress bool) string {
	all := append(append([]string{}, componentStatuses...), activeImpacts...)
	if maintenanceInProgress {
		all = append(all, Maintenance)
	}
	switch Worst(all...) {
	case MajorOutage:
		return MajorSystemOutage
	case PartialOutage:
		return MinorServiceOutage
	case DegradedPerformance:
		return PartiallyDegradedService
	case Maintenance:
		return ServiceUnderMaintenance
	}
	return AllSystemsOperational
}

// Description is the human text of an overall status, as the public summary shows it.
func Description(overall string) string {
	switch overall {
	case MajorSystemOutage:
		return "Major System Outage"
	case MinorServiceOutage:
		return "Minor Service Outage"
	case PartiallyDegradedService:
		return "Partially Degraded Service"
	case ServiceUnderMaintenance:
		return "Service Under Maintenance"
	}
	return "All Systems Operational"
}

// ImpactOf is the impact an incident gets at creation from the statuses it sets on its
// components: the worst of them, NO_IMPACT when it sets none or only OPERATIONAL.
func ImpactOf(componentStatuses []string) string {
	w := Worst(componentStatuses...)
	if w == Operational {
		return NoImpact
	}
	return w
}
