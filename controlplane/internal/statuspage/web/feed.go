package web

import (
	"bytes"
	"encoding/xml"
	"html"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// Atom 1.0 (RFC 4287) documents.
type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Links   []atomLink  `xml:"link"`
	Author  atomAuthor  `xml:"author"`
	Entries []atomEntry `xml:"entry"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

type atomEntry struct {
	Title     string   `xml:"title"`
	ID        string   `xml:"id"`
	Published string   `xml:"published"`
	Updated   string   `xml:"updated"`
	Link      atomLink `xml:"link"`
	Content   atomText `xml:"content"`
}

// feed serves the page's incidents (active, maintenance and history, newest first) as Atom.
func (h *Handler) feed(req *request) {
	a, ok := h.access(req)
	if !ok {
		return
	}
	p, err := h.st.LoadPublicStatusPage(req.r.Context(), a, statuspage.PublicPageQuery{HistoryLimit: historyLimit})
	if err != nil {
		h.serverError(req, err)
		return
	}
	origin := originOf(req.r)
	pageURL := origin + req.base + "/"
	f := atomFeed{Title: a.Page.Name + " · incidents", ID: "urn:uuid:" + a.Page.ID, Author: atomAuthor{Name: a.Page.Name},
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: origin + req.base + "/feed.atom"},
			{Rel: "alternate", Type: "text/html", Href: pageURL}}}
	var newest time.Time
	all := append(append(append([]statuspage.PublicIncident{}, p.Active...), p.Maintenance...), p.History...)
	for _, inc := range all {
		published := time.Time(inc.CreatedAt)
		updated := time.Time(inc.UpdatedAt)
		for _, u := range inc.Updates {
			if t := time.Time(u.UpdatedAt); t.After(updated) {
				updated = t
			}
		}
		if updated.After(newest) {
			newest = updated
		}
		f.Entries = append(f.Entries, atomEntry{Title: inc.Title, ID: "urn:uuid:" + inc.ID,
			Published: published.UTC().Format(time.RFC3339), Updated: updated.UTC().Format(time.RFC3339),
			Link:    atomLink{Rel: "alternate", Type: "text/html", Href: origin + req.base + "/history#incident-" + inc.ID},
			Content: atomText{Type: "html", Body: entryHTML(inc)}})
	}
	// Newest activity first.
	sortEntries(f.Entries)
	if newest.IsZero() {
		newest = time.Unix(0, 0)
	}
	f.Updated = newest.UTC().Format(time.RFC3339)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(f); err != nil {
		h.serverError(req, err)
		return
	}
	h.headers(req, a, "application/atom+xml; charset=utf-8")
	h.write(req, http.StatusOK, buf.Bytes())
}

// entryHTML is an incident's timeline as the HTML content of its entry.
func entryHTML(inc statuspage.PublicIncident) string {
	var b strings.Builder
	b.WriteString("<p>Impact: " + html.EscapeString(label(inc.Impact)) + "</p>")
	if len(inc.Components) > 0 {
		b.WriteString("<p>Affected: " + html.EscapeString(strings.Join(inc.Components, ", ")) + "</p>")
	}
	b.WriteString("<ul>")
	for _, u := range inc.Updates {
		b.WriteString("<li><strong>" + html.EscapeString(label(u.Status)) + "</strong> (" +
			fmtTime(time.Time(u.DateHappened)) + "): " + html.EscapeString(u.Description) + "</li>")
	}
	b.WriteString("</ul>")
	return b.String()
}

func sortEntries(es []atomEntry) {
	// RFC 3339 UTC strings order like the times they name.
	slices.SortStableFunc(es, func(a, b atomEntry) int { return strings.Compare(b.Updated, a.Updated) })
}

// originOf is the scheme and host the request came to.
func originOf(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
