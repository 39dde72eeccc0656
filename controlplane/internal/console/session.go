// Package console is the control plane's web console: the static pages under /console/
// (assets.go) and the browser's sign-in and sessions (session*.go, signin*.go).
//
// A session is a cookie standing in for a credential the control plane already knows: the API
// token signed in with, or the access token a user's sign-in mints for the session. It never
// holds permissions of its own. Every request resolves the session's row (only the SHA-256 of
// the cookie is stored) and then its credential through the auth.Authenticator, as a bearer
// token would be resolved, so what the console may do is what the API allows that credential,
// and a deleted token, a removed member or a signed-out session is refused at once on every
// replica. Changes made with the cookie must echo the vantage_csrf cookie in X-CSRF-Token,
// which another site's page can neither read nor send.
package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Cookie names. The session cookie is HttpOnly; the CSRF cookie is read by the console's
// script, which sends it back in CSRFHeader.
const (
	SessionCookie = "vantage_session"
	CSRFCookie    = "vantage_csrf"
	CSRFHeader    = "X-CSRF-Token"
)

// Store is what sessions need from storage; *store.Store implements it.
type Store interface {
	CreateConsoleSession(ctx context.Context, in store.NewConsoleSession) error
	ConsoleSessionBySecret(ctx context.Context, secretHash []byte, now time.Time) (store.ConsoleSession, error)
	SetConsoleSessionOrg(ctx context.Context, secretHash []byte, orgID uuid.UUID, now time.Time) error
	DeleteConsoleSession(ctx context.Context, secretHash []byte) error
	CreateSignInCode(ctx context.Context, in store.NewSignInCode) error
	TakeSignInCode(ctx context.Context, codeHash []byte, now time.Time) (store.SignInCode, error)
	SignInUserByEmail(ctx context.Context, email string) (store.SignInUser, error)
	SignInUserByID(ctx context.Context, id uuid.UUID) (store.SignInUser, error)
	OrganizationNames(ctx context.Context, ids []uuid.UUID) ([]store.OrganizationName, error)
}

var _ Store = (*store.Store)(nil)

// Authenticator resolves credentials, with the cache the revocation feed keeps honest;
// *auth.Authenticator implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (store.Credential, error)
	AuthenticateHash(ctx context.Context, key [32]byte) (store.Credential, error)
}

var _ Authenticator = (*auth.Authenticator)(nil)

// Config tunes sessions. Zero values take the documented defaults.
type Config struct {
	// SessionTTL is how long a session lasts after sign-in. Default 12h.
	SessionTTL time.Duration
	// CodeTTL is how long a one-time sign-in link stays valid. Default 15m.
	CodeTTL time.Duration
	// PublicURL is the base of the links sign-in e-mails carry, and of the OpenID Connect
	// redirect URL ({PublicURL}/console/signin/oidc/callback). Default "http://localhost:8080".
	PublicURL string
	// OIDC is the OpenID Connect provider to sign users in with. Default: none.
	OIDC OIDCConfig
}

// Deps are the sessions' collaborators.
type Deps struct {
	Store Store         // required
	Auth  Authenticator // required
	// Limiter limits sign-in attempts per client address (the replica's shared one). Required.
	Limiter ratelimit.Limiter
	// Mailer sends e-mailed sign-in links. Nil: POST /console/signin/email sends nothing.
	Mailer Mailer
	// ClientIP is a request's client address as the router sees it (behind trusted proxies).
	// Default: the host of RemoteAddr.
	ClientIP func(r *http.Request) string
	// Secure reports whether a request came over TLS (its own or a trusted proxy's), which
	// makes the cookies Secure. Default: r.TLS != nil.
	Secure func(r *http.Request) bool
	// Now is the clock of expiry. Default time.Now.
	Now func() time.Time
	// Logger records failures (component console). Default: discarded.
	Logger *slog.Logger
}

// Sessions signs browsers in and resolves their sessions.
type Sessions struct {
	cfg      Config
	st       Store
	auth     Authenticator
	lim      ratelimit.Limiter
	mail     Mailer
	clientIP func(r *http.Request) string
	secure   func(r *http.Request) bool
	now      func() time.Time
	log      *slog.Logger
	oidc     *oidcClient // nil: no OpenID Connect
}

// New returns the sessions.
func New(cfg Config, deps Deps) (*Sessions, error) {
	if deps.Store == nil || deps.Auth == nil || deps.Limiter == nil {
		return nil, errors.New("console: a store, an authenticator and a limiter are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.CodeTTL <= 0 {
		cfg.CodeTTL = 15 * time.Minute
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://localhost:8080"
	}
	if deps.ClientIP == nil {
		deps.ClientIP = remoteHost
	}
	if deps.Secure == nil {
		deps.Secure = func(r *http.Request) bool { return r.TLS != nil }
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sessions{cfg: cfg, st: deps.Store, auth: deps.Auth, lim: deps.Limiter, mail: deps.Mailer,
		clientIP: deps.ClientIP, secure: deps.Secure, now: deps.Now, log: deps.Logger.With("component", "console")}
	if cfg.OIDC.Issuer != "" {
		if cfg.OIDC.ClientID == "" {
			return nil, errors.New("console: OpenID Connect needs a client id")
		}
		s.oidc = &oidcClient{cfg: cfg.OIDC, redirect: strings.TrimRight(cfg.PublicURL, "/") + oidcCallbackPath}
	}
	return s, nil
}

// ResolveSession returns the credential behind r's session cookie and the organization the
// session selected (uuid.Nil: none), enforcing the CSRF rule on every method but GET, HEAD
// and OPTIONS (api.SessionResolver).
func (s *Sessions) ResolveSession(r *http.Request) (store.Credential, uuid.UUID, error) {
	sess, err := s.session(r)
	if err != nil {
		return store.Credential{}, uuid.Nil, err
	}
	if !safeMethod(r.Method) && !csrfMatches(r, sess) {
		return store.Credential{}, uuid.Nil, auth.ErrCSRF
	}
	cred, err := s.auth.AuthenticateHash(r.Context(), [32]byte(sess.CredentialHash))
	if err != nil {
		return store.Credential{}, uuid.Nil, err
	}
	var org uuid.UUID
	if sess.OrgID != nil {
		org = *sess.OrgID
	}
	return cred, org, nil
}

// session finds r's unexpired session: auth.ErrNoSession without a cookie,
// auth.ErrInvalidToken when the cookie names no live session.
func (s *Sessions) session(r *http.Request) (store.ConsoleSession, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return store.ConsoleSession{}, auth.ErrNoSession
	}
	sess, err := s.st.ConsoleSessionBySecret(r.Context(), hash(c.Value), s.now())
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(sess.CredentialHash) != sha256.Size) {
		return store.ConsoleSession{}, auth.ErrInvalidToken
	}
	return sess, err
}

