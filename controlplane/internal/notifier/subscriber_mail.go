package notifier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The e-mails of people rather than of alerts: a status page subscriber's confirmation, the
// incident and maintenance notices confirmed subscribers receive, and invitations.
//
// Fan-out (stage 1) names the recipients: one delivery per subscriber or invitation (target =
// its id), so the (event, channel, target) key keeps any of them from being e-mailed twice for
// one event. The e-mail itself is rendered at each attempt (stage 2), because it carries the
// recipient's own links: the store opens the sealed tokens (store/subscriber_mail.go) and the
// links are built on Config.PublicURL:
//
//	confirm      {public}/status/{subdomain}/confirm?token=…
//	unsubscribe  {public}/status/{subdomain}/unsubscribe?token=…   (also List-Unsubscribe, RFC 8058)
//	status page  {public}/status/{subdomain}
//	accept       {public}/invitations/accept?token=…
//
// A recipient gone by the time of the attempt (unsubscribed, confirmed already, invitation
// accepted) is not e-mailed: the delivery is SKIPPED with the reason.

// sendMail sends the e-mail of one delivery: a subscriber's or an invitation's, rendered from
// the event with the recipient's own links, or an alert's (email.go). It returns a reason
// instead of sending when the recipient is gone.
func (n *Notifier) sendMail(ctx context.Context, d store.DueDelivery) (skipped string, err error) {
	ev, err := event.Decode(d.Event)
	if err != nil {
		return "", err
	}
	switch ev := ev.(type) {
	case event.InvitationCreated:
		return n.sendInvitation(ctx, d)
	case event.SubscriberConfirmation:
		return n.sendSubscriberMail(ctx, d, func(sm store.SubscriberMail) ([]byte, string) {
			if sm.Confirmed || sm.ConfirmToken == "" {
				return nil, "the subscriber is confirmed already"
			}
			return n.mail.confirmationMessage(d, sm), ""
		})
	case event.SubscriberNotification:
		return n.sendSubscriberMail(ctx, d, func(sm store.SubscriberMail) ([]byte, string) {
			return n.mail.noticeMessage(d, ev, sm), ""
		})
	}
	a, err := n.alertOf(ctx, d, ev)
	if err != nil {
		return "", err
	}
	return "", n.mail.send(ctx, d, a)
}

func (n *Notifier) sendInvitation(ctx context.Context, d store.DueDelivery) (string, error) {
	if d.Address == nil || *d.Address == "" {
		return "", errors.New("the recipient has no e-mail address")
	}
	im, err := n.st.InvitationMail(ctx, d.OrgID, d.Target)
	if errors.Is(err, store.ErrNotFound) {
		return "the invitation was accepted or withdrawn before it was e-mailed", nil
	}
	if err != nil {
		return "", fmt.Errorf("read invitation: %w", err)
	}
	return "", n.mail.transmit(ctx, *d.Address, n.mail.invitationMessage(d, im))
}

// sendSubscriberMail renders (with compose) and sends one subscriber's e-mail; compose may
// give a reason not to send instead.
func (n *Notifier) sendSubscriberMail(ctx context.Context, d store.DueDelivery, compose func(store.SubscriberMail) ([]byte, string)) (string, error) {
	if d.Address == nil || *d.Address == "" {
		return "", errors.New("the recipient has no e-mail address")
	}
	sm, err := n.st.SubscriberMail(ctx, d.OrgID, d.Target)
	if errors.Is(err, store.ErrNotFound) {
		return "the subscriber unsubscribed before the e-mail was sent", nil
	}
	if err != nil {
		return "", fmt.Errorf("read subscriber: %w", err)
	}
	msg, skipped := compose(sm)
	if skipped != "" {
		return skipped, nil
	}
	return "", n.mail.transmit(ctx, *d.Address, msg)
}

// statusLink is the public status page of a subdomain, and its confirm and unsubscribe links.
func (m *mailer) statusLink(subdomain, action, token string) string {
	u := m.publicURL + "/status/" + url.PathEscape(subdomain)
	if action != "" {
		u += "/" + action + "?token=" + url.QueryEscape(token)
	}
	return u
}

// humanize turns an enum such as MAJOR_OUTAGE into "Major outage".
func humanize(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToLower(strings.ReplaceAll(s, "_", " "))
	return strings.ToUpper(s[:1]) + s[1:]
}

// confirmationMessage renders the confirmation e-mail of a new subscriber.
func (m *mailer) confirmationMessage(d store.DueDelivery, sm store.SubscriberMail) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\nSomeone, hopefully you, asked to receive e-mail updates about %s.\n", sm.PageName)
	fmt.Fprintf(&b, "Please confirm your subscription by opening this link:\n\n%s\n\n", m.statusLink(sm.PageSubdomain, "confirm", sm.ConfirmToken))
	b.WriteString("If you did not ask for this, ignore this e-mail: without confirmation you will receive nothing more.\n")
	return m.subscriberMessage(d, sm, "Confirm your subscription to "+sm.PageName, &b)
}

