package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The routes of sessions and sign-in, under /console/ (Routes):
//
//	POST   /console/session               sign in with an API token ({"token"} or the form field token)
//	GET    /console/session               the session: who, which organization, what it may do
//	POST   /console/session/organization  switch organization ({"organization_id"})
//	DELETE /console/session               sign out
//	GET    /console/signin?code=…         a one-time link made by `admin console-link`: signs in, then /console/
//	GET    /console/signin/options        which ways in this deployment offers (the sign-in page's buttons)
//	POST   /console/signin/email          e-mail a sign-in link to a user ({"email"}); always 202
//	GET    /console/signin/link?token=…   the e-mailed link: a page with a "Sign in" button
//	POST   /console/signin/link           that button: signs in, then /console/
//	GET    /console/signin/oidc           OpenID Connect: to the provider (signin_oidc.go)
//	GET    /console/signin/oidc/callback  back from the provider: signs in, then /console/
//
// JSON answers use the API's envelope; the links answer pages and redirects.

// Routes registers the session and sign-in routes on mux.
func (s *Sessions) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /console/session", s.create)
	mux.HandleFunc("GET /console/session", s.describe)
	mux.HandleFunc("POST /console/session/organization", s.switchOrganization)
	mux.HandleFunc("DELETE /console/session", s.signOut)
	mux.HandleFunc("GET /console/signin", s.signInWithCode)
	mux.HandleFunc("GET /console/signin/options", s.signInOptions)
	mux.HandleFunc("POST /console/signin/email", s.requestEmailLink)
	mux.HandleFunc("GET /console/signin/link", s.showEmailLink)
	mux.HandleFunc("POST /console/signin/link", s.signInWithEmailLink)
	if s.oidc != nil {
		mux.HandleFunc("GET "+oidcStartPath, s.startOIDC)
		mux.HandleFunc("GET "+oidcCallbackPath, s.finishOIDC)
	}
}

// signInRule limits sign-in attempts (tokens, codes, e-mail links) per client address: 10 at
// once, then one every 6 s. A token has 256 bits, so guessing is hopeless anyway; the limit
// keeps the sign-in from being a faster oracle than the API, and e-mail requests from being a
// way to flood someone's inbox. It fails closed: it stops guessing.
var signInRule = ratelimit.Rule{Name: "console_signin", Every: 6 * time.Second, Burst: 10, OnError: ratelimit.FailClosed}

// sessionJSON describes a session (GET /console/session and every sign-in's answer).
type sessionJSON struct {
	Display        string    `json:"display"`
	Kind           string    `json:"kind"` // "token": an API token; "user": a person (access token, e-mail, OpenID Connect)
	OrganizationID string    `json:"organization_id"`
	Organizations  []orgJSON `json:"organizations"`
	Permissions    []string  `json:"permissions"`
	ExpiresAt      string    `json:"expires_at"`
}

type orgJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// create is POST /console/session: sign in with an API (or access) token.
func (s *Sessions) create(w http.ResponseWriter, r *http.Request) {
	if err := s.admit(w, r); err != nil {
		s.fail(w, r, err)
		return
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := decodeBody(w, r, &body, "token"); err != nil {
		s.fail(w, r, err)
		return
	}
	token := strings.TrimSpace(body.Token)
	if token == "" {
		s.fail(w, r, fieldError("token", "is required: an API token"))
		return
	}
	cred, err := s.auth.Authenticate(r.Context(), token)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.signIn(w, r, cred, auth.HashSecret(token), nil); err != nil {
		s.fail(w, r, err)
		return
	}
	s.describeNew(w, r)
}

// signInOptions is GET /console/signin/options: the ways in the sign-in page offers. A token
// always works; e-mail links need SMTP, OpenID Connect a provider.
func (s *Sessions) signInOptions(w http.ResponseWriter, _ *http.Request) {
	opts := map[string]any{"token": true, "email": s.mail != nil && s.mail.MailEnabled(), "oidc": s.oidc != nil}
	if s.oidc != nil {
		opts["oidc_url"] = oidcStartPath
	}
	writeJSON(w, http.StatusOK, envelope{Success: true, Result: opts, Errors: []errorItem{}, Messages: []errorItem{}})
}

// describeNew answers a fresh sign-in, whose cookie is not on the request yet.
func (s *Sessions) describeNew(w http.ResponseWriter, r *http.Request) {
	for _, c := range w.Header().Values("Set-Cookie") {
		if ck, err := http.ParseSetCookie(c); err == nil && ck.Name == SessionCookie {
			r.AddCookie(&http.Cookie{Name: SessionCookie, Value: ck.Value})
		}
	}
	s.describe(w, r)
}

// describe is GET /console/session.
func (s *Sessions) describe(w http.ResponseWriter, r *http.Request) {
	sess, cred, err := s.current(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	orgs, err := s.st.OrganizationNames(r.Context(), cred.OrgIDs)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(orgs) == 0 {
		s.fail(w, r, auth.ErrNoOrganization)
		return
	}
	out := sessionJSON{Display: cred.Display, Kind: "token", Organizations: make([]orgJSON, len(orgs)),
		Permissions: effectivePermissions(cred.Grants), ExpiresAt: sess.ExpiresAt.UTC().Format(time.RFC3339)}
	if cred.Kind == store.CredentialAccessToken {
		out.Kind = "user"
	}
	// The organization selected, unless the credential no longer covers it (a membership
	// ended): then the first it covers, as at sign-in.
	out.OrganizationID = orgs[0].ID.String()
	for i, o := range orgs {
		out.Organizations[i] = orgJSON{ID: o.ID.String(), Name: o.Name}
		if sess.OrgID != nil && o.ID == *sess.OrgID {
			out.OrganizationID = o.ID.String()
		}
	}
	writeJSON(w, http.StatusOK, envelope{Success: true, Result: out, Errors: []errorItem{}, Messages: []errorItem{}})
}

// current is the request's session and the credential behind it.
func (s *Sessions) current(r *http.Request) (store.ConsoleSession, store.Credential, error) {
	sess, err := s.session(r)
	if err != nil {
		return sess, store.Credential{}, err
	}
	cred, err := s.auth.AuthenticateHash(r.Context(), [32]byte(sess.CredentialHash))
	return sess, cred, err
}

// switchOrganization is POST /console/session/organization.
func (s *Sessions) switchOrganization(w http.ResponseWriter, r *http.Request) {
	sess, cred, err := s.current(r)
	if err == nil && !csrfMatches(r, sess) {
		err = auth.ErrCSRF
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body struct {
		OrganizationID string `json:"organization_id"`
	}
	if err := decodeBody(w, r, &body, "organization_id"); err != nil {
		s.fail(w, r, err)
		return
	}
	id, err := uuid.Parse(body.OrganizationID)
	if err != nil {
		s.fail(w, r, fieldError("organization_id", "must be the id of an organization this session covers"))
		return
	}
	covered := false
	for _, o := range cred.OrgIDs {
		covered = covered || o == id
	}
	if !covered { // another organization reads as not found, like any id of the API
		s.fail(w, r, &httpError{Status: http.StatusNotFound, Type: "not_found", Message: "organization not found"})
		return
	}
	c, _ := r.Cookie(SessionCookie)
	if err := s.st.SetConsoleSessionOrg(r.Context(), hash(c.Value), id, s.now()); err != nil {
		s.fail(w, r, err)
		return
	}
	s.describe(w, r)
}

// signOut is DELETE /console/session: the session's row goes (with a user's minted token) and
// the cookies are cleared. Without a live session it only clears the cookies.
func (s *Sessions) signOut(w http.ResponseWriter, r *http.Request) {
	sess, err := s.session(r)
	switch {
	case err == nil && !csrfMatches(r, sess):
		s.fail(w, r, auth.ErrCSRF)
		return
	case err == nil:
		c, _ := r.Cookie(SessionCookie)
		if err := s.st.DeleteConsoleSession(r.Context(), hash(c.Value)); err != nil {
			s.fail(w, r, err)
			return
		}
	case !errors.Is(err, auth.ErrNoSession) && !errors.Is(err, auth.ErrInvalidToken):
		s.fail(w, r, err)
		return
	}
	s.setCookies(w, r, "", "", time.Time{})
	writeJSON(w, http.StatusOK, envelope{Success: true, Result: map[string]bool{"signed_out": true},
		Errors: []errorItem{}, Messages: []errorItem{}})
}

// admit refuses sign-in requests from other sites' pages (a login CSRF would sign the visitor
// in as the attacker) and takes one attempt from the client address's bucket.
func (s *Sessions) admit(w http.ResponseWriter, r *http.Request) error {
	if crossSite(r) {
		return &httpError{Status: http.StatusForbidden, Type: "forbidden", Message: "sign-in requests must come from the console's own pages"}
	}
	wait, err := s.lim.Reserve(r.Context(), signInRule, s.clientIP(r), s.now())
	if err != nil {
		return err
	}
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		return &httpError{Status: http.StatusTooManyRequests, Type: "rate_limited",
			Message: fmt.Sprintf("too many sign-in attempts from this address: try again in %d s", max(secs, 1))}
	}
	return nil
}

// crossSite: the browser says the request comes from another site (Sec-Fetch-Site), or its
// Origin is not this host.
func crossSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

// decodeBody reads a JSON object (at most 4 KiB) or a form into dst; field names the one
// field a form carries.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any, field string) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		if err := r.ParseForm(); err != nil {
			return fieldError("body", "must be a form of at most 4 KiB")
		}
		b, _ := json.Marshal(map[string]string{field: r.PostForm.Get(field)})
		return json.Unmarshal(b, dst)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return fieldError(ute.Field, "must be a string")
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			return fieldError(strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`), "is not a field of this request")
		}
		return fieldError("body", "must be a JSON object of at most 4 KiB")
	}
	if _, err := dec.Token(); err != io.EOF {
		return fieldError("body", "must hold one JSON object")
	}
	return nil
}

// remoteHost is the host of r.RemoteAddr (Deps.ClientIP's default).
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
