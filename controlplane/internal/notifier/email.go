package notifier

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// mailer sends alert e-mails through one SMTP server.
type mailer struct {
	addr      string // host:port
	host      string
	implicit  bool // smtps://: TLS from the first byte
	user      string
	pass      string
	from      *mail.Address
	publicURL string
}

// newMailer reads smtp://[user:pass@]host:port or smtps://… (port default 25 / 465).
func newMailer(raw, from, publicURL string) (*mailer, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, errors.New("notifier: SMTP URL must be smtp://[user:pass@]host:port or smtps://[user:pass@]host:port")
	}
	sender, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("notifier: mail sender %q: %w", from, err)
	}
	m := &mailer{host: u.Hostname(), implicit: u.Scheme == "smtps", from: sender, publicURL: strings.TrimRight(publicURL, "/")}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "465", false: "25"}[m.implicit]
	}
	m.addr = net.JoinHostPort(m.host, port)
	if u.User != nil {
		m.user = u.User.Username()
		m.pass, _ = u.User.Password()
	}
	return m, nil
}

// send e-mails the alert of d to d.Address.
func (m *mailer) send(ctx context.Context, d store.DueDelivery, a alert) error {
	if d.Address == nil || *d.Address == "" {
		return errors.New("the user has no e-mail address")
	}
	return m.transmit(ctx, *d.Address, m.message(d, a))
}

// transmit hands one message for rcpt to the SMTP server, in one SMTP conversation.
func (m *mailer) transmit(ctx context.Context, rcpt string, msg []byte) error {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("connect to the SMTP server: %w", err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if m.implicit {
		conn = tls.Client(conn, &tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12})
	}
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("SMTP greeting: %w", err)
	}
	defer c.Close() //nolint:errcheck // Quit below reports what matters; Close only frees the connection
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("SMTP EHLO: %w", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !m.implicit {
		if err := c.StartTLS(&tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("SMTP STARTTLS: %w", err)
		}
	}
	if m.user != "" {
		if err := c.Auth(smtp.PlainAuth("", m.user, m.pass, m.host)); err != nil {
			return fmt.Errorf("SMTP AUTH: %w", err)
		}
	}
	if err := c.Mail(m.from.Address); err != nil {
		return fmt.Errorf("SMTP MAIL FROM: %w", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return fmt.Errorf("SMTP RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("SMTP DATA: %w", err)
	}
	return c.Quit()
}

// message renders the e-mail of one alert.
func (m *mailer) message(d store.DueDelivery, a alert) []byte {
	what, name := a.Type, "a resource"
	at := timeString(a.At)
	var body strings.Builder
	if a.Certificate != nil {
		what, name = a.certificateMail(m.publicURL, &body), a.Check.Name
	} else if c := a.Check; c != nil {
		name = c.Name
		switch a.Type {
		case event.TypeUptimeDown:
			what = "DOWN"
			if a.Reminder {
				what = "still DOWN"
			}
		case event.TypeUptimeUp:
			what = "UP again"
		case event.TypeUptimeDegraded:
			what = "UP but failing in some regions"
			if c.Reason == event.DegradedSlow {
				what = "UP but slow"
			}
		case event.TypeUptimeRestored:
			what = "passing in every region again"
			if c.Reason == event.DegradedSlow {
				what = "fast again"
			}
		}
		fmt.Fprintf(&body, "Check %q is %s (priority %s) as of %s.\r\n", c.Name, what, a.Priority, at)
		if c.URL != nil {
			fmt.Fprintf(&body, "Target: %s\r\n", *c.URL)
		}
		if inc := c.Incident; inc != nil {
			fmt.Fprintf(&body, "Incident started at %s", timeString(inc.StartedAt))
			if inc.EndedAt != nil {
				fmt.Fprintf(&body, " and ended at %s", timeString(*inc.EndedAt))
			}
			body.WriteString(".\r\n")
		}
		fmt.Fprintf(&body, "\r\nCheck: %s/v1/checks/%s\r\n", m.publicURL, c.ID)
	} else {
		fmt.Fprintf(&body, "Event %s at %s.\r\n", a.Type, at)
		if a.Summary != "" {
			body.WriteString(a.Summary + "\r\n")
		}
	}
	fmt.Fprintf(&body, "Event id: %s\r\n", d.EventID)
	subject := fmt.Sprintf("[Vantage] %s: %s", name, what)
	if a.Title != "" && a.Title != a.Type { // a type without a case that says itself
		subject = "[Vantage] " + a.Title
	}
	to := mail.Address{Address: *d.Address}
	var msg strings.Builder
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s.%s@vantage>\r\n",
		m.from.String(), to.String(), mimeHeader(subject), time.Now().UTC().Format(time.RFC1123Z), d.EventID, d.ID)
	msg.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	msg.WriteString(body.String())
	return []byte(msg.String())
}

// mimeHeader encodes a header value that is not plain ASCII, and drops line breaks.
func mimeHeader(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	for _, r := range s {
		if r > 126 {
			return mimeQ.Encode("utf-8", s)
		}
	}
	return s
}

var mimeQ = mime.QEncoding
