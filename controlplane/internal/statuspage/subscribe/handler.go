// Package subscribe serves the two public links every status page subscriber e-mail carries:
// the double opt-in confirmation and the unsubscribe (with RFC 8058 one-click unsubscribe).
//
//	GET  /status/{subdomain}/confirm?token=…      confirms the subscription (the token is spent)
//	GET  /status/{subdomain}/unsubscribe?token=…  asks "unsubscribe?" with a one-button form
//	POST /status/{subdomain}/unsubscribe?token=…  deletes the subscriber: the form's answer, and
//	                                             the mail client's one-click POST
//	                                             (body List-Unsubscribe=One-Click)
//
// GET never unsubscribes, because mail scanners fetch links; POST is idempotent (unsubscribing
// twice shows the same page). Pages are small, self-contained, accessible HTML; links carry a
// secret, so responses are never cached and send no Referer.
package subscribe

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/linkpage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Store is what the handler needs from storage.
type Store interface {
	ConfirmSubscriber(ctx context.Context, subdomain, token string) (store.Subscription, error)
	SubscriptionByUnsubscribeToken(ctx context.Context, subdomain, token string) (store.Subscription, error)
	Unsubscribe(ctx context.Context, subdomain, token string) (store.Subscription, error)
}

var _ Store = (*store.Store)(nil)

// Deps are what the handler works with. It has no settings (CONTRIBUTING.md, Constructors).
type Deps struct {
	Store Store // required
	// Logger records storage failures (component statuspage_subscribe). Default: discarded.
	Logger *slog.Logger
}

type handler struct {
	st  Store
	log *slog.Logger
}

// NewHandler returns the handler of the confirm and unsubscribe links. It answers on the paths
// above (so mount it where requests keep their full /status/... path) and 404 elsewhere.
func NewHandler(deps Deps) (http.Handler, error) {
	if deps.Store == nil {
		return nil, errors.New("statuspage/subscribe: a store is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{st: deps.Store, log: deps.Logger.With("component", "statuspage_subscribe")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status/{subdomain}/confirm", h.confirm)
	mux.HandleFunc("GET /status/{subdomain}/unsubscribe", h.askUnsubscribe)
	mux.HandleFunc("POST /status/{subdomain}/unsubscribe", h.unsubscribe)
	return mux, nil
}

var invalidLink = linkpage.Page{Title: "Link not valid",
	Message: "This link is not valid, or it has been used already. If you subscribed more than once, use the link of the most recent e-mail."}

// failed renders what a store error means to the visitor.
func (h *handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrLinkInvalid) {
		linkpage.Render(w, http.StatusNotFound, invalidLink)
		return
	}
	h.log.ErrorContext(r.Context(), "subscriber link", "err", err, "path", r.URL.Path)
	linkpage.Render(w, http.StatusInternalServerError, linkpage.Page{Title: "Something went wrong",
		Message: "We could not process this link right now. Please try again in a few minutes."})
}

func (h *handler) confirm(w http.ResponseWriter, r *http.Request) {
	t := linkpage.Token(w, r)
	if t == "" {
		linkpage.Render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.ConfirmSubscriber(r.Context(), r.PathValue("subdomain"), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Subscription confirmed", Context: sub.PageName,
		Message: sub.Email + " will now receive e-mail updates about " + sub.PageName + ". Every e-mail has a link to unsubscribe."})
}

func (h *handler) askUnsubscribe(w http.ResponseWriter, r *http.Request) {
	t := linkpage.Token(w, r)
	if t == "" {
		linkpage.Render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.SubscriptionByUnsubscribeToken(r.Context(), r.PathValue("subdomain"), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Unsubscribe", Context: sub.PageName, Button: "Unsubscribe " + sub.Email, Token: t,
		Message: "Stop e-mail updates about " + sub.PageName + " to " + sub.Email + "?"})
}

func (h *handler) unsubscribe(w http.ResponseWriter, r *http.Request) {
	t := linkpage.Token(w, r)
	if t == "" {
		linkpage.Render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.Unsubscribe(r.Context(), r.PathValue("subdomain"), t)
	switch {
	case errors.Is(err, store.ErrLinkInvalid):
		// Unsubscribing is idempotent: a second click (or a mail client's retry) is not an error.
		linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Unsubscribed",
			Message: "This address receives no e-mail updates for this link's status page."})
	case err != nil:
		h.failed(w, r, err)
	default:
		linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Unsubscribed", Context: sub.PageName,
			Message: sub.Email + " will receive no more e-mail updates about " + sub.PageName + "."})
	}
}
