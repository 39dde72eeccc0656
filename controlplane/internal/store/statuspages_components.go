package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Component is a status page component with the monitors linked to it.
type Component struct {
	ID                  uuid.UUID
	OrgID               uuid.UUID
	StatusPageID        uuid.UUID
	Name                string
	Status              string
	DisplayUptime       bool
	DisplayMetrics      bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
	GroupID             *uuid.UUID
	SortOrder           *int
	IsExternalComponent bool
	OverrideStatus      bool
	HeartbeatID         *uuid.UUID
	CheckIDs            []uuid.UUID // in id order
}

func componentOf[R dbsqlc.GetComponentRow | dbsqlc.ListComponentsRow | dbsqlc.PageComponentsRow](r R) Component {
	g := dbsqlc.GetComponentRow(r)
	return Component{ID: g.ID, OrgID: g.OrgID, StatusPageID: g.StatusPageID, Name: g.Name, Status: g.Status,
		DisplayUptime: g.DisplayUptime, DisplayMetrics: g.DisplayMetrics, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
		GroupID: g.GroupID, SortOrder: intPtr(g.SortOrder), IsExternalComponent: g.IsExternalComponent,
		OverrideStatus: g.OverrideStatus, HeartbeatID: g.HeartbeatID, CheckIDs: g.CheckIds}
}

