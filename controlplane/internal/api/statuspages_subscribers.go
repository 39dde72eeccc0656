package api

import (
	"net/mail"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// onSubscriberPage is onPage for the subscriber routes. A page of another organization is
// 403 here (the public API contract), unlike the other sub-resources where it is 404.
func (h *statusPagesHandler) onSubscriberPage(f func(c *gin.Context, pageID uuid.UUID) (int, any, error)) handlerFn {
	return onPage(func(c *gin.Context, pageID uuid.UUID) (int, any, error) {
		foreign, err := h.pages.StatusPageInOtherOrg(c, orgID(c), pageID)
		if err != nil {
			return 0, nil, err
		}
		if foreign {
			return 0, nil, forbidden("the status page is not in your organization")
		}
		return f(c, pageID)
	})
}

func (h *statusPagesHandler) listSubscribers(c *gin.Context, id uuid.UUID) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListSubscribers(c, orgID(c), id, search, p.PerPage, p.Offset())
	return listed(items, p, total, err)
}

// validEmail accepts a bare address (no display name, no angle brackets) with a dotted domain.
func validEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " <>\"") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	return at > 0 && strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

func (h *statusPagesHandler) createSubscriber(c *gin.Context, id uuid.UUID) (int, any, error) {
	in, err := decodeBody(c, decodeNewSubscriber)
	if err != nil {
		return 0, nil, err
	}
	return created(h.pages.CreateSubscriber(c, actor(c), orgID(c), id, in))
}

func decodeNewSubscriber(o *object) store.NewSubscriber {
	in := store.NewSubscriber{Mode: statuspage.AllComponents, ComponentIDs: []uuid.UUID{}}
	if o.Require("email_address") {
		if v, ok := field[string](o, "email_address").Value(); ok {
			if !validEmail(v) {
				o.Fail("email_address", "must be an e-mail address, e.g. user@example.com")
			}
			in.EmailAddress = v
		}
	}
	if v := nonNull[string](o, "component_subscription_mode"); v.Set {
		oneOf(o, "component_subscription_mode", v.V, []string{statuspage.AllComponents, statuspage.SelectedComponents})
		in.Mode = v.V
	}
	if list, ok := spIDList(o, "component_ids"); ok {
		in.ComponentIDs = list
	}
	switch {
	case in.Mode == statuspage.SelectedComponents && len(in.ComponentIDs) == 0:
		o.Fail("component_ids", "must name at least one component with SELECTED_COMPONENTS")
	case in.Mode == statuspage.AllComponents && len(in.ComponentIDs) > 0:
		o.Fail("component_ids", "must be empty with ALL_COMPONENTS")
	}
	return in
}

func (h *statusPagesHandler) removeSubscriber(c *gin.Context, id uuid.UUID) (int, any, error) {
	c.Set(ctxResource, "subscriber")
	sub, err := pathID(c, "subscriber_id", minPathIDLen)
	if err != nil {
		return 0, nil, err
	}
	return removed(sub.String(), h.pages.DeleteSubscriber(c, actor(c), orgID(c), id, sub))
}
