package statuspage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ComponentDetailOf is the API's record of a stored component.
func ComponentDetailOf(c store.Component) ComponentDetail {
	d := ComponentDetail{Component: Component{ID: c.ID.String(), Name: c.Name, Status: c.Status, DisplayUptime: c.DisplayUptime,
		DisplayMetrics: c.DisplayMetrics, CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt), GroupID: idString(c.GroupID),
		SortOrder: c.SortOrder, IsExternalComponent: c.IsExternalComponent},
		CheckIDs: idStrings(c.CheckIDs), HeartbeatID: idString(c.HeartbeatID), OverrideStatus: c.OverrideStatus}
	return d
}

func idString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// ListComponents returns one page of a status page's components in display order; search
// matches the name.
func (s *Service) ListComponents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]ComponentDetail, int64, error) {
	rows, total, err := s.st.StatusPages().ListComponents(ctx, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out := make([]ComponentDetail, len(rows))
	for i, c := range rows {
		out[i] = ComponentDetailOf(c)
	}
	return out, total, nil
}

// GetComponent returns one component of a page.
func (s *Service) GetComponent(ctx context.Context, orgID, pageID, id uuid.UUID) (ComponentDetail, error) {
	c, err := s.st.StatusPages().GetComponent(ctx, orgID, pageID, id)
	return ComponentDetailOf(c), err
}

// CreateComponent appends an ungrouped component to a page, and audits it.
func (s *Service) CreateComponent(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in store.NewComponent) (ComponentDetail, error) {
	var d ComponentDetail
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		id := uuid.Must(uuid.NewV7())
		if err := tx.CreateComponent(ctx, orgID, pageID, id, in, s.now()); err != nil {
			return err
		}
		c, err := tx.GetComponent(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		d = ComponentDetailOf(c)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageComponent",
			AuditableID: d.ID, AuditableDisplayName: d.Name, Metadata: map[string]any{"status_page_id": pageID.String(), "status": d.Status}})
	})
	return d, err
}

// ComponentPatch changes a component; nil fields stay as they are.
type ComponentPatch struct {
	Name           *string
	Status         *string
	DisplayUptime  *bool
	DisplayMetrics *bool
	GroupSet       bool       // group_id given
	GroupID        *uuid.UUID // nil with GroupSet: ungroup
	CheckIDs       *[]uuid.UUID
	HeartbeatSet   bool       // heartbeat_id given
	HeartbeatID    *uuid.UUID // nil with HeartbeatSet: unlink
	OverrideStatus *bool
}

// errFollowsMonitors: a component that follows its monitors has no status to set by hand.
var errFollowsMonitors = &store.ValidationError{Field: "status",
	Message: "cannot be set by hand while the component follows its checks or heartbeat; set override_status to true"}

// UpdateComponent applies p and audits it. A component linked to checks or a heartbeat and not
// overridden follows its monitors: its status is derived at once (FromMonitors) and cannot be
// set by hand.
func (s *Service) UpdateComponent(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p ComponentPatch) (ComponentDetail, error) {
	var d ComponentDetail
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		cur, err := tx.GetComponent(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		now := s.now()
		if p.GroupSet && !sameID(cur.GroupID, p.GroupID) {
			if err := tx.MoveComponentToGroup(ctx, orgID, pageID, id, p.GroupID); err != nil {
				return err
			}
		}
		if p.CheckIDs != nil {
			if err := tx.SetComponentChecks(ctx, orgID, id, *p.CheckIDs); err != nil {
				return err
			}
		}
		if p.HeartbeatSet {
			if err := tx.SetComponentHeartbeat(ctx, orgID, id, p.HeartbeatID); err != nil {
				return err
			}
		}
		if err := tx.UpdateComponentFields(ctx, orgID, id, store.ComponentFields{Name: p.Name, DisplayUptime: p.DisplayUptime,
			DisplayMetrics: p.DisplayMetrics, OverrideStatus: p.OverrideStatus}, now); err != nil {
			return err
		}
		following, follows, err := tx.FollowingComponent(ctx, orgID, id)
		if err != nil {
			return err
		}
		switch {
		case follows && p.Status != nil:
			return errFollowsMonitors
		case follows:
			if next := FromMonitors(monitorsOf(following)); next != following.Status {
				if err := tx.SetComponentStatus(ctx, orgID, id, next, now); err != nil {
					return err
				}
			}
		case p.Status != nil:
			if err := tx.SetComponentStatus(ctx, orgID, id, *p.Status, now); err != nil {
				return err
			}
		}
		c, err := tx.GetComponent(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		d = ComponentDetailOf(c)
		meta := map[string]any{"status_page_id": pageID.String(), "status": d.Status, "check_ids": d.CheckIDs,
			"heartbeat_id": d.HeartbeatID, "group_id": d.GroupID, "override_status": d.OverrideStatus}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPageComponent",
			AuditableID: d.ID, AuditableDisplayName: d.Name, Metadata: meta})
	})
	return d, err
}

