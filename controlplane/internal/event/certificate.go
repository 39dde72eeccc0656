package event

import (
	"encoding/json"
	"errors"
	"time"
)

// The certificate expiry events (TypeCertificateExpiring, TypeCertificateExpired): their
// types, values and stored form, kept together apart from the older events.

// Certificate is the served leaf certificate an expiry event is about.
type Certificate struct {
	Subject  string
	Issuer   string
	NotAfter time.Time
	SHA256   string // hex SHA-256 fingerprint of the DER certificate
}

// CertificateAlert is what every certificate event says: the check, the certificate, the
// region whose result showed it, and the whole days it had left then (negative once expired).
type CertificateAlert struct {
	OccurredAt  time.Time
	Check       Check
	Certificate Certificate
	Region      string
	DaysLeft    int
}

// At implements Event.
func (a CertificateAlert) At() time.Time { return a.OccurredAt }

// CertificateExpiring reports that a certificate has ThresholdDays days or fewer left.
type CertificateExpiring struct {
	CertificateAlert
	ThresholdDays int
}

// CertificateExpired reports that a certificate served to a check has expired.
type CertificateExpired struct{ CertificateAlert }

// Type implements Event.
func (CertificateExpiring) Type() string { return TypeCertificateExpiring }

// Type implements Event.
func (CertificateExpired) Type() string { return TypeCertificateExpired }

func (CertificateExpiring) event() {}
func (CertificateExpired) event()  {}

// certificateV1 is the stored form of both certificate events.
type certificateV1 struct {
	Event       string    `json:"event"`
	OccurredAt  time.Time `json:"occurred_at"`
	Check       checkV1   `json:"check"`
	Certificate struct {
		Subject     string    `json:"subject"`
		Issuer      string    `json:"issuer"`
		NotAfter    time.Time `json:"not_after"`
		Fingerprint string    `json:"fingerprint_sha256"`
	} `json:"certificate"`
	Region        string `json:"region"`
	DaysLeft      int    `json:"days_left"`
	ThresholdDays *int   `json:"threshold_days,omitempty"` // certificate.expiring only
}

func certificateToV1(a CertificateAlert, typ string, threshold *int) certificateV1 {
	p := certificateV1{Event: typ, OccurredAt: a.OccurredAt.UTC(), Check: checkV1(a.Check), Region: a.Region,
		DaysLeft: a.DaysLeft, ThresholdDays: threshold}
	if len(a.Check.Alerts) == 0 {
		p.Check.Alerts = nil
	}
	c := a.Certificate
	p.Certificate.Subject, p.Certificate.Issuer, p.Certificate.NotAfter, p.Certificate.Fingerprint =
		c.Subject, c.Issuer, c.NotAfter.UTC(), c.SHA256
	return p
}

func decodeCertificateV1(typ string, b []byte) (Event, error) {
	var p certificateV1
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Certificate.Fingerprint == "" {
		return nil, errors.New("no certificate fingerprint")
	}
	a := CertificateAlert{OccurredAt: p.OccurredAt, Region: p.Region, DaysLeft: p.DaysLeft,
		Check: Check{ID: p.Check.ID, OrgID: p.Check.OrgID, Name: p.Check.Name, Kind: p.Check.Kind, URL: p.Check.URL,
			State: p.Check.State, AlertPriority: p.Check.AlertPriority, Alerts: p.Check.Alerts},
		Certificate: Certificate{Subject: p.Certificate.Subject, Issuer: p.Certificate.Issuer,
			NotAfter: p.Certificate.NotAfter, SHA256: p.Certificate.Fingerprint}}
	if typ == TypeCertificateExpired {
		return CertificateExpired{a}, nil
	}
	if p.ThresholdDays == nil {
		return nil, errors.New("no threshold_days")
	}
	return CertificateExpiring{a, *p.ThresholdDays}, nil
}
