// Package certwatch announces certificates that are about to expire, or have: for every
// final attempt of a batch whose result recorded the served chain (details.tls_chain, any
// check that speaks TLS, verify_ssl on or off), it compares the leaf certificate's expiry with
// the check's certificate_expiry_alert_days and queues certificate.expiring or
// certificate.expired in the ingest transaction (the evaluator calls Judge after its
// verdicts).
//
// Each certificate (its SHA-256 fingerprint) is announced at most once per threshold, and once
// as expired: what was announced is recorded in certificate_alerts in the same transaction, so
// restarts and other replicas never repeat it. A renewed certificate has another fingerprint,
// so its thresholds start afresh. A certificate seen first when it is already within several
// thresholds is announced once, at the tightest of them; the wider ones are recorded as
// announced without a message. An empty list of thresholds turns both events off; a muted
// check's certificates are not looked at until it is unmuted.
package certwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// Tx is what the watcher does inside a pipeline transaction; *store.PipelineTx implements it.
type Tx interface {
	CheckDocuments(ctx context.Context, checks []*store.PipelineCheck) (map[uuid.UUID]json.RawMessage, error)
	SentCertificateAlerts(ctx context.Context, refs []store.CertificateRef) (map[store.CertificateRef][]int, error)
	RecordCertificateAlerts(ctx context.Context, alerts []store.CertificateAlert, sentAt time.Time) ([]store.CertificateAlert, error)
	InsertOutbox(ctx context.Context, events []store.OutboxEvent) error
}

var _ Tx = (*store.PipelineTx)(nil)

// Deps are the watcher's collaborators; all are optional. Logger defaults to discarding, Now
// to time.Now (when announcements are recorded as sent), Registerer to a private registry.
type Deps struct {
	Logger     *slog.Logger
	Now        func() time.Time
	Registerer prometheus.Registerer
}

// Watcher queues the certificate events of ingested results.
type Watcher struct {
	log  *slog.Logger
	now  func() time.Time
	sent *prometheus.CounterVec
}

// New returns a Watcher.
func New(d Deps) (*Watcher, error) {
	w := &Watcher{log: d.Logger, now: d.Now}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.log = w.log.With("component", "certwatch")
	if w.now == nil {
		w.now = time.Now
	}
	reg := d.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	w.sent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_certificate_alerts_total",
		Help: "Certificate expiry events queued, by event type."}, []string{"event"})
	if err := reg.Register(w.sent); err != nil {
		return nil, fmt.Errorf("certwatch metrics: %w", err)
	}
	return w, nil
}

// Judge has the shape of store.JudgeFunc's calls: the evaluator runs it in every ingest
// transaction, after its verdicts, with the batch's locked checks and final attempts.
func (w *Watcher) Judge(ctx context.Context, tx *store.PipelineTx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
	return w.watch(ctx, tx, checks, finals)
}

// seen is one certificate of a check, as the first result of the batch that carried it showed it.
type seen struct {
	ref    store.CertificateRef
	check  *store.PipelineCheck
	leaf   store.TLSCertificate
	region string
	at     time.Time // the result's checked_at: expiry is measured from what the agent saw then
}

func (w *Watcher) watch(ctx context.Context, tx Tx, checks []*store.PipelineCheck, finals []store.ResultRow) error {
	certs := servedLeaves(checks, finals)
	if len(certs) == 0 {
		return nil
	}
	withCerts := make([]*store.PipelineCheck, 0, len(certs))
	added := map[uuid.UUID]bool{}
	for _, s := range certs {
		if !added[s.check.ID] {
			added[s.check.ID] = true
			withCerts = append(withCerts, s.check)
		}
	}
	docs, err := tx.CheckDocuments(ctx, withCerts)
	if err != nil {
		return err
	}
	refs := make([]store.CertificateRef, len(certs))
	for i, s := range certs {
		refs[i] = s.ref
	}
	sent, err := tx.SentCertificateAlerts(ctx, refs)
	if err != nil {
		return err
	}
	var record []store.CertificateAlert
	announce := map[store.CertificateAlert]seen{}
	for _, s := range certs {
		thresholds, err := thresholdsOf(s.check, docs[s.check.ID])
		if err != nil {
			return err
		}
		d := Decide(s.leaf.NotAfter, s.at, thresholds, sent[s.ref])
		for _, t := range d.Record {
			a := store.CertificateAlert{CertificateRef: s.ref, ThresholdDays: t, NotAfter: s.leaf.NotAfter}
			record = append(record, a)
			if t == d.Announce && d.Announces {
				announce[a] = s
			}
		}
	}
	now := w.now()
	recorded, err := tx.RecordCertificateAlerts(ctx, record, now)
	if err != nil {
		return err
	}
	var out []store.OutboxEvent
	for _, a := range recorded {
		s, ok := announce[a]
		if !ok {
			continue
		}
		ev := eventOf(s, a.ThresholdDays)
		checkID := s.check.ID
		out = append(out, store.OutboxEvent{OrgID: s.check.OrgID, Event: ev, CheckID: &checkID,
			AlertPriority: s.check.AlertPriority, CreatedAt: now})
		w.sent.WithLabelValues(ev.Type()).Inc()
	}
	return tx.InsertOutbox(ctx, out)
}

