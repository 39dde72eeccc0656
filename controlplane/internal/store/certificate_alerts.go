package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// What the certificate expiry watcher (certwatch) reads and writes inside a pipeline
// transaction: the checks' configuration documents, and which thresholds of which served
// certificate were already announced (certificate_alerts, 0027).

// CertificateRef names one certificate a check was served.
type CertificateRef struct {
	OrgID       uuid.UUID
	CheckID     uuid.UUID
	Fingerprint string // hex SHA-256 of the DER certificate
}

// CertificateAlert is one threshold of one certificate, announced (or to be): ThresholdDays 0
// stands for the certificate's expiry itself.
type CertificateAlert struct {
	CertificateRef
	ThresholdDays int
	NotAfter      time.Time
}

// CheckDocuments returns the stored configuration documents (checks.spec) of the given locked
// checks, by check id.
func (p *PipelineTx) CheckDocuments(ctx context.Context, checks []*PipelineCheck) (map[uuid.UUID]json.RawMessage, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	arg := dbsqlc.CertificateCheckSpecsParams{CheckIds: make([]uuid.UUID, len(checks)), OrgIds: make([]uuid.UUID, len(checks))}
	for i, c := range checks {
		arg.CheckIds[i], arg.OrgIds[i] = c.ID, c.OrgID
	}
	rows, err := p.q().CertificateCheckSpecs(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read check configurations: %w", err)
	}
	out := make(map[uuid.UUID]json.RawMessage, len(rows))
	for _, r := range rows {
		if c := p.read[r.ID]; c != nil && c.OrgID == r.OrgID { // the pairs asked for, not the cross product
			out[r.ID] = r.Spec
		}
	}
	return out, nil
}

// SentCertificateAlerts returns the thresholds already announced for each certificate.
func (p *PipelineTx) SentCertificateAlerts(ctx context.Context, refs []CertificateRef) (map[CertificateRef][]int, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	n := len(refs)
	arg := dbsqlc.SentCertificateAlertsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n), Fingerprints: make([]string, n)}
	orgOf := make(map[uuid.UUID]uuid.UUID, n)
	for i, r := range refs {
		arg.OrgIds[i], arg.CheckIds[i], arg.Fingerprints[i] = r.OrgID, r.CheckID, r.Fingerprint
		orgOf[r.CheckID] = r.OrgID
	}
	rows, err := p.q().SentCertificateAlerts(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("read sent certificate alerts: %w", err)
	}
	out := make(map[CertificateRef][]int, len(rows))
	for _, r := range rows {
		ref := CertificateRef{OrgID: orgOf[r.CheckID], CheckID: r.CheckID, Fingerprint: r.Fingerprint}
		out[ref] = append(out[ref], int(r.ThresholdDays))
	}
	return out, nil
}

// RecordCertificateAlerts marks thresholds as announced at sentAt and returns those that were
// not already: only those may be announced now. A check deleted meanwhile records nothing.
func (p *PipelineTx) RecordCertificateAlerts(ctx context.Context, alerts []CertificateAlert, sentAt time.Time) ([]CertificateAlert, error) {
	if len(alerts) == 0 {
		return nil, nil
	}
	n := len(alerts)
	arg := dbsqlc.RecordCertificateAlertsParams{SentAt: sentAt, CheckIds: make([]uuid.UUID, n), OrgIds: make([]uuid.UUID, n),
		Fingerprints: make([]string, n), Thresholds: make([]int32, n), NotAfters: make([]time.Time, n)}
	type key struct {
		check       uuid.UUID
		fingerprint string
		threshold   int
	}
	byKey := make(map[key]CertificateAlert, n)
	for i, a := range alerts {
		arg.CheckIds[i], arg.OrgIds[i], arg.Fingerprints[i] = a.CheckID, a.OrgID, a.Fingerprint
		arg.Thresholds[i], arg.NotAfters[i] = int32(a.ThresholdDays), a.NotAfter
		byKey[key{a.CheckID, a.Fingerprint, a.ThresholdDays}] = a
	}
	rows, err := p.q().RecordCertificateAlerts(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("record certificate alerts: %w", err)
	}
	out := make([]CertificateAlert, 0, len(rows))
	for _, r := range rows {
		out = append(out, byKey[key{r.CheckID, r.Fingerprint, int(r.ThresholdDays)}])
	}
	return out, nil
}