func sameID(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// monitorsOf are the monitors of a component that follows them: its checks, then its heartbeat.
func monitorsOf(c store.FollowingComponent) []Monitor {
	ms := make([]Monitor, 0, len(c.CheckStates)+1)
	for i, state := range c.CheckStates {
		ms = append(ms, Monitor{State: state, Paused: c.CheckPaused[i]})
	}
	if c.HeartbeatState != nil {
		ms = append(ms, Monitor{State: *c.HeartbeatState, Paused: c.HeartbeatPaused != nil && *c.HeartbeatPaused})
	}
	return ms
}

// SyncFollowingComponents sets every monitor-fed component's status from its monitors' current
// states (FromMonitors), across organizations: it is the system's own job, and each component
// is written in its own organization and transaction. Changes are audited as the system's.
func (s *Service) SyncFollowingComponents(ctx context.Context, now time.Time) error {
	following, err := s.st.StatusPages().FollowingComponents(ctx)
	if err != nil {
		return err
	}
	for _, c := range following {
		next := FromMonitors(monitorsOf(c))
		if next == c.Status {
			continue
		}
		err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
			changed, err := tx.SetFollowedComponentStatus(ctx, c.OrgID, c.ID, c.Status, next, now)
			if err != nil || !changed {
				return err
			}
			return tx.Audit(ctx, c.OrgID, store.SystemActor, store.AuditEvent{Action: "status_changed", AuditableType: "StatusPageComponent",
				AuditableID: c.ID.String(), AuditableDisplayName: c.Name,
				Metadata: map[string]any{"old_status": c.Status, "new_status": next, "source": "monitors"}})
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("sync component %s: %w", c.ID, err)
		}
	}
	return nil
}

// DeleteComponent deletes a component (its links, incident references and subscriptions go
// with it), and audits it.
func (s *Service) DeleteComponent(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		name, err := tx.DeleteComponent(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: "StatusPageComponent",
			AuditableID: id.String(), AuditableDisplayName: name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

// SortComponents orders a page's ungrouped components; ids must be exactly those components.
func (s *Service) SortComponents(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		page, err := tx.LockStatusPage(ctx, orgID, pageID)
		if err != nil {
			return err
		}
		if err := tx.SortComponents(ctx, orgID, pageID, ids); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "components_sorted", AuditableType: "StatusPage",
			AuditableID: pageID.String(), AuditableDisplayName: page.Name, Metadata: map[string]any{"component_ids": idStrings(ids)}})
	})
}

// SortGroupComponents orders the components of one group; ids must be exactly its components.
func (s *Service) SortGroupComponents(ctx context.Context, actor store.Actor, orgID, pageID, groupID uuid.UUID, ids []uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		g, err := tx.GetGroup(ctx, orgID, pageID, groupID)
		if err != nil {
			return err
		}
		if err := tx.SortGroupComponents(ctx, orgID, groupID, ids); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "components_sorted", AuditableType: "StatusPageComponentGroup",
			AuditableID: groupID.String(), AuditableDisplayName: g.Name, Metadata: map[string]any{"component_ids": idStrings(ids)}})
	})
}
