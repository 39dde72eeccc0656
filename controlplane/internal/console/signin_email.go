package console

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/linkpage"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Mailer e-mails sign-in links; *notifier.Notifier implements it.
type Mailer interface {
	SendSignInLink(ctx context.Context, to, link string, expiresAt time.Time) error
	// MailEnabled reports whether an SMTP server is configured.
	MailEnabled() bool
}

// emailRule limits the sign-in e-mails of one address, on top of signInRule per client: 3 at
// once, then one a minute, so that nobody's inbox can be flooded from many addresses.
var emailRule = ratelimit.Rule{Name: "console_signin_email", Every: time.Minute, Burst: 3, OnError: ratelimit.FailClosed}

// mailTimeout bounds looking the user up and sending one e-mail.
const mailTimeout = 30 * time.Second

// requestEmailLink is POST /console/signin/email {"email"}. It answers 202 whether or not a
// user has the address, and before looking: the lookup, the code and the e-mail happen after
// the answer, so neither the answer nor its timing tells whether the address has an account.
func (s *Sessions) requestEmailLink(w http.ResponseWriter, r *http.Request) {
	if err := s.admit(w, r); err != nil {
		s.fail(w, r, err)
		return
	}
	var body struct {
		Email string `json:"email"`
	}
	if err := decodeBody(w, r, &body, "email"); err != nil {
		s.fail(w, r, err)
		return
	}
	addr, err := mail.ParseAddress(body.Email)
	if err != nil || addr.Address != strings.TrimSpace(body.Email) {
		s.fail(w, r, fieldError("email", "must be an e-mail address such as ops@example.com"))
		return
	}
	email := strings.ToLower(addr.Address)
	wait, err := s.lim.Reserve(r.Context(), emailRule, email, s.now())
	switch {
	case err != nil:
		s.fail(w, r, err)
		return
	case wait == 0:
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), mailTimeout)
		go func() {
			defer cancel()
			s.sendEmailLink(ctx, email)
		}()
	}
	// A limited address is answered like any other: the limit is no oracle either.
	writeJSON(w, http.StatusAccepted, envelope{Success: true, Errors: []errorItem{}, Messages: []errorItem{},
		Result: map[string]string{"message": "If this address belongs to a Vantage user, a sign-in link is on its way."}})
}

// sendEmailLink mints a code for the member with this address, if there is one, and e-mails
// the link. Failures are logged without the address's link.
func (s *Sessions) sendEmailLink(ctx context.Context, email string) {
	if s.mail == nil {
		return
	}
	u, err := s.st.SignInUserByEmail(ctx, email)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.ErrorContext(ctx, "sign-in e-mail: look the user up", "err", err)
		}
		return
	}
	code := newSecret()
	expires := s.now().Add(s.cfg.CodeTTL)
	if err := s.st.CreateSignInCode(ctx, store.NewSignInCode{CodeHash: hash(code), UserID: &u.ID, ExpiresAt: expires}); err != nil {
		s.log.ErrorContext(ctx, "sign-in e-mail: store the code", "err", err, "user_id", u.ID)
		return
	}
	link := s.cfg.PublicURL + "/console/signin/link?token=" + url.QueryEscape(code)
	if err := s.mail.SendSignInLink(ctx, u.Email, link, expires); err != nil {
		s.log.ErrorContext(ctx, "sign-in e-mail: send", "err", err, "user_id", u.ID)
	}
}

// showEmailLink is GET /console/signin/link?token=…: a page whose button signs in. GET never
// signs in, because mail scanners fetch links (as invitations do).
func (s *Sessions) showEmailLink(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token == "" {
		linkpage.Render(w, http.StatusNotFound, invalidLink)
		return
	}
	linkpage.Render(w, http.StatusOK, linkpage.Page{Title: "Sign in to Vantage", Context: "Console",
		Message: "Sign in to the Vantage console in this browser.", Button: "Sign in", Token: token})
}

// signInWithEmailLink is POST /console/signin/link: the button of showEmailLink.
func (s *Sessions) signInWithEmailLink(w http.ResponseWriter, r *http.Request) {
	s.takeCode(w, r, linkpage.Token(w, r))
}
