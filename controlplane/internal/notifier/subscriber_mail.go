package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The e-mails of people rather than of alerts: a status page subscriber's confirmation, the
// incident and maintenance notices confirmed subscribers receive, and invitations.
//
// Fan-out (stage 1) names the recipients: one delivery per subscriber or invitation (target =
// its id), so the (event, channel, target) key keeps any of them from being e-mailed twice for
// one event. The e-mail itself is rendered at each attempt (stage 2), because it carries the
// recipient's own links: the store opens the sealed tokens (store/subscriber_mail.go) and the
// links are built on Options.PublicURL:
//
//	confirm      {public}/status/{subdomain}/confirm?token=…
//	unsubscribe  {public}/status/{subdomain}/unsubscribe?token=…   (also List-Unsubscribe, RFC 8058)
//	status page  {public}/status/{subdomain}
//	accept       {public}/invitations/accept?token=…
//
// A recipient gone by the time of the attempt (unsubscribed, confirmed already, invitation
// accepted) is not e-mailed: the delivery is SKIPPED with the reason.

// isPeopleMail reports whether an event type is one of the subscriber or invitation e-mails.
func isPeopleMail(eventType string) bool {
	switch eventType {
	case store.EventSubscriberConfirmation, store.EventSubscriberNotification, store.EventInvitationCreated:
		return true
	}
	return false
}

// mailFanout reads whom a subscriber or invitation event e-mails from its payload.
func mailFanout(ev store.PendingEvent, p map[string]json.RawMessage) (*store.MailFanout, error) {
	var ref struct {
		ID uuid.UUID `json:"id"`
	}
	m := &store.MailFanout{}
	switch ev.EventType {
	case store.EventSubscriberConfirmation:
		if err := json.Unmarshal(p["subscriber"], &ref); err != nil {
			return nil, fmt.Errorf("decode subscriber: %w", err)
		}
		m.SubscriberID = &ref.ID
	case store.EventSubscriberNotification:
		if err := json.Unmarshal(p["status_page"], &ref); err != nil {
			return nil, fmt.Errorf("decode status page: %w", err)
		}
		m.PageID = &ref.ID
		if err := json.Unmarshal(p["component_ids"], &m.ComponentIDs); err != nil {
			return nil, fmt.Errorf("decode component ids: %w", err)
		}
	case store.EventInvitationCreated:
		if err := json.Unmarshal(p["invitation"], &ref); err != nil {
			return nil, fmt.Errorf("decode invitation: %w", err)
		}
		m.InvitationID = &ref.ID
	}
	return m, nil
}

// sendPeopleMail renders and sends one subscriber or invitation e-mail. It returns a reason
// instead of sending when the recipient is gone.
func (n *Notifier) sendPeopleMail(ctx context.Context, d store.DueDelivery) (skipped string, err error) {
	if d.Address == nil || *d.Address == "" {
		return "", errors.New("the recipient has no e-mail address")
	}
	var msg []byte
	switch d.EventType {
	case store.EventInvitationCreated:
		im, err := n.st.InvitationMail(ctx, d.OrgID, d.Target)
		if errors.Is(err, store.ErrNotFound) {
			return "the invitation was accepted or withdrawn before it was e-mailed", nil
		}
		if err != nil {
			return "", fmt.Errorf("read invitation: %w", err)
		}
		msg = n.mail.invitationMessage(d, im)
	default:
		sm, err := n.st.SubscriberMail(ctx, d.OrgID, d.Target)
		if errors.Is(err, store.ErrNotFound) {
			return "the subscriber unsubscribed before the e-mail was sent", nil
		}
		if err != nil {
			return "", fmt.Errorf("read subscriber: %w", err)
		}
		if d.EventType == store.EventSubscriberConfirmation && (sm.Confirmed || sm.ConfirmToken == "") {
			return "the subscriber is confirmed already", nil
		}
		var doc peopleDoc
		if err := json.Unmarshal(d.Body, &doc); err != nil {
			return "", fmt.Errorf("decode event document: %w", err)
		}
		msg = n.mail.subscriberMessage(d, doc, sm)
	}
	return "", n.mail.transmit(ctx, *d.Address, msg)
}

// peopleDoc is the part of a subscriber notification's document the e-mail shows.
type peopleDoc struct {
	Data struct {
		Reason   string `json:"reason"`
		Incident struct {
			Title           string     `json:"title"`
			Impact          string     `json:"impact"`
			StartDate       *time.Time `json:"start_date"`
			DurationMinutes *int       `json:"duration_minutes"`
		} `json:"incident"`
		Update struct {
			Status       string    `json:"status"`
			Description  string    `json:"description"`
			DateHappened time.Time `json:"date_happened"`
		} `json:"update"`
		Components []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"components"`
	} `json:"data"`
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

// subscriberMessage renders a confirmation or notification e-mail for one subscriber.
func (m *mailer) subscriberMessage(d store.DueDelivery, doc peopleDoc, sm store.SubscriberMail) []byte {
	unsubscribe := m.statusLink(sm.PageSubdomain, "unsubscribe", sm.UnsubscribeToken)
	var subject string
	var b strings.Builder
	if d.EventType == store.EventSubscriberConfirmation {
		subject = "Confirm your subscription to " + sm.PageName
		fmt.Fprintf(&b, "Hello,\n\nSomeone, hopefully you, asked to receive e-mail updates about %s.\n", sm.PageName)
		fmt.Fprintf(&b, "Please confirm your subscription by opening this link:\n\n%s\n\n", m.statusLink(sm.PageSubdomain, "confirm", sm.ConfirmToken))
		b.WriteString("If you did not ask for this, ignore this e-mail: without confirmation you will receive nothing more.\n")
	} else {
		x := doc.Data
		switch x.Reason {
		case store.NotifyMaintenanceUpcoming:
			subject = fmt.Sprintf("[%s] Maintenance within the hour: %s", sm.PageName, x.Incident.Title)
		case store.NotifyMaintenanceStarted:
			subject = fmt.Sprintf("[%s] Maintenance in progress: %s", sm.PageName, x.Incident.Title)
		case store.NotifyMaintenanceCompleted:
			subject = fmt.Sprintf("[%s] Maintenance completed: %s", sm.PageName, x.Incident.Title)
		default:
			subject = fmt.Sprintf("[%s] %s: %s", sm.PageName, x.Incident.Title, humanize(x.Update.Status))
		}
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
	}
	fmt.Fprintf(&b, "\n--\nYou receive this e-mail because %s subscribed to updates of %s.\nUnsubscribe: %s\n",
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
