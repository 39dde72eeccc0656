package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// ListGroups returns one page of a status page's component groups in order and the total;
// search matches the name.
func (r StatusPageReader) ListGroups(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]Group, int64, error) {
	if err := r.StatusPageExists(ctx, orgID, pageID); err != nil {
		return nil, 0, err
	}
	total, err := r.q.CountGroups(ctx, dbsqlc.CountGroupsParams{OrgID: orgID, StatusPageID: pageID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListGroups(ctx, dbsqlc.ListGroupsParams{OrgID: orgID, StatusPageID: pageID, Search: search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	return groupsOf(rows), total, nil
}

// PageGroups returns every group of a page in order.
func (r StatusPageReader) PageGroups(ctx context.Context, orgID, pageID uuid.UUID) ([]Group, error) {
	rows, err := r.q.PageGroups(ctx, dbsqlc.PageGroupsParams{OrgID: orgID, StatusPageID: pageID})
	if err != nil {
		return nil, translate(err)
	}
	return groupsOf(rows), nil
}

// GetGroup returns one group of a page.
func (r StatusPageReader) GetGroup(ctx context.Context, orgID, pageID, id uuid.UUID) (Group, error) {
	g, err := r.q.GetGroup(ctx, dbsqlc.GetGroupParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	if err != nil {
		return Group{}, translate(err)
	}
	return groupOf(g), nil
}

// CreateGroup appends a group to a page (sort_order = the number of groups before it).
func (t *StatusPageTx) CreateGroup(ctx context.Context, orgID, pageID uuid.UUID, name string, description *string, now time.Time) (Group, error) {
	g, err := t.q.CreateGroup(ctx, dbsqlc.CreateGroupParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, StatusPageID: pageID,
		Name: name, Description: description, Now: now})
	if err != nil {
		return Group{}, translate(err)
	}
	return groupOf(g), nil
}

// GroupPatch changes a group: nil Name keeps it; DescriptionSet with a nil Description clears it.
type GroupPatch struct {
	Name           *string
	DescriptionSet bool
	Description    *string
}

// UpdateGroup applies p to a group of the page.
func (t *StatusPageTx) UpdateGroup(ctx context.Context, orgID, pageID, id uuid.UUID, p GroupPatch, now time.Time) (Group, error) {
	g, err := t.q.UpdateGroup(ctx, dbsqlc.UpdateGroupParams{OrgID: orgID, StatusPageID: pageID, ID: id, Name: p.Name,
		SetDescription: p.DescriptionSet, Description: p.Description, Now: now})
	if err != nil {
		return Group{}, translate(err)
	}
	return groupOf(g), nil
}

// DeleteGroup deletes a group and returns its name; its components become ungrouped, appended
// after the page's ungrouped components in their group order.
func (t *StatusPageTx) DeleteGroup(ctx context.Context, orgID, pageID, id uuid.UUID) (string, error) {
	if err := t.q.UngroupComponents(ctx, dbsqlc.UngroupComponentsParams{OrgID: orgID, StatusPageID: pageID, GroupID: &id}); err != nil {
		return "", translate(err)
	}
	name, err := t.q.DeleteGroup(ctx, dbsqlc.DeleteGroupParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	return name, translate(err)
}

// SortGroups orders a page's groups; ids must be exactly its groups.
func (t *StatusPageTx) SortGroups(ctx context.Context, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	have, err := t.q.GroupIDs(ctx, dbsqlc.GroupIDsParams{OrgID: orgID, StatusPageID: pageID})
	if err := sameIDs("group_ids", have, ids, err); err != nil {
		return err
	}
	for i, id := range ids {
		if err := t.q.SetGroupSortOrder(ctx, dbsqlc.SetGroupSortOrderParams{OrgID: orgID, ID: id, SortOrder: ptr(int32(i))}); err != nil {
			return translate(err)
		}
	}
	return nil
}
