package notifier

import (
	"context"
	"fmt"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The certificate expiry events (certificate.expiring, certificate.expired): their document,
// their e-mail wording and their integration message, kept apart from the other events'.

// certificateDoc is the certificate of a certificate event's document.
type certificateDoc struct {
	Subject     string `json:"subject"`
	Issuer      string `json:"issuer"`
	NotAfter    string `json:"not_after"`
	Fingerprint string `json:"fingerprint_sha256"`
}

// certificate fills the document of a certificate event: the check as the API returns it, the
// served certificate, the region that saw it and the days it had left. Like an uptime alert,
// it goes to the check's own alert lists (read by newAlert) and to the webhooks associated
// with the check.
func (n *Notifier) certificate(ctx context.Context, ev store.PendingEvent, a event.CertificateAlert, doc *Document, f *store.Fanout) error {
	snap := a.Check
	if ev.CheckID != nil {
		snap.ID = *ev.CheckID
	}
	f.ResourceKind, f.ResourceID = "check", snap.ID
	rendered, _, err := n.renderCheck(ctx, ev.OrgID, snap)
	if err != nil {
		return err
	}
	c := a.Certificate
	doc.Data["check"] = rendered
	doc.Data["certificate"] = certificateDoc{Subject: c.Subject, Issuer: c.Issuer, NotAfter: timeString(c.NotAfter), Fingerprint: c.SHA256}
	doc.Data["region"] = a.Region
	doc.Data["days_left"] = a.DaysLeft
	return nil
}

// alertCertificate is what alerts say of a certificate event: the served leaf certificate,
// the region that saw it, the days it had left, and the threshold crossed (nil once expired).
type alertCertificate struct {
	event.Certificate
	Region        string
	DaysLeft      int
	ThresholdDays *int
}

func (a *alert) certificate(c event.CertificateAlert, threshold *int) error {
	if err := a.uptime(event.UptimeAlert{OccurredAt: c.OccurredAt, Check: c.Check}); err != nil {
		return err
	}
	a.Certificate = &alertCertificate{Certificate: c.Certificate, Region: c.Region, DaysLeft: c.DaysLeft, ThresholdDays: threshold}
	return nil
}

// headline says what happened to the certificate, for an e-mail's subject or a message's name.
func (c *alertCertificate) headline() string {
	if c.ThresholdDays == nil {
		return "certificate expired"
	}
	return fmt.Sprintf("certificate expires in %d %s", c.DaysLeft, plural(c.DaysLeft, "day"))
}

func (c *alertCertificate) summary() string {
	return fmt.Sprintf("%s, issued by %s, valid until %s (seen from %s; SHA-256 %s)",
		c.Subject, c.Issuer, timeString(c.NotAfter), c.Region, c.SHA256)
}

func plural(n int, word string) string {
	if n == 1 || n == -1 {
		return word
	}
	return word + "s"
}

// certificateMail writes the body of a certificate event's e-mail, and returns what its
// subject says happened.
func (a alert) certificateMail(base string, b *strings.Builder) (what string) {
	c, chk := a.Certificate, a.Check
	fmt.Fprintf(b, "Check %q: the %s.\r\nCertificate: %s.\r\n", chk.Name, c.headline(), c.summary())
	if chk.URL != nil {
		fmt.Fprintf(b, "Target: %s\r\n", *chk.URL)
	}
	fmt.Fprintf(b, "\r\nCheck: %s/v1/checks/%s\r\n", base, chk.ID)
	return c.headline()
}

// certificateMessage fills an integration's message of a certificate event: an open alert
// with a key of its own per certificate and threshold, so that each reaches on-call tools as a
// new alert, never resolving an uptime incident.
func (a alert) certificateMessage(base string, m *provider.Message) {
	c, chk := a.Certificate, a.Check
	m.Kind, m.Name, m.State = "check", chk.Name+" ("+c.headline()+")", provider.Open
	m.Summary, m.Regions = c.summary(), []string{c.Region}
	m.Target = chk.Target
	m.Link = base + "/v1/checks/" + chk.ID.String()
	key := "expired"
	if c.ThresholdDays != nil {
		key = fmt.Sprintf("%dd", *c.ThresholdDays)
	}
	m.DedupKey = "vantage/check/" + chk.ID.String() + "/certificate/" + c.SHA256 + "/" + key
}
