package web

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// page serves the status page itself.
func (h *Handler) page(req *request) {
	a, ok := h.access(req)
	if !ok {
		return
	}
	now := h.now()
	key := a.Page.ID + "|" + req.base + "|" + a.Page.Status
	cacheable := !a.Page.Private
	if cacheable {
		if p, ok := h.cache.get(key, now); ok {
			h.headers(req, a, "text/html; charset=utf-8")
			h.writeCached(req, p)
			return
		}
	}
	today := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	p, err := h.st.LoadPublicStatusPage(req.r.Context(), a, statuspage.PublicPageQuery{
		UptimeSince:  today.AddDate(0, 0, -(h.cfg.UptimeDays - 1)),
		HistorySince: now.AddDate(0, 0, -h.cfg.HistoryDays),
		HistoryLimit: 20,
	})
	if err != nil {
		h.serverError(req, err)
		return
	}
	h.headers(req, a, "text/html; charset=utf-8")
	if !cacheable || h.cache.ttl <= 0 {
		h.render(req, http.StatusOK, "page.html", h.pageViewOf(req, a, p, now))
		return
	}
	var buf bytes.Buffer
	if err := h.tpl.pages["page.html"].ExecuteTemplate(&buf, "layout", h.pageViewOf(req, a, p, now)); err != nil {
		h.serverError(req, err)
		return
	}
	page := cachedPage{raw: buf.Bytes(), gz: h.compress(buf.Bytes())}
	h.cache.put(key, page, now)
	h.writeCached(req, page)
}

// historyView is the incident history page.
type historyView struct {
	Name, Base string
	Noindex    bool
	Incidents  []incidentView
}

// historyLimit is how many past incidents the history page and the feed show.
const historyLimit = 100

// history serves the incident history: resolved incidents and completed maintenance, newest
// first, with their timelines.
func (h *Handler) history(req *request) {
	a, ok := h.access(req)
	if !ok {
		return
	}
	p, err := h.st.LoadPublicStatusPage(req.r.Context(), a, statuspage.PublicPageQuery{HistoryLimit: historyLimit})
	if err != nil {
		h.serverError(req, err)
		return
	}
	h.headers(req, a, "text/html; charset=utf-8")
	h.render(req, http.StatusOK, "history.html", historyView{Name: a.Page.Name, Base: req.base,
		Noindex: a.Page.HideFromSearchEngines, Incidents: incidentsOf(p.History)})
}

// maxEmailLen is the longest address accepted (RFC 5321 path limit).
const maxEmailLen = 254

// subscribe adds an e-mail subscriber to the page; the store's subscriber creation sends the
// confirmation e-mail (double opt-in).
func (h *Handler) subscribe(req *request) {
	a, ok := h.access(req)
	if !ok {
		return
	}
	back := req.base + "/"
	req.w.Header().Set("Cache-Control", "no-store")
	if a.Page.HideFromSearchEngines {
		req.w.Header().Set("X-Robots-Tag", "noindex")
	}
	req.r.Body = http.MaxBytesReader(req.w, req.r.Body, 16<<10)
	if err := req.r.ParseForm(); err != nil {
		h.render(req, http.StatusBadRequest, "message.html", messageView{Title: "Subscription failed",
			Message: "The form could not be read. Please try again.", Back: back, Noindex: a.Page.HideFromSearchEngines})
		return
	}
	if !sameOrigin(req.r) || !h.validSubscribeToken(a.Page.ID, req.r.PostForm.Get("token"), h.now()) {
		h.render(req, http.StatusForbidden, "message.html", messageView{Title: "Subscription failed",
			Message: "This form has expired or was not sent from this page. Reload the page and try again.", Back: back,
			Noindex: a.Page.HideFromSearchEngines})
		return
	}
	wait, err := h.subs.reserve(req.r.Context(), a.Page.ID, h.clientIP(req.r), h.now())
	if err != nil {
		h.log.ErrorContext(req.r.Context(), "subscribe limit unavailable", "err", err)
		h.render(req, http.StatusServiceUnavailable, "message.html", messageView{Title: "Subscription failed",
			Message: "Subscriptions cannot be taken right now. Please try again in a minute.", Back: back,
			Noindex: a.Page.HideFromSearchEngines})
		return
	}
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		req.w.Header().Set("Retry-After", strconv.Itoa(secs))
		h.render(req, http.StatusTooManyRequests, "message.html", messageView{Title: "Too many requests",
			Message: fmt.Sprintf("Too many subscriptions from here. Please try again in %d seconds.", secs), Back: back,
			Noindex: a.Page.HideFromSearchEngines})
		return
	}
	email, valid := validEmail(req.r.PostForm.Get("email"))
	if !valid {
		h.render(req, http.StatusBadRequest, "message.html", messageView{Title: "Check the address",
			Message: "Please enter a valid e-mail address, like name@example.com.", Back: back, Noindex: a.Page.HideFromSearchEngines})
		return
	}
	actor := store.Actor{Type: "System", DisplayName: "Public status page", RemoteIP: h.clientIP(req.r)}
	_, err = h.st.CreateSubscriber(req.r.Context(), actor, a.OrgID, a.PageID,
		store.NewSubscriber{EmailAddress: email, Mode: statuspage.AllComponents})
	var ce *store.ConflictError
	var pe *statuspage.PlanLimitError
	switch {
	case errors.As(err, &pe):
		h.render(req, http.StatusForbidden, "message.html", messageView{Title: "Subscriptions are full",
			Message: "This status page cannot take more subscribers right now. Follow its Atom feed instead.",
			Back:    back, Noindex: a.Page.HideFromSearchEngines})
	case errors.As(err, &ce):
		h.render(req, http.StatusOK, "message.html", messageView{Title: "Already subscribed",
			Message: "This address is already subscribed, or waiting for its confirmation. Check your inbox for our e-mail.",
			Back:    back, Noindex: a.Page.HideFromSearchEngines})
	case err != nil:
		h.serverError(req, err)
	default:
		h.render(req, http.StatusOK, "message.html", messageView{Title: "Check your inbox",
			Message: "We sent a confirmation link to " + email + ". Follow it to start receiving updates.",
			Back:    back, Noindex: a.Page.HideFromSearchEngines})
	}
}

// validEmail accepts a bare address (no display name) of at most maxEmailLen characters.
func validEmail(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxEmailLen {
		return "", false
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s {
		return "", false
	}
	local, domain, ok := strings.Cut(addr.Address, "@")
	if !ok || local == "" || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", false
	}
	return addr.Address, true
}