// servedLeaves lists the leaf certificates the final attempts of checks recorded, once per
// check and fingerprint, in the order of finals.
func servedLeaves(checks []*store.PipelineCheck, finals []store.ResultRow) []seen {
	byID := make(map[uuid.UUID]*store.PipelineCheck, len(checks))
	for _, c := range checks {
		byID[c.ID] = c
	}
	var out []seen
	done := map[store.CertificateRef]bool{}
	for _, r := range finals {
		c := byID[r.CheckID]
		// Most results carry no chain: skip them before decoding anything.
		// A muted check sends no alerts: its thresholds wait, and the tightest crossed one is
		// announced once it is unmuted.
		if c == nil || c.OrgID != r.OrgID || c.Muted || !bytes.Contains(r.Details, []byte(`"tls_chain"`)) {
			continue
		}
		var d struct {
			TLSChain *store.TLSChain `json:"tls_chain"`
		}
		if json.Unmarshal(r.Details, &d) != nil || d.TLSChain == nil || len(d.TLSChain.Certificates) == 0 {
			continue // a result's details are the agent's report, not ours to refuse
		}
		leaf := d.TLSChain.Certificates[0]
		ref := store.CertificateRef{OrgID: c.OrgID, CheckID: c.ID, Fingerprint: leaf.SHA256}
		if leaf.SHA256 == "" || leaf.NotAfter.IsZero() || done[ref] {
			continue
		}
		done[ref] = true
		out = append(out, seen{ref: ref, check: c, leaf: leaf, region: r.Region, at: r.CheckedAt})
	}
	return out
}

// thresholdsOf reads the check's certificate_expiry_alert_days from its stored document (its
// kind's default when the document predates the field); nil when its kind has none.
func thresholdsOf(c *store.PipelineCheck, doc json.RawMessage) ([]int, error) {
	if doc == nil {
		return nil, nil // deleted meanwhile
	}
	s := check.Spec{Kind: check.Kind(c.Kind)}
	if err := s.LoadDocument(doc); err != nil {
		return nil, fmt.Errorf("check %s: %w", c.ID, err)
	}
	days, _ := s.CertificateExpiryAlertDays()
	return days, nil
}

// Decision is what to do about one certificate seen at one time.
type Decision struct {
	Announces bool
	Announce  int   // the threshold announced (0: certificate.expired), when Announces
	Record    []int // the thresholds to record as announced, Announce among them
}

// Decide says which threshold of thresholds a certificate expiring at notAfter, seen at at,
// announces, given those already announced (sent; 0 is the expiry itself). A certificate
// within several thresholds announces only the tightest it has not announced, and records the
// wider ones with it. No thresholds: nothing, not even the expiry.
func Decide(notAfter, at time.Time, thresholds, sent []int) Decision {
	if len(thresholds) == 0 {
		return Decision{}
	}
	was := map[int]bool{}
	for _, t := range sent {
		was[t] = true
	}
	left := notAfter.Sub(at)
	if left <= 0 {
		if was[0] {
			return Decision{}
		}
		return Decision{Announces: true, Announce: 0, Record: []int{0}}
	}
	var d Decision
	tightest := math.MaxInt
	for _, t := range thresholds {
		if left <= time.Duration(t)*24*time.Hour && !was[t] {
			d.Record = append(d.Record, t)
			tightest = min(tightest, t)
		}
	}
	if len(d.Record) == 0 {
		return Decision{}
	}
	// A tighter threshold already announced makes a wider one stale: record it, say nothing.
	for t := range was {
		if t > 0 && t < tightest {
			return d
		}
	}
	d.Announces, d.Announce = true, tightest
	return d
}

// DaysLeft is the whole days from at until notAfter; negative once expired (as agents count).
func DaysLeft(notAfter, at time.Time) int {
	return int(math.Floor(notAfter.Sub(at).Hours() / 24))
}

func eventOf(s seen, threshold int) event.Event {
	c := s.check
	a := event.CertificateAlert{OccurredAt: s.at, Region: s.region, DaysLeft: DaysLeft(s.leaf.NotAfter, s.at),
		Check: event.Check{ID: c.ID, OrgID: c.OrgID, Name: c.Name, Kind: c.Kind, URL: c.URL, State: c.State,
			AlertPriority: c.AlertPriority, Alerts: c.Alerts},
		Certificate: event.Certificate{Subject: s.leaf.Subject, Issuer: s.leaf.Issuer, NotAfter: s.leaf.NotAfter, SHA256: s.leaf.SHA256}}
	if threshold == 0 {
		return event.CertificateExpired{CertificateAlert: a}
	}
	return event.CertificateExpiring{CertificateAlert: a, ThresholdDays: threshold}
}