// noticeMessage renders an incident or maintenance notice for one confirmed subscriber.
func (m *mailer) noticeMessage(d store.DueDelivery, x event.SubscriberNotification, sm store.SubscriberMail) []byte {
	var subject string
	switch x.Reason {
	case event.ReasonMaintenanceUpcoming:
		subject = fmt.Sprintf("[%s] Maintenance within the hour: %s", sm.PageName, x.Incident.Title)
	case event.ReasonMaintenanceStarted:
		subject = fmt.Sprintf("[%s] Maintenance in progress: %s", sm.PageName, x.Incident.Title)
	case event.ReasonMaintenanceCompleted:
		subject = fmt.Sprintf("[%s] Maintenance completed: %s", sm.PageName, x.Incident.Title)
	default:
		subject = fmt.Sprintf("[%s] %s: %s", sm.PageName, x.Incident.Title, humanize(x.Update.Status))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n", x.Incident.Title, strings.Repeat("=", min(len([]rune(x.Incident.Title)), 72)))
	fmt.Fprintf(&b, "Status: %s (%s)\n", humanize(x.Update.Status), x.Update.DateHappened.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Impact: %s\n", humanize(x.Incident.Impact))
	if x.Incident.StartDate != nil && x.Incident.DurationMinutes != nil {
		fmt.Fprintf(&b, "Scheduled: %s for %d minutes\n", x.Incident.StartDate.UTC().Format("2006-01-02 15:04 UTC"), *x.Incident.DurationMinutes)
	}
	if len(x.Components) > 0 {
		names := make([]string, len(x.Components))
		for i, c := range x.Components {
			names[i] = fmt.Sprintf("%s (%s)", c.Name, humanize(c.Status))
		}
		fmt.Fprintf(&b, "Affected: %s\n", strings.Join(names, ", "))
	}
	if x.Update.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", x.Update.Description)
	}
	fmt.Fprintf(&b, "\nStatus page: %s\n", m.statusLink(sm.PageSubdomain, "", ""))
	return m.subscriberMessage(d, sm, subject, &b)
}

// subscriberMessage ends a subscriber e-mail with its unsubscribe link and headers (RFC 8058
// one-click) and composes it.
func (m *mailer) subscriberMessage(d store.DueDelivery, sm store.SubscriberMail, subject string, b *strings.Builder) []byte {
	unsubscribe := m.statusLink(sm.PageSubdomain, "unsubscribe", sm.UnsubscribeToken)
	fmt.Fprintf(b, "\n--\nYou receive this e-mail because %s subscribed to updates of %s.\nUnsubscribe: %s\n",
		sm.Email, sm.PageName, unsubscribe)
	headers := []string{
		"List-Unsubscribe: <" + unsubscribe + ">",
		"List-Unsubscribe-Post: List-Unsubscribe=One-Click",
	}
	return m.compose(d, subject, headers, b.String())
}

// invitationMessage renders an invitation e-mail.
func (m *mailer) invitationMessage(d store.DueDelivery, im store.InvitationMail) []byte {
	var b strings.Builder
	who := "You have been"
	if im.InvitedBy != "" {
		who = im.InvitedBy + " has"
	}
	fmt.Fprintf(&b, "Hello,\n\n%s invited you to join the organization %s on Vantage as %s.\n", who, im.OrgName, humanize(im.Role))
	fmt.Fprintf(&b, "Accept the invitation by opening this link:\n\n%s/invitations/accept?token=%s\n\n", m.publicURL, url.QueryEscape(im.Token))
	b.WriteString("If you did not expect this invitation, ignore this e-mail.\n")
	return m.compose(d, "You are invited to join "+im.OrgName+" on Vantage", nil, b.String())
}

// compose builds a text/plain, quoted-printable message (any line length and character set
// survives SMTP) with CRLF line ends.
func (m *mailer) compose(d store.DueDelivery, subject string, extra []string, body string) []byte {
	to := mail.Address{Address: *d.Address}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s.%s@vantage>\r\nAuto-Submitted: auto-generated\r\n",
		m.from.String(), to.String(), mimeHeader(subject), time.Now().UTC().Format(time.RFC1123Z), d.EventID, d.ID)
	for _, h := range extra {
		msg.WriteString(h + "\r\n")
	}
	msg.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	qp := quotedprintable.NewWriter(&msg)
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	_, _ = qp.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n")))
	_ = qp.Close()
	return msg.Bytes()
}
