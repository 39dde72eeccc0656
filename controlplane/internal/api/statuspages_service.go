package api

import (
	"context"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// statusPageService is what the status page handlers need: the status pages' domain
// (statuspage.Service).
type statusPageService interface {
	ListStatusPages(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]statuspage.ListItem, int64, error)
	GetStatusPage(ctx context.Context, orgID, id uuid.UUID) (statuspage.Page, error)
	StatusPageInOtherOrg(ctx context.Context, orgID, id uuid.UUID) (bool, error)
	CreateStatusPage(ctx context.Context, actor store.Actor, orgID uuid.UUID, in store.StatusPageInput) (statuspage.Page, error)
	CustomDomainStatus(ctx context.Context, orgID, id uuid.UUID) (statuspage.DomainStatus, error)
	VerifyCustomDomain(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) (statuspage.DomainStatus, error)
	UpdateStatusPage(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, in store.StatusPageInput) (statuspage.Page, error)
	DeleteStatusPage(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	ListComponents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.ComponentDetail, int64, error)
	GetComponent(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.ComponentDetail, error)
	CreateComponent(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in store.NewComponent) (statuspage.ComponentDetail, error)
	UpdateComponent(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p statuspage.ComponentPatch) (statuspage.ComponentDetail, error)
	DeleteComponent(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error
	SortComponents(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error
	SortGroups(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error
	SortGroupComponents(ctx context.Context, actor store.Actor, orgID, pageID, groupID uuid.UUID, ids []uuid.UUID) error
	ListGroups(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.Group, int64, error)
	GetGroup(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.Group, error)
	CreateGroup(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, name string, description *string) (statuspage.Group, error)
	UpdateGroup(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p store.GroupPatch) (statuspage.Group, error)
	DeleteGroup(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error
	ListIncidents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.IncidentSummary, int64, error)
	GetIncident(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.Incident, error)
	CreateIncident(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in statuspage.NewIncident) (statuspage.Incident, error)
	UpdateIncident(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, title, impact string) (statuspage.Incident, error)
	DeleteIncident(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, maintenanceOnly bool) error
	GetMaintenance(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.MaintenanceDetail, error)
	CreateMaintenance(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in statuspage.NewMaintenance) (statuspage.MaintenanceDetail, error)
	UpdateMaintenance(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p store.MaintenancePatch) (statuspage.MaintenanceDetail, error)
	GetStatusPageSummary(ctx context.Context, subdomain string) (statuspage.Summary, error)
	ListSubscribers(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.Subscriber, int64, error)
	CreateSubscriber(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in store.NewSubscriber) (statuspage.Subscriber, error)
	DeleteSubscriber(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error
	ListIncidentUpdates(ctx context.Context, orgID, pageID, incidentID uuid.UUID, search string, limit, offset int64) ([]statuspage.IncidentUpdate, int64, error)
	GetIncidentUpdate(ctx context.Context, orgID, pageID, incidentID, id uuid.UUID) (statuspage.IncidentUpdate, error)
	CreateIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID uuid.UUID, in statuspage.NewIncidentUpdate) (statuspage.IncidentUpdate, error)
	UpdateIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID, id uuid.UUID, p store.IncidentUpdatePatch) (statuspage.IncidentUpdate, error)
	DeleteIncidentUpdate(ctx context.Context, actor store.Actor, orgID, pageID, incidentID, id uuid.UUID) error
}
