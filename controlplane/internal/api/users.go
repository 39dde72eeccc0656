package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// peopleStore is what the users and invitations API needs from the store.
type peopleStore interface {
	ListMembers(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]store.Member, int64, error)
	RemoveMember(ctx context.Context, actor store.Actor, orgID, userID uuid.UUID) error
	ListInvitations(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]store.Invitation, int64, error)
	CreateInvitation(ctx context.Context, actor store.Actor, orgID uuid.UUID, email, role string,
		seatLimit func(plan string) (limit int, limited bool)) (store.Invitation, error)
}

var _ peopleStore = (*store.Store)(nil)

// peopleHandler serves users and invitations (api/openapi/people.yaml; PEOPLE area). Seats: see
// seatLimit.
type peopleHandler struct {
	st   peopleStore
	auth *auth.Authenticator
}

// seatLimit is the number of seats (members plus pending invitations) of a plan: free 5, paid
// (and any other plan) unlimited. CreateInvitation applies it under the organization's lock.
func seatLimit(plan string) (limit int, limited bool) {
	if plan == "free" {
		return 5, true
	}
	return 0, false
}

func newPeopleHandler(d Deps) *peopleHandler { return &peopleHandler{st: d.Store, auth: d.Auth} }

// Roles of organization members.
const (
	roleAdmin    = "ADMIN"
	roleStandard = "STANDARD"
)

// userJSON is a member as GET /v1/users lists it.
type userJSON struct {
	ID        string  `json:"id"`
	FirstName *string `json:"first_name"`
	LastName  *string `json:"last_name"`
	Email     *string `json:"email"`
	Image     *string `json:"image"`
	Role      string  `json:"role"`
}

// invitationJSON is an invitation.
type invitationJSON struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
}

func toInvitationJSON(i store.Invitation) invitationJSON {
	return invitationJSON{ID: i.ID.String(), Email: i.Email, Role: i.Role, CreatedAt: formatTime(i.CreatedAt)}
}

// listUsers is GET /v1/users: the organization's members with their role.
func (h *peopleHandler) listUsers(c *gin.Context) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	list, total, err := h.st.ListMembers(c, orgID(c), search, p.PerPage, p.Offset())
	if err != nil {
		return 0, nil, err
	}
	items := make([]userJSON, len(list))
	for i, m := range list {
		email := m.Email
		items[i] = userJSON{ID: m.ID.String(), FirstName: m.FirstName, LastName: m.LastName, Email: &email, Image: m.Image, Role: m.Role}
	}
	return listed(items, p, total, nil)
}

// removeUser is DELETE /v1/users/{user_id}: the user leaves the organization. A user cannot
// remove themselves (400); only access tokens act as a user, so an API token has no "self".
func (h *peopleHandler) removeUser(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "user_id", 1)
	if err != nil {
		return 0, nil, err
	}
	cred := principal(c).Credential
	if cred.Kind == store.CredentialAccessToken && cred.UserID == id {
		return 0, nil, &apiError{Status: http.StatusBadRequest, Type: "cannot_remove_yourself",
			Message: "you cannot remove yourself from the organization"}
	}
	revoked := h.auth.Expect(store.AuthChangeUser + id.String())
	if err := h.st.RemoveMember(c, actor(c), orgID(c), id); err != nil {
		revoked.Cancel()
		return 0, nil, err
	}
	awaitRevocation(c, revoked) // the user's cached access tokens are gone on every replica
	return removed(id.String(), nil)
}

// listInvitations is GET /v1/invitations: pending invitations, newest first.
func (h *peopleHandler) listInvitations(c *gin.Context) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	list, total, err := h.st.ListInvitations(c, orgID(c), search, p.PerPage, p.Offset())
	return listed(mapped(list, toInvitationJSON), p, total, err)
}

// createInvitation is POST /v1/invitations: it stores the invitation and queues its e-mail.
func (h *peopleHandler) createInvitation(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	var email string
	role := roleStandard
	if o.Require("email") {
		if v, ok := field[string](o, "email").Value(); ok {
			v = strings.TrimSpace(v)
			if !validEmail(v) {
				o.Fail("email", "must be an e-mail address, e.g. user@example.com")
			}
			email = v
		}
	}
	if v := nonNull[string](o, "role"); v.Set {
		oneOf(o, "role", v.V, []string{roleAdmin, roleStandard})
		role = v.V
	}
	o.Strict()
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	inv, err := h.st.CreateInvitation(c, actor(c), orgID(c), email, role, seatLimit)
	switch {
	case errors.Is(err, store.ErrAlreadyMember):
		return 0, nil, &apiError{Status: http.StatusBadRequest, Type: "already_member", Message: "email: " + err.Error()}
	case errors.Is(err, store.ErrAlreadyInvited):
		return 0, nil, &apiError{Status: http.StatusBadRequest, Type: "already_invited", Message: "email: " + err.Error()}
	case errors.Is(err, store.ErrSeatLimit):
		return 0, nil, &apiError{Status: http.StatusForbidden, Type: "seat_limit_reached",
			Message: "the plan's seat limit is reached: members and pending invitations count; upgrade the plan or remove a member"}
	}
	return rendered(http.StatusCreated, toInvitationJSON, inv, err)
}
