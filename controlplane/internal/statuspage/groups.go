package statuspage

import (
	"context"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// GroupOf is the API's record of a stored component group.
func GroupOf(g store.Group) Group {
	return Group{ID: g.ID.String(), Name: g.Name, Description: g.Description, SortOrder: g.SortOrder,
		CreatedAt: Time(g.CreatedAt), UpdatedAt: Time(g.UpdatedAt)}
}

func groupsOf(rows []store.Group) []Group {
	out := make([]Group, len(rows))
	for i, g := range rows {
		out[i] = GroupOf(g)
	}
	return out
}

// ListGroups returns one page of a status page's component groups in order; search matches
// the name.
func (s *Service) ListGroups(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]Group, int64, error) {
	rows, total, err := s.st.StatusPages().ListGroups(ctx, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	return groupsOf(rows), total, nil
}

// GetGroup returns one group of a page.
func (s *Service) GetGroup(ctx context.Context, orgID, pageID, id uuid.UUID) (Group, error) {
	g, err := s.st.StatusPages().GetGroup(ctx, orgID, pageID, id)
	return GroupOf(g), err
}

// CreateGroup appends a group to a page, and audits it.
func (s *Service) CreateGroup(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, name string, description *string) (Group, error) {
	var g Group
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		row, err := tx.CreateGroup(ctx, orgID, pageID, name, description, s.now())
		if err != nil {
			return err
		}
		g = GroupOf(row)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageComponentGroup",
			AuditableID: g.ID, AuditableDisplayName: g.Name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return g, err
}

// UpdateGroup applies p and audits it.
func (s *Service) UpdateGroup(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p store.GroupPatch) (Group, error) {
	var g Group
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		row, err := tx.UpdateGroup(ctx, orgID, pageID, id, p, s.now())
		if err != nil {
			return err
		}
		g = GroupOf(row)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPageComponentGroup",
			AuditableID: g.ID, AuditableDisplayName: g.Name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return g, err
}

// DeleteGroup deletes a group; its components become ungrouped, appended after the page's
// ungrouped components in their group order. It is audited.
func (s *Service) DeleteGroup(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		name, err := tx.DeleteGroup(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: "StatusPageComponentGroup",
			AuditableID: id.String(), AuditableDisplayName: name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

// SortGroups orders a page's groups; ids must be exactly its groups.
func (s *Service) SortGroups(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		page, err := tx.LockStatusPage(ctx, orgID, pageID)
		if err != nil {
			return err
		}
		if err := tx.SortGroups(ctx, orgID, pageID, ids); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "groups_sorted", AuditableType: "StatusPage",
			AuditableID: pageID.String(), AuditableDisplayName: page.Name, Metadata: map[string]any{"group_ids": idStrings(ids)}})
	})
}
