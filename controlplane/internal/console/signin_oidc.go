package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/vantagehq/vantage/controlplane/internal/linkpage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// OpenID Connect sign-in (authorization code flow with PKCE and a nonce, verified with
// github.com/coreos/go-oidc):
//
//	GET /console/signin/oidc           → the provider's authorization page
//	GET /console/signin/oidc/callback  ← the provider's answer: the ID token is verified, and the
//	                                     member with its verified e-mail address is signed in
//
// The provider's e-mail address names the Vantage user, as an e-mailed link does: only a
// member of an organization, and only with email_verified true, so that an account at the
// provider with someone else's unverified address signs nobody in.

// OIDCConfig is the provider the console trusts. Sign-in with it is off while Issuer is "".
type OIDCConfig struct {
	Issuer       string // the issuer URL; its /.well-known/openid-configuration is read at the first sign-in
	ClientID     string
	ClientSecret string
}

// oidcFlowCookie carries state, nonce and PKCE verifier from the redirect to the callback.
const oidcFlowCookie = "vantage_oidc"

// oidcFlowTTL bounds the time spent at the provider.
const oidcFlowTTL = 10 * time.Minute

const (
	oidcStartPath    = "/console/signin/oidc"
	oidcCallbackPath = "/console/signin/oidc/callback"
)

// oidcClient discovers the provider once, at the first sign-in rather than at start-up, so that
// a provider that is down does not keep the control plane from starting.
type oidcClient struct {
	cfg      OIDCConfig
	redirect string

	mu       sync.Mutex
	provider *oidc.Provider
}

func (c *oidcClient) discover(ctx context.Context) (*oidc.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		p, err := oidc.NewProvider(ctx, c.cfg.Issuer)
		if err != nil {
			return nil, err
		}
		c.provider = p
	}
	return c.provider, nil
}

func (c *oidcClient) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: c.redirect, Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// startOIDC is GET /console/signin/oidc.
func (s *Sessions) startOIDC(w http.ResponseWriter, r *http.Request) {
	if err := s.admit(w, r); err != nil {
		e := s.toHTTPError(r, err)
		linkpage.Render(w, e.Status, linkpage.Page{Title: "Sign-in refused", Message: e.Message})
		return
	}
	p, err := s.oidc.discover(r.Context())
	if err != nil {
		s.oidcFailed(w, r, "read the provider's configuration", err)
		return
	}
	state, nonce, verifier := newSecret(), newSecret(), oauth2.GenerateVerifier()
	http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Value: state + "." + nonce + "." + verifier, Path: oidcStartPath,
		MaxAge: int(oidcFlowTTL.Seconds()), HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, s.oidc.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
}

// finishOIDC is GET /console/signin/oidc/callback.
func (s *Sessions) finishOIDC(w http.ResponseWriter, r *http.Request) {
	// The flow's cookie is used once, whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Path: oidcStartPath, MaxAge: -1, HttpOnly: true,
		Secure: s.secure(r), SameSite: http.SameSiteLaxMode})
	c, err := r.Cookie(oidcFlowCookie)
	var parts []string
	if err == nil {
		parts = strings.Split(c.Value, ".")
	}
	q := r.URL.Query()
	if len(parts) != 3 || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(parts[0])) != 1 {
		linkpage.Render(w, http.StatusBadRequest, linkpage.Page{Title: "Sign-in not completed",
			Message: "This sign-in did not start in this browser, or took too long. Start again from the console's sign-in page."})
		return
	}
	if e := q.Get("error"); e != "" {
		linkpage.Render(w, http.StatusUnauthorized, linkpage.Page{Title: "Sign-in refused",
			Message: "The identity provider refused the sign-in (" + e + ")."})
		return
	}
	email, err := s.oidcEmail(r.Context(), q.Get("code"), parts[1], parts[2])
	if err != nil {
		s.oidcFailed(w, r, "verify the provider's answer", err)
		return
	}
	u, err := s.st.SignInUserByEmail(r.Context(), email)
	if errors.Is(err, store.ErrNotFound) {
		linkpage.Render(w, http.StatusForbidden, linkpage.Page{Title: "No Vantage account",
			Message: "No organization on this Vantage has a member with the address your identity provider gave. Ask an administrator to invite you."})
		return
	}
	if err == nil {
		err = s.signInUser(w, r, u.ID)
	}
	if err != nil {
		s.oidcFailed(w, r, "sign in", err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// errUnverifiedEmail: the provider does not vouch for the address.
var errUnverifiedEmail = errors.New("the ID token's e-mail address is missing or not verified")

// oidcEmail redeems the authorization code and returns the verified e-mail address of its ID
// token, whose signature, issuer, audience, expiry and nonce are checked.
func (s *Sessions) oidcEmail(ctx context.Context, code, nonce, verifier string) (string, error) {
	p, err := s.oidc.discover(ctx)
	if err != nil {
		return "", err
	}
	tok, err := s.oidc.oauth(p).Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", err
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return "", errors.New("the token response has no id_token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.oidc.cfg.ClientID, Now: s.now}).Verify(ctx, raw)
	if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return "", errors.New("the ID token's nonce is not this sign-in's")
	}
	var claims emailClaims
	if err := idt.Claims(&claims); err != nil {
		return "", err
	}
	if claims.Email == "" {
		// Providers may leave the address out of the ID token and give it at the UserInfo
		// endpoint only (OIDC Core 5.4); its subject must then be the ID token's (5.3.2).
		info, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return "", err
		}
		if info.Subject != idt.Subject {
			return "", errors.New("the UserInfo subject is not the ID token's")
		}
		if err := info.Claims(&claims); err != nil {
			return "", err
		}
	}
	if claims.Email == "" || !bool(claims.EmailVerified) {
		return "", errUnverifiedEmail
	}
	return claims.Email, nil
}

// emailClaims are the claims that name the user.
type emailClaims struct {
	Email         string      `json:"email"`
	EmailVerified lenientBool `json:"email_verified"`
}

// lenientBool reads a boolean claim sent as true or as "true" (some providers quote it);
// anything else, or its absence, is false.
type lenientBool bool

func (b *lenientBool) UnmarshalJSON(data []byte) error {
	*b = lenientBool(string(data) == "true" || string(data) == `"true"`)
	return nil
}

// oidcFailed answers a sign-in that could not complete; the provider's errors are logged
// (they carry no secret of ours), the visitor gets a page.
func (s *Sessions) oidcFailed(w http.ResponseWriter, r *http.Request, step string, err error) {
	status := http.StatusBadGateway
	msg := "The identity provider's answer could not be verified. Try again, or sign in another way."
	if errors.Is(err, errUnverifiedEmail) {
		status, msg = http.StatusForbidden, "Your identity provider did not give a verified e-mail address, which Vantage needs to know who you are."
	} else {
		s.log.WarnContext(r.Context(), "OpenID Connect sign-in: "+step, "err", err)
	}
	linkpage.Render(w, status, linkpage.Page{Title: "Sign-in not completed", Message: msg})
}
