package notifier

import (
	"context"
	"encoding/json"
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
// it goes to the check's own alert lists and to the webhooks associated with the check.
func (n *Notifier) certificate(ctx context.Context, ev store.PendingEvent, a event.CertificateAlert, doc *Document, f *store.Fanout) (*recipients, error) {
	snap := a.Check
	if ev.CheckID != nil {
		snap.ID = *ev.CheckID
	}
	f.ResourceKind, f.ResourceID = "check", snap.ID
	rendered, _, err := n.renderCheck(ctx, ev.OrgID, snap)
	if err != nil {
		return nil, err
	}
	c := a.Certificate
	doc.Data["check"] = rendered
	doc.Data["certificate"] = certificateDoc{Subject: c.Subject, Issuer: c.Issuer, NotAfter: timeString(c.NotAfter), Fingerprint: c.SHA256}
	doc.Data["region"] = a.Region
	doc.Data["days_left"] = a.DaysLeft
	var r *recipients
	if len(snap.Alerts) > 0 {
		_ = json.Unmarshal(snap.Alerts, &r) // read leniently: a malformed list routes to nobody
	}
	return r, nil
}

// certificateFacts is what the e-mail and the integrations read of a certificate document.
type certificateFacts struct {
	Check struct {
		ID   string  `json:"id"`
		Name string  `json:"name"`
		URL  *string `json:"url"`
	} `json:"check"`
	Certificate   certificateDoc `json:"certificate"`
	Region        string         `json:"region"`
	DaysLeft      int            `json:"days_left"`
	ThresholdDays *int           `json:"threshold_days"`
}

// headline says what happened to the certificate, for an e-mail's subject or a message's name.
func (c certificateFacts) headline(typ string) string {
	if typ == event.TypeCertificateExpired {
		return "certificate expired"
	}
	return fmt.Sprintf("certificate expires in %d %s", c.DaysLeft, plural(c.DaysLeft, "day"))
}

func (c certificateFacts) summary() string {
	return fmt.Sprintf("%s, issued by %s, valid until %s (seen from %s; SHA-256 %s)",
		c.Certificate.Subject, c.Certificate.Issuer, c.Certificate.NotAfter, c.Region, c.Certificate.Fingerprint)
}

func plural(n int, word string) string {
	if n == 1 || n == -1 {
		return word
	}
	return word + "s"
}

// certificateMail writes the body of a certificate event's e-mail from its document, and
// returns what its subject says happened and to which check.
func certificateMail(typ string, document []byte, base string, b *strings.Builder) (what, name string, err error) {
	var doc struct {
		Data certificateFacts `json:"data"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		return "", "", fmt.Errorf("decode the certificate event's document: %w", err)
	}
	c := doc.Data
	fmt.Fprintf(b, "Check %q: the %s.\r\nCertificate: %s.\r\n", c.Check.Name, c.headline(typ), c.summary())
	if c.Check.URL != nil {
		fmt.Fprintf(b, "Target: %s\r\n", *c.Check.URL)
	}
	fmt.Fprintf(b, "\r\nCheck: %s/v1/checks/%s\r\n", base, c.Check.ID)
	return c.headline(typ), c.Check.Name, nil
}

// certificateMessage fills an integration's message of a certificate event: an open alert
// with a key of its own per certificate and threshold, so that each reaches on-call tools as a
// new alert, never resolving an uptime incident.
func certificateMessage(typ string, data json.RawMessage, base string, m *provider.Message) error {
	var c certificateFacts
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("decode the certificate event's data: %w", err)
	}
	m.Kind, m.Name, m.State = "check", c.Check.Name+" ("+c.headline(typ)+")", provider.Open
	m.Summary, m.Regions = c.summary(), []string{c.Region}
	if c.Check.URL != nil {
		m.Target = *c.Check.URL
	}
	m.Link = base + "/v1/checks/" + c.Check.ID
	key := "expired"
	if c.ThresholdDays != nil {
		key = fmt.Sprintf("%dd", *c.ThresholdDays)
	}
	m.DedupKey = "vantage/check/" + c.Check.ID + "/certificate/" + c.Certificate.Fingerprint + "/" + key
	return nil
}
