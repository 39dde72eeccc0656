package api

import (
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// maxSPName bounds component and group names (the contract gives only a minimum).
const maxSPName = 255

// spName records a broken name rule (1..maxSPName characters).
func spName(o *object, name, v string) {
	if n := utf8.RuneCountInString(v); n < 1 || n > maxSPName {
		o.Fail(name, "must be 1 to %d characters", maxSPName)
	}
}

// Path ids of a component and of a group, in route order.
var (
	componentPath = []string{"status_page_id", "status_page_component_id"}
	groupPath     = []string{"status_page_id", "group_id"}
)

func (h *statusPagesHandler) listComponents(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListComponents(c, orgID(c), pageID, search, p.PerPage, p.Offset())
	return listed(items, p, total, err)
}

func (h *statusPagesHandler) createComponent(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	in, err := decodeBody(c, decodeNewComponent)
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateComponent(c, actor(c), orgID(c), pageID, in))
}

func decodeNewComponent(o *object) store.NewComponent {
	in := store.NewComponent{Status: statuspage.Operational, DisplayUptime: true, DisplayMetrics: true}
	if o.Require("name") {
		if v, ok := field[string](o, "name").Value(); ok {
			spName(o, "name", v)
			in.Name = v
		}
	}
	if v := nonNull[string](o, "status"); v.Set {
		componentStatus(o, "status", v.V)
		in.Status = v.V
	}
	if v := nonNull[bool](o, "display_uptime"); v.Set {
		in.DisplayUptime = v.V
	}
	if v := nonNull[bool](o, "display_metrics"); v.Set {
		in.DisplayMetrics = v.V
	}
	return in
}

func (h *statusPagesHandler) getComponent(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return done(h.pages.GetComponent(c, orgID(c), p[0], p[1]))
}

// optionalID decodes a string-or-null id field; set reports presence.
func optionalID(o *object, name string) (id *uuid.UUID, set bool) {
	v := field[string](o, name)
	if !v.Set {
		return nil, false
	}
	if v.Null {
		return nil, true
	}
	parsed, err := uuid.Parse(v.V)
	if err != nil || len(v.V) != 36 {
		o.Fail(name, "%q is not an id", v.V)
		return nil, false
	}
	return &parsed, true
}

func (h *statusPagesHandler) patchComponent(c *gin.Context, p []uuid.UUID) (int, any, error) {
	patch, err := decodeBody(c, decodeComponentPatch)
	if err != nil {
		return 0, nil, err
	}
	return done(h.pages.UpdateComponent(c, actor(c), orgID(c), p[0], p[1], patch))
}

func decodeComponentPatch(o *object) statuspage.ComponentPatch {
	var patch statuspage.ComponentPatch
	if v := nonNull[string](o, "name"); v.Set {
		spName(o, "name", v.V)
		patch.Name = &v.V
	}
	if v := nonNull[string](o, "status"); v.Set {
		componentStatus(o, "status", v.V)
		patch.Status = &v.V
	}
	patch.DisplayUptime = nonNull[bool](o, "display_uptime").Ptr()
	patch.DisplayMetrics = nonNull[bool](o, "display_metrics").Ptr()
	patch.OverrideStatus = nonNull[bool](o, "override_status").Ptr()
	patch.GroupID, patch.GroupSet = optionalID(o, "group_id")
	patch.HeartbeatID, patch.HeartbeatSet = optionalID(o, "heartbeat_id")
	if list, ok := spIDList(o, "check_ids"); ok {
		patch.CheckIDs = &list
	}
	return patch
}

func (h *statusPagesHandler) removeComponent(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return removed(p[1].String(), h.pages.DeleteComponent(c, actor(c), orgID(c), p[0], p[1]))
}

// sortBody reads {<field>: string[]} (required).
func sortBody(c *gin.Context, name string) ([]uuid.UUID, error) {
	return decodeBody(c, func(o *object) []uuid.UUID {
		var list []uuid.UUID
		if o.Require(name) {
			list, _ = spIDList(o, name)
		}
		return list
	})
}

// sorted is the answer of the sort-order routes, or err.
func sorted(err error) (int, any, error) { return done(gin.H{"message": "Sort order updated."}, err) }

func (h *statusPagesHandler) sortComponents(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	list, err := sortBody(c, "component_ids")
	if err != nil {
		return 0, nil, err
	}
	return sorted(h.pages.SortComponents(c, actor(c), orgID(c), pageID, list))
}

func (h *statusPagesHandler) sortGroups(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	list, err := sortBody(c, "group_ids")
	if err != nil {
		return 0, nil, err
	}
	return sorted(h.pages.SortGroups(c, actor(c), orgID(c), pageID, list))
}

func (h *statusPagesHandler) sortGroupComponents(c *gin.Context, p []uuid.UUID) (int, any, error) {
	list, err := sortBody(c, "component_ids")
	if err != nil {
		return 0, nil, err
	}
	return sorted(h.pages.SortGroupComponents(c, actor(c), orgID(c), p[0], p[1], list))
}

func (h *statusPagesHandler) listGroups(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListGroups(c, orgID(c), pageID, search, p.PerPage, p.Offset())
	return listed(items, p, total, err)
}

// newGroup is a decoded group create body.
type newGroup struct {
	name string
	desc *string
}

func (h *statusPagesHandler) createGroup(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	g, err := decodeBody(c, func(o *object) newGroup {
		var g newGroup
		if o.Require("name") {
			if v, ok := field[string](o, "name").Value(); ok {
				spName(o, "name", v)
				g.name = v
			}
		}
		// The create body's description is a string (null is for the PATCH, where it clears).
		g.desc = nonNull[string](o, "description").Ptr()
		return g
	})
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateGroup(c, actor(c), orgID(c), pageID, g.name, g.desc))
}

func (h *statusPagesHandler) getGroup(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return done(h.pages.GetGroup(c, orgID(c), p[0], p[1]))
}

func (h *statusPagesHandler) patchGroup(c *gin.Context, p []uuid.UUID) (int, any, error) {
	patch, err := decodeBody(c, func(o *object) store.GroupPatch {
		var patch store.GroupPatch
		if v := nonNull[string](o, "name"); v.Set {
			spName(o, "name", v.V)
			patch.Name = &v.V
		}
		if v := field[string](o, "description"); v.Set {
			patch.DescriptionSet, patch.Description = true, v.Ptr()
		}
		return patch
	})
	if err != nil {
		return 0, nil, err
	}
	return done(h.pages.UpdateGroup(c, actor(c), orgID(c), p[0], p[1], patch))
}

func (h *statusPagesHandler) removeGroup(c *gin.Context, p []uuid.UUID) (int, any, error) {
	return removed(p[1].String(), h.pages.DeleteGroup(c, actor(c), orgID(c), p[0], p[1]))
}
