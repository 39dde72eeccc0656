package notifier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ErrMailDisabled: no SMTP server is configured (VANTAGE_SMTP_URL).
var ErrMailDisabled = errors.New("e-mail is disabled: VANTAGE_SMTP_URL is not set")

// SendSignInLink e-mails a console sign-in link to a user (console: POST
// /console/signin/email). It goes straight to the SMTP server rather than through the outbox:
// the link is short-lived and single-use, a person is waiting for it, and a lost one is asked
// for again; keeping the code out of the outbox also keeps it out of the database but for its
// hash.
func (n *Notifier) SendSignInLink(ctx context.Context, to, link string, expiresAt time.Time) error {
	if n.mail == nil {
		return ErrMailDisabled
	}
	var b strings.Builder
	b.WriteString("Hello,\n\nSomeone, hopefully you, asked to sign in to the Vantage console with this address.\n")
	fmt.Fprintf(&b, "Sign in by opening this link (it works once, until %s):\n\n%s\n\n", expiresAt.UTC().Format("2006-01-02 15:04 UTC"), link)
	b.WriteString("If you did not ask for this, ignore this e-mail: nobody can sign in without the link.\n")
	id := uuid.Must(uuid.NewV7())
	msg := n.mail.compose(store.DueDelivery{ID: id, EventID: id, Address: &to}, "Your sign-in link for Vantage", nil, b.String())
	return n.mail.transmit(ctx, to, msg)
}

// MailEnabled reports whether e-mail can be sent (VANTAGE_SMTP_URL is set).
func (n *Notifier) MailEnabled() bool { return n.mail != nil }