// safeMethod: methods that change nothing, which need no CSRF token.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// csrfMatches: the header equals the CSRF cookie, and both are the session's. The cookie
// check is the double submit another site cannot make; the stored hash ties the value to
// this session, so a CSRF cookie planted by a sibling subdomain does not pass either.
func csrfMatches(r *http.Request, sess store.ConsoleSession) bool {
	h := r.Header.Get(CSRFHeader)
	c, err := r.Cookie(CSRFCookie)
	if h == "" || err != nil || subtle.ConstantTimeCompare([]byte(h), []byte(c.Value)) != 1 {
		return false
	}
	return subtle.ConstantTimeCompare(hash(h), sess.CSRFHash) == 1
}

// signIn starts a session with a credential and sets its cookies. credHash is the hash of the
// credential's secret; with mint (a user's sign-in) the session acts with the access token
// minted for it instead, cred then only naming the user's organizations.
func (s *Sessions) signIn(w http.ResponseWriter, r *http.Request, cred store.Credential, credHash []byte, mint *store.MintedToken) error {
	if len(cred.OrgIDs) == 0 {
		return auth.ErrNoOrganization
	}
	orgs, err := s.st.OrganizationNames(r.Context(), cred.OrgIDs)
	if err != nil {
		return err
	}
	if len(orgs) == 0 {
		return auth.ErrNoOrganization
	}
	// A credential of several organizations starts in the first by name; the switcher
	// changes it.
	org := orgs[0].ID
	secret, csrf := newSecret(), newSecret()
	expires := s.now().Add(s.cfg.SessionTTL)
	if cred.ExpiresAt != nil && cred.ExpiresAt.Before(expires) {
		expires = *cred.ExpiresAt
	}
	err = s.st.CreateConsoleSession(r.Context(), store.NewConsoleSession{SecretHash: hash(secret), CSRFHash: hash(csrf),
		CredentialHash: credHash, OrgID: &org, ExpiresAt: expires, MintFor: mint})
	if err != nil {
		return err
	}
	s.setCookies(w, r, secret, csrf, expires)
	return nil
}

// setCookies sets (or, with empty values, clears) the session and CSRF cookies. The session
// cookie is HttpOnly and SameSite=Lax (it must come along when a link from elsewhere opens
// the console); the CSRF cookie is readable by the console's script and SameSite=Strict.
func (s *Sessions) setCookies(w http.ResponseWriter, r *http.Request, secret, csrf string, expires time.Time) {
	secure := s.secure(r)
	maxAge := int(time.Until(expires).Seconds())
	if secret == "" || maxAge <= 0 {
		maxAge = -1
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: secret, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: csrf, Path: "/", MaxAge: maxAge,
		Secure: secure, SameSite: http.SameSiteStrictMode})
}

// userScopes are the scopes of the access token a user's sign-in mints. Access tokens carry
// one set of scopes for all of a user's organizations, so the lower role decides: a user who
// is ADMIN everywhere gets every area at EDIT; anyone else cannot change people or API tokens
// (READ on those two areas).
func userScopes(admin bool) []string {
	all := auth.AllGrants()
	if admin {
		return all
	}
	out := make([]string, 0, len(all))
	for _, g := range all {
		switch g {
		case string(auth.People) + ":" + string(auth.Edit):
			g = string(auth.People) + ":" + string(auth.Read)
		case string(auth.APITokens) + ":" + string(auth.Edit):
			g = string(auth.APITokens) + ":" + string(auth.Read)
		}
		out = append(out, g)
	}
	return out
}

// effectivePermissions lists what a credential may do as "AREA:LEVEL", EDIT implying READ.
func effectivePermissions(grants []string) []string {
	p := auth.NewPermissions(grants)
	out := []string{}
	for _, a := range slices.Concat(auth.Areas, auth.OperatorAreas) {
		for _, l := range []auth.Level{auth.Read, auth.Edit} {
			if p.Allows(a, l) {
				out = append(out, string(a)+":"+string(l))
			}
		}
	}
	return out
}

// newSecret is 256 random bits, base64url: a session cookie, a CSRF value or a sign-in code.
func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the platform is broken; nothing sane to do
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hash is the stored form of a session secret, CSRF value or code (high-entropy: a fast hash
// is right, as for API secrets).
func hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
