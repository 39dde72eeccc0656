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
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"

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

// Options configure the handler. Every zero value means the documented default.
type Options struct {
	// Logger records storage failures. Default: discard.
	Logger *slog.Logger
}

type handler struct {
	st  Store
	log *slog.Logger
}

// NewHandler returns the handler of the invitation link. It answers GET and POST on Path (so
// mount it where requests keep their full path), 405 to other methods there, 404 elsewhere.
func NewHandler(st Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{st: st, log: opts.Logger.With("component", "invite")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, h.show)
	mux.HandleFunc("POST "+Path, h.accept)
	return mux
}

// page is what one rendered page shows.
type page struct {
	Title   string
	Message string
	OrgName string
	Form    bool // the accept button
	Token   string
}

var tmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}{{with .OrgName}} · {{.}}{{end}} · Vantage</title>
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
<button type="submit">Accept the invitation</button>
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
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = tmpl.Execute(w, p)
}

var invalidLink = page{Title: "Invitation link not valid",
	Message: "This invitation link is not valid, or it has been used already. If you need access, ask an administrator of the organization to invite you again."}

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
	h.log.ErrorContext(r.Context(), "invitation link", "err", err, "method", r.Method)
	h.render(w, http.StatusInternalServerError, page{Title: "Something went wrong",
		Message: "We could not process this invitation right now. Please try again in a few minutes."})
}

// show is GET: the invitation and the button that accepts it.
func (h *handler) show(w http.ResponseWriter, r *http.Request) {
	t := token(w, r)
	if t == "" {
		h.render(w, http.StatusBadRequest, invalidLink)
		return
	}
	inv, err := h.st.InvitationByToken(r.Context(), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, http.StatusOK, page{Title: "Join " + inv.OrgName, OrgName: inv.OrgName, Form: true, Token: t,
		Message: inv.Email + " is invited to join the organization " + inv.OrgName + " on Vantage as " + roleName(inv.Role) + "."})
}

// accept is POST: the invitation is accepted; a second POST finds no pending invitation (404).
func (h *handler) accept(w http.ResponseWriter, r *http.Request) {
	t := token(w, r)
	if t == "" {
		h.render(w, http.StatusBadRequest, invalidLink)
		return
	}
	acc, err := h.st.AcceptInvitation(r.Context(), t)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, http.StatusOK, page{Title: "Invitation accepted", OrgName: acc.OrgName,
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
