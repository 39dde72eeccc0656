package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/linkpage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// One-time sign-in links. A code is 256 random bits, stored as its SHA-256, valid for
// Config.CodeTTL and used at most once (taking it deletes it).

// CodeStore is what minting a link needs from storage.
type CodeStore interface {
	CreateSignInCode(ctx context.Context, in store.NewSignInCode) error
}

// TokenLink mints a one-time link, {publicURL}/console/signin?code=…, that signs in with the
// token whose secret hash is given (admin console-link; make run prints one). It expires at
// expiresAt.
func TokenLink(ctx context.Context, st CodeStore, publicURL string, tokenHash []byte, expiresAt time.Time) (string, error) {
	code := newSecret()
	if err := st.CreateSignInCode(ctx, store.NewSignInCode{CodeHash: hash(code), CredentialHash: tokenHash, ExpiresAt: expiresAt}); err != nil {
		return "", err
	}
	return publicURL + "/console/signin?code=" + url.QueryEscape(code), nil
}

var invalidLink = linkpage.Page{Title: "Sign-in link not valid",
	Message: "This sign-in link is not valid: it has been used already, it has expired, or its token was revoked. Ask for a new one, or sign in with an API token."}

// signInWithCode is GET /console/signin?code=…: the link of admin console-link. It signs in at
// once and goes to the console: it is made by an operator for their own browser, not e-mailed,
// so no mail scanner fetches it first.
func (s *Sessions) signInWithCode(w http.ResponseWriter, r *http.Request) {
	s.takeCode(w, r, r.URL.Query().Get("code"))
}

// takeCode uses a code up and signs in with what it names, then redirects to the console.
func (s *Sessions) takeCode(w http.ResponseWriter, r *http.Request, code string) {
	if err := s.admit(w, r); err != nil {
		e := s.toHTTPError(r, err)
		linkpage.Render(w, e.Status, linkpage.Page{Title: "Sign-in refused", Message: e.Message})
		return
	}
	err := s.redeem(w, r, code)
	switch {
	case err == nil:
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, "/console/", http.StatusSeeOther)
	case errors.Is(err, store.ErrNotFound), errors.Is(err, auth.ErrInvalidToken), errors.Is(err, auth.ErrNoOrganization):
		linkpage.Render(w, http.StatusNotFound, invalidLink)
	default:
		s.log.ErrorContext(r.Context(), "sign-in link", "err", err)
		linkpage.Render(w, http.StatusInternalServerError, linkpage.Page{Title: "Something went wrong",
			Message: "We could not sign you in right now. Please try again in a few minutes."})
	}
}

// redeem takes a code and starts the session it names.
func (s *Sessions) redeem(w http.ResponseWriter, r *http.Request, code string) error {
	if code == "" {
		return store.ErrNotFound
	}
	c, err := s.st.TakeSignInCode(r.Context(), hash(code), s.now())
	if err != nil {
		return err
	}
	if c.UserID != nil {
		return s.signInUser(w, r, *c.UserID)
	}
	if len(c.CredentialHash) != len([32]byte{}) {
		return store.ErrNotFound
	}
	cred, err := s.auth.AuthenticateHash(r.Context(), [32]byte(c.CredentialHash))
	if err != nil {
		return err
	}
	_, err = s.signIn(w, r, cred, c.CredentialHash, nil)
	return err
}

// signInUser starts a user's session: an access token is minted for it, with the user's
// current organizations and the scopes of their role (userScopes).
func (s *Sessions) signInUser(w http.ResponseWriter, r *http.Request, userID uuid.UUID) error {
	u, err := s.st.SignInUserByID(r.Context(), userID)
	if err != nil {
		return err
	}
	_, tokenHash := auth.NewSecret() // the secret is thrown away: only the session reaches the token
	_, err = s.signIn(w, r, store.Credential{OrgIDs: u.OrgIDs}, tokenHash,
		&store.MintedToken{UserID: u.ID, Scopes: userScopes(u.Admin), SecretHash: tokenHash})
	return err
}
