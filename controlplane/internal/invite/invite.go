// Package invite serves the link of an invitation e-mail (notifier: {VANTAGE_PUBLIC_URL}/
// invitations/accept?token=…):
//
//	GET  /invitations/accept?token=…  shows the invitation (organization, address, role) with
//	                                 an "Accept" button; it never accepts
//	POST /invitations/accept          accepts (token in the query or the form): the user with
//	                                 the invited address is created when missing and joins
//	                                 the organization with the invited role
//
// GET never accepts, because mail scanners fetch links. A token that is not a pending
// invitation's (made up, or accepted already) gets a 404 page. Pages are small,
// self-contained, accessible HTML; the link carries a secret, so responses are never cached,
// send no Referer and may not be framed. The API mounts the handler (api.Deps.Invitations).
package invite

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/linkpage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Path is where the handler answers; the invitation e-mail links to it.
const Path = "/invitations/accept"

// Store is what the handler needs from storage.
type Store interface {
	InvitationByToken(ctx context.Context, token string) (store.PendingInvitation, error)
	AcceptInvitation(ctx context.Context, token string) (store.AcceptedInvitation, error)
}

var _ Store = (*store.Store)(nil)

// Deps are the handler's collaborators. It has no settings, so no Config.
type Deps struct {
	Store Store // required
	// Logger records storage failures (component invite). Default: discarded.
	Logger *slog.Logger
}

type handler struct {
	st  Store
	log *slog.Logger
}

// NewHandler returns the handler of the invitation link. It answers GET and POST on Path (so
// mount it where requests keep their full path), 405 to other methods there, 404 elsewhere.
func NewHandler(deps Deps) (http.Handler, error) {
	if deps.Store == nil {
		return nil, errors.New("invite: a store is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{st: deps.Store, log: deps.Logger.With("component", "invite")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, h.show)
	mux.HandleFunc("POST "+Path, h.accept)
	return mux, nil
}

var invalidLink = linkpage.Page{Title: "Invitation link not valid",
	Message: "This invitation link is not valid, or it has been used already. If you need access, ask an administrator of the organization to invite you again."}

// failed renders what a store error means to the visitor.
func (h *handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrLinkInvalid) {
		linkpage.Render(w, http.StatusNotFound, invalidLink)
		return
	}
	h.log.ErrorContext(r.Context(), "invitation link", "err", err, "method", r.Method)
	linkpage.Render(w, http.StatusInternalServerError, linkpage.Page{Title: "Something went wrong",
		Message: "We could not process this invitation right now. Please try again in a few minutes."})
}

// show is GET: the invitation and the button that accepts it.
func (h *handler) show(w http.ResponseWriter, r *http.Request) {
	t := linkpage.Token(w, r)
	if t == "" {
		linkpage.Render(w, http.StatusBadRequest, invalidLink)
		return
	}
	inv, err := h.st.InvitationByToken(r.Context(), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Join " + inv.OrgName, Context: inv.OrgName, Button: "Accept the invitation", Token: t,
		Message: inv.Email + " is invited to join the organization " + inv.OrgName + " on Vantage as " + roleName(inv.Role) + "."})
}

// accept is POST: the invitation is accepted; a second POST finds no pending invitation (404).
func (h *handler) accept(w http.ResponseWriter, r *http.Request) {
	t := linkpage.Token(w, r)
	if t == "" {
		linkpage.Render(w, http.StatusBadRequest, invalidLink)
		return
	}
	acc, err := h.st.AcceptInvitation(r.Context(), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Invitation accepted", Context: acc.OrgName,
		Message: acc.Email + " is now a member of the organization " + acc.OrgName + " on Vantage, as " + roleName(acc.Role) + "."})
}

// roleName turns a role such as ADMIN into "Admin".
func roleName(role string) string {
	if role == "" {
		return role
	}
	role = strings.ToLower(role)
	return strings.ToUpper(role[:1]) + role[1:]
}
