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
	"html/template"
	"io"
	"log/slog"
	"net/http"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Store is what the handler needs from storage.
type Store interface {
	ConfirmSubscriber(ctx context.Context, subdomain, token string) (store.Subscription, error)
	SubscriptionByUnsubscribeToken(ctx context.Context, subdomain, token string) (store.Subscription, error)
	Unsubscribe(ctx context.Context, subdomain, token string) (store.Subscription, error)
}

var _ Store = (*store.Store)(nil)

// Options configure the handler. Every zero value means the documented default.
type Options struct {
	// Logger records storage failures. Default: discard.
	Logger *slog.Logger
}

type handler struct {
	st  Store
	log *slog.Logger
}

// NewHandler returns the handler of the confirm and unsubscribe links. It answers on the paths
// above (so mount it where requests keep their full /status/... path) and 404 elsewhere.
func NewHandler(st Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{st: st, log: opts.Logger.With("component", "statuspage_subscribe")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status/{subdomain}/confirm", h.confirm)
	mux.HandleFunc("GET /status/{subdomain}/unsubscribe", h.askUnsubscribe)
	mux.HandleFunc("POST /status/{subdomain}/unsubscribe", h.unsubscribe)
	return mux
}

// page is what one rendered page shows.
type page struct {
	Title    string
	Message  string
	PageName string
	Email    string
	Form     bool // the unsubscribe button
	Token    string
}

var tmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}{{with .PageName}} · {{.}}{{end}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1a1a1a;background:#fff;margin:0}
main{max-width:36rem;margin:4rem auto;padding:0 1.25rem}
h1{font-size:1.5rem;margin:0 0 1rem}
button{font:inherit;padding:.6rem 1.2rem;border:2px solid #1a1a1a;border-radius:.4rem;background:#1a1a1a;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #1f6feb;outline-offset:2px}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}button{background:#eee;color:#111;border-color:#eee}}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p role="status">{{.Message}}</p>
{{if .Form}}<form method="post">
<input type="hidden" name="token" value="{{.Token}}">
<button type="submit">Unsubscribe {{.Email}}</button>
</form>{{end}}
</main>
</body>
</html>
`))

func (h *handler) render(w http.ResponseWriter, status int, p page) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Robots-Tag", "noindex")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = tmpl.Execute(w, p)
}

var invalidLink = page{Title: "Link not valid",
	Message: "This link is not valid, or it has been used already. If you subscribed more than once, use the link of the most recent e-mail."}

// token reads the link's token; a POSTed form field is accepted as well.
func token(w http.ResponseWriter, r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		return r.PostFormValue("token")
	}
	return ""
}

// failed renders what a store error means to the visitor.
func (h *handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrLinkInvalid) {
		h.render(w, http.StatusNotFound, invalidLink)
		return
	}
	h.log.ErrorContext(r.Context(), "subscriber link", "err", err, "path", r.URL.Path)
	h.render(w, http.StatusInternalServerError, page{Title: "Something went wrong",
		Message: "We could not process this link right now. Please try again in a few minutes."})
}

func (h *handler) confirm(w http.ResponseWriter, r *http.Request) {
	t := token(w, r)
	if t == "" {
		h.render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.ConfirmSubscriber(r.Context(), r.PathValue("subdomain"), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, http.StatusOK, page{Title: "Subscription confirmed", PageName: sub.PageName, Email: sub.Email,
		Message: sub.Email + " will now receive e-mail updates about " + sub.PageName + ". Every e-mail has a link to unsubscribe."})
}

func (h *handler) askUnsubscribe(w http.ResponseWriter, r *http.Request) {
	t := token(w, r)
	if t == "" {
		h.render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.SubscriptionByUnsubscribeToken(r.Context(), r.PathValue("subdomain"), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, http.StatusOK, page{Title: "Unsubscribe", PageName: sub.PageName, Email: sub.Email, Form: true, Token: t,
		Message: "Stop e-mail updates about " + sub.PageName + " to " + sub.Email + "?"})
}

func (h *handler) unsubscribe(w http.ResponseWriter, r *http.Request) {
	t := token(w, r)
	if t == "" {
		h.render(w, http.StatusBadRequest, invalidLink)
		return
	}
	sub, err := h.st.Unsubscribe(r.Context(), r.PathValue("subdomain"), t)
	switch {
	case errors.Is(err, store.ErrLinkInvalid):
		// Unsubscribing is idempotent: a second click (or a mail client's retry) is not an error.
		h.render(w, http.StatusOK, page{Title: "Unsubscribed",
			Message: "This address receives no e-mail updates for this link's status page."})
	case err != nil:
		h.failed(w, r, err)
	default:
		h.render(w, http.StatusOK, page{Title: "Unsubscribed", PageName: sub.PageName, Email: sub.Email,
			Message: sub.Email + " will receive no more e-mail updates about " + sub.PageName + "."})
	}
}
