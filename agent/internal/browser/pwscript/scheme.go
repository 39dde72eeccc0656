package pwscript

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/chromedp/cdproto/log"
)

// AllowedURL reports whether a check's pages may load raw, and raw's scheme (lower case, no
// colon). A check may reach the web and nothing of the agent's host: http:, https:, their
// WebSockets, data:, blob: (memory a page of the check made) and about:blank (with
// about:srcdoc, the document of an iframe's srcdoc). file:, view-source:, chrome: and every
// other scheme are refused, so that no page ever shows a file, directory or internal page of
// the machine the agent runs on.
//
// The agent's browser applies it to every load of every check (browser.guard), and the run
// fails on any load refused (Report.Refuse); page.goto applies it first, to say so at once.
func AllowedURL(raw string) (scheme string, ok bool) {
	scheme, rest, found := strings.Cut(raw, ":")
	if !found {
		return "", false
	}
	scheme = strings.ToLower(strings.TrimSpace(scheme))
	switch scheme {
	case "http", "https", "ws", "wss", "data", "blob":
		return scheme, true
	case "about":
		page, _, _ := strings.Cut(strings.ToLower(rest), "#")
		return scheme, page == "blank" || page == "srcdoc"
	}
	return scheme, false
}

// NotAllowed is the message of a load that AllowedURL refuses.
func NotAllowed(raw string) string {
	scheme, _ := AllowedURL(raw)
	return fmt.Sprintf("not allowed: %s: %s (a check's pages may load only http:, https:, data: and about:blank)",
		scheme, raw)
}

// Refuse fails the run because a page of it tried to load what AllowedURL refuses (message,
// from NotAllowed): the script's fault, whatever the run's own failure was, and whether or
// not the page's script caught the refusal. The failing step and place are kept.
func (rep *Report) Refuse(message string) {
	rep.Passed = false
	if rep.Failure == nil {
		rep.Failure = &Failure{}
	}
	rep.Failure.Cause = CauseScript
	rep.Failure.Message = message
	rep.Summary = summarize(rep)
}

// chromiumRefusal matches Chromium's messages when it refuses a web page's own reach for a URL
// of another scheme, before any request exists: a navigation, frame or resource ("Not allowed
// to load local resource: URL") or a fetch() ("Fetch API cannot load URL. URL scheme "file" is
// not supported.").
var chromiumRefusal = regexp.MustCompile(`^(?:Not allowed to load local resource: (\S+)|Fetch API cannot load (\S+)\. URL scheme "[^"]*" is not supported\.)$`)

// RefusedLoad returns the URL a page's log entry says Chromium refused to load, when
// AllowedURL refuses it too.
func RefusedLoad(e *log.Entry) (string, bool) {
	if e == nil {
		return "", false
	}
	m := chromiumRefusal.FindStringSubmatch(e.Text)
	if m == nil {
		return "", false
	}
	u := m[1] + m[2]
	if _, ok := AllowedURL(u); ok {
		return "", false
	}
	return u, true
}