// ListComponents returns one page of a status page's components in display order (ungrouped
// first, then each group in its order) and the total; search matches the name.
func (r StatusPageReader) ListComponents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]Component, int64, error) {
	if err := r.StatusPageExists(ctx, orgID, pageID); err != nil {
		return nil, 0, err
	}
	total, err := r.q.CountComponents(ctx, dbsqlc.CountComponentsParams{OrgID: orgID, StatusPageID: pageID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListComponents(ctx, dbsqlc.ListComponentsParams{OrgID: orgID, StatusPageID: pageID, Search: search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]Component, len(rows))
	for i, row := range rows {
		out[i] = componentOf(row)
	}
	return out, total, nil
}

// PageComponents returns every component of a page in display order.
func (r StatusPageReader) PageComponents(ctx context.Context, orgID, pageID uuid.UUID) ([]Component, error) {
	rows, err := r.q.PageComponents(ctx, dbsqlc.PageComponentsParams{OrgID: orgID, StatusPageID: pageID})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Component, len(rows))
	for i, row := range rows {
		out[i] = componentOf(row)
	}
	return out, nil
}

// GetComponent returns one component of a page.
func (r StatusPageReader) GetComponent(ctx context.Context, orgID, pageID, id uuid.UUID) (Component, error) {
	row, err := r.q.GetComponent(ctx, dbsqlc.GetComponentParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	if err != nil {
		return Component{}, translate(err)
	}
	return componentOf(row), nil
}

// NewComponent is the input of CreateComponent.
type NewComponent struct {
	Name           string
	Status         string
	DisplayUptime  bool
	DisplayMetrics bool
}

// CreateComponent appends an ungrouped component to a page.
func (t *StatusPageTx) CreateComponent(ctx context.Context, orgID, pageID, id uuid.UUID, in NewComponent, now time.Time) error {
	return translate(t.q.CreateComponent(ctx, dbsqlc.CreateComponentParams{ID: id, OrgID: orgID, StatusPageID: pageID, Name: in.Name,
		Status: in.Status, DisplayUptime: in.DisplayUptime, DisplayMetrics: in.DisplayMetrics, Now: now}))
}

// MoveComponentToGroup appends a component to a group of its page (nil: to the ungrouped
// components). A group the page does not have is a ValidationError.
func (t *StatusPageTx) MoveComponentToGroup(ctx context.Context, orgID, pageID, id uuid.UUID, groupID *uuid.UUID) error {
	if groupID != nil {
		ok, err := t.q.GroupOnPage(ctx, dbsqlc.GroupOnPageParams{OrgID: orgID, StatusPageID: pageID, ID: *groupID})
		if err != nil {
			return translate(err)
		}
		if !ok {
			return spValidation("group_id", "no such group on this status page")
		}
	}
	return translate(t.q.MoveComponentToGroup(ctx, dbsqlc.MoveComponentToGroupParams{OrgID: orgID, StatusPageID: pageID, ID: id, GroupID: groupID}))
}

// SetComponentChecks replaces the checks linked to a component; every id must be a check of the
// organization (a ValidationError otherwise).
func (t *StatusPageTx) SetComponentChecks(ctx context.Context, orgID, id uuid.UUID, checkIDs []uuid.UUID) error {
	n, err := t.q.CountOrgChecks(ctx, dbsqlc.CountOrgChecksParams{OrgID: orgID, Ids: checkIDs})
	if err != nil {
		return translate(err)
	}
	if int(n) != len(checkIDs) {
		return spValidation("check_ids", "every id must be a check of this organization")
	}
	if err := t.q.ClearComponentChecks(ctx, dbsqlc.ClearComponentChecksParams{OrgID: orgID, ComponentID: id}); err != nil {
		return translate(err)
	}
	return translate(t.q.AddComponentChecks(ctx, dbsqlc.AddComponentChecksParams{OrgID: orgID, ComponentID: id, CheckIds: checkIDs}))
}

// SetComponentHeartbeat links a heartbeat of the organization to a component (nil unlinks); a
// heartbeat the organization does not have is a ValidationError.
func (t *StatusPageTx) SetComponentHeartbeat(ctx context.Context, orgID, id uuid.UUID, heartbeatID *uuid.UUID) error {
	if heartbeatID != nil {
		ok, err := t.q.HeartbeatExists(ctx, dbsqlc.HeartbeatExistsParams{OrgID: orgID, ID: *heartbeatID})
		if err != nil {
			return translate(err)
		}
		if !ok {
			return spValidation("heartbeat_id", "no such heartbeat in this organization")
		}
	}
	return translate(t.q.SetComponentHeartbeat(ctx, dbsqlc.SetComponentHeartbeatParams{OrgID: orgID, ID: id, HeartbeatID: heartbeatID}))
}

// ComponentFields are the plain fields of a component; nil fields stay.
type ComponentFields struct {
	Name           *string
	DisplayUptime  *bool
	DisplayMetrics *bool
	OverrideStatus *bool
}

// UpdateComponentFields changes a component's plain fields and touches updated_at.
func (t *StatusPageTx) UpdateComponentFields(ctx context.Context, orgID, id uuid.UUID, f ComponentFields, now time.Time) error {
	return translate(t.q.UpdateComponentFields(ctx, dbsqlc.UpdateComponentFieldsParams{OrgID: orgID, ID: id, Name: f.Name,
		DisplayUptime: f.DisplayUptime, DisplayMetrics: f.DisplayMetrics, OverrideStatus: f.OverrideStatus, Now: now}))
}

// SetComponentStatus sets a component's status.
func (t *StatusPageTx) SetComponentStatus(ctx context.Context, orgID, id uuid.UUID, status string, now time.Time) error {
	return translate(t.q.SetComponentStatus(ctx, dbsqlc.SetComponentStatusParams{OrgID: orgID, ID: id, Status: status, Now: now}))
}

// SetFollowedComponentStatus sets the status a component's monitors give it, unless its status
// is no longer old or it was overridden meanwhile; it reports whether it did.
func (t *StatusPageTx) SetFollowedComponentStatus(ctx context.Context, orgID, id uuid.UUID, old, next string, now time.Time) (bool, error) {
	n, err := t.q.SetFollowedComponentStatus(ctx, dbsqlc.SetFollowedComponentStatusParams{OrgID: orgID, ID: id,
		OldStatus: old, Status: next, Now: now})
	return n == 1, translate(err)
}

// DeleteComponent deletes a component (its links, incident references and subscriptions go
// with it) and returns its name.
func (t *StatusPageTx) DeleteComponent(ctx context.Context, orgID, pageID, id uuid.UUID) (string, error) {
	name, err := t.q.DeleteComponent(ctx, dbsqlc.DeleteComponentParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	return name, translate(err)
}

// SortComponents orders a page's ungrouped components; ids must be exactly those components.
func (t *StatusPageTx) SortComponents(ctx context.Context, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	have, err := t.q.UngroupedComponentIDs(ctx, dbsqlc.UngroupedComponentIDsParams{OrgID: orgID, StatusPageID: pageID})
	if err := sameIDs("component_ids", have, ids, err); err != nil {
		return err
	}
	return t.sortComponents(ctx, orgID, ids)
}

// SortGroupComponents orders the components of a group; ids must be exactly its components.
func (t *StatusPageTx) SortGroupComponents(ctx context.Context, orgID, groupID uuid.UUID, ids []uuid.UUID) error {
	have, err := t.q.GroupComponentIDs(ctx, dbsqlc.GroupComponentIDsParams{OrgID: orgID, GroupID: &groupID})
	if err := sameIDs("component_ids", have, ids, err); err != nil {
		return err
	}
	return t.sortComponents(ctx, orgID, ids)
}

func (t *StatusPageTx) sortComponents(ctx context.Context, orgID uuid.UUID, ids []uuid.UUID) error {
	for i, id := range ids {
		if err := t.q.SetComponentSortOrder(ctx, dbsqlc.SetComponentSortOrderParams{OrgID: orgID, ID: id, SortOrder: ptr(int32(i))}); err != nil {
			return translate(err)
		}
	}
	return nil
}

// sameIDs is a ValidationError about field unless want lists each of have exactly once.
func sameIDs(field string, have, want []uuid.UUID, err error) error {
	if err != nil {
		return translate(err)
	}
	a, b := slices.Clone(have), slices.Clone(want)
	cmp := func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	if !slices.Equal(a, b) {
		return spValidation(field, "must list each of the %d ids exactly once, in the wanted order", len(have))
	}
	return nil
}

// spValidation is a 400 about one field.
func spValidation(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// FollowingComponent is a component that follows its monitors, with their states.
type FollowingComponent struct {
	OrgID, ID uuid.UUID
	Name      string
	Status    string
	// CheckStates and CheckPaused are the linked checks' states and paused flags, in check id
	// order; HeartbeatState and HeartbeatPaused the linked heartbeat's, nil when none is.
	CheckStates     []string
	CheckPaused     []bool
	HeartbeatState  *string
	HeartbeatPaused *bool
}

// FollowingComponents returns, across organizations (the lifecycle's own scan), the components
// that follow their monitors — linked to a check or a heartbeat, not overridden, not in a
// maintenance in progress — with their monitors' states.
func (r StatusPageReader) FollowingComponents(ctx context.Context) ([]FollowingComponent, error) {
	rows, err := r.q.FollowingComponents(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]FollowingComponent, len(rows))
	for i, row := range rows {
		out[i] = FollowingComponent(row)
	}
	return out, nil
}

// FollowingComponent reads one component of the organization as FollowingComponents does; ok
// is false when it does not follow its monitors.
func (r StatusPageReader) FollowingComponent(ctx context.Context, orgID, id uuid.UUID) (c FollowingComponent, ok bool, err error) {
	rows, err := r.q.FollowingComponent(ctx, dbsqlc.FollowingComponentParams{OrgID: orgID, ID: id})
	if err != nil || len(rows) == 0 {
		return c, false, translate(err)
	}
	return FollowingComponent(rows[0]), true, nil
}

// Group is a component group of a status page.
type Group struct {
	ID           uuid.UUID
	OrgID        uuid.UUID
	StatusPageID uuid.UUID
	Name         string
	Description  *string
	SortOrder    *int
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func groupOf(g dbsqlc.StatusPageGroup) Group {
	return Group{ID: g.ID, OrgID: g.OrgID, StatusPageID: g.StatusPageID, Name: g.Name, Description: g.Description,
		SortOrder: intPtr(g.SortOrder), CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

func groupsOf(rows []dbsqlc.StatusPageGroup) []Group {
	out := make([]Group, len(rows))
	for i, g := range rows {
		out[i] = groupOf(g)
	}
	return out
}
