package notifier_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/testwait"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/certwatch"
	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestCertificateAlertsReachWebhookOnce drives results carrying a served chain through the
// ingest transaction (the evaluator with certwatch wired as in serve.go), the outbox and the
// notifier to a real HTTP receiver: each threshold of a certificate is announced once, even
// when other regions and another replica (a second watcher) see it again; a certificate first
// seen within several thresholds is announced at the tightest only; the expiry is announced
// once; and a renewed certificate starts afresh.
func TestCertificateAlertsReachWebhookOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rcv := newReceiver(t, nil)
	_, secret := e.newWebhook(rcv.URL, []string{"certificate.expiring", "certificate.expired"}, e.check)
	replicas := make([]*evaluator.Evaluator, 2)
	for i := range replicas {
		w, err := certwatch.New(certwatch.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if replicas[i], err = evaluator.New(evaluator.Config{}, evaluator.Deps{Store: e.st, Watch: w.Judge}); err != nil {
			t.Fatal(err)
		}
	}
	e.run(notifier.Config{})

	notAfter := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	old := store.TLSCertificate{Subject: "CN=shop.example.com", Issuer: "CN=Test CA", SANs: []string{"shop.example.com"},
		NotBefore: notAfter.Add(-90 * 24 * time.Hour), NotAfter: notAfter, SHA256: "0a0a0a"}
	renewed := old
	renewed.NotBefore, renewed.NotAfter, renewed.SHA256 = notAfter.Add(-24*time.Hour), notAfter.Add(60*24*time.Hour), "0b0b0b"

	// see reports one final attempt per region, checked at notAfter - left, served leaf.
	see := func(replica int, left time.Duration, leaf store.TLSCertificate, regions ...string) {
		t.Helper()
		at := notAfter.Add(-left)
		details, _ := json.Marshal(map[string]any{"tls_chain": store.TLSChain{Host: "shop.example.com", Verified: true,
			Certificates: []store.TLSCertificate{leaf}}})
		var rows []store.ResultRow
		job := uuid.New()
		for _, r := range regions {
			rows = append(rows, store.ResultRow{ID: uuid.New(), OrgID: e.org, CheckID: e.check, JobID: job, Region: r,
				AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at, Passing: true,
				ResponseTimeMs: 12, BodyAvailability: "AVAILABLE", Details: details})
		}
		if _, err := replicas[replica].IngestBatch(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	type sent struct {
		typ         string
		threshold   int
		fingerprint string
	}
	var want []sent
	expect := func(s ...sent) {
		t.Helper()
		want = append(want, s...)
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the certificate events", func() bool { return len(rcv.requests()) >= len(want) }))
	}

	see(0, 20*day, old, "cloud:eu-west-2") // no threshold yet
	see(0, 10*day, old, "cloud:eu-west-2", "cloud:us-east-1")
	expect(sent{"certificate.expiring", 14, "0a0a0a"})
	see(1, 10*day-time.Hour, old, "cloud:eu-west-2") // the other replica, the same threshold
	see(0, 6*day, old, "cloud:us-east-1")
	expect(sent{"certificate.expiring", 7, "0a0a0a"})
	see(1, 12*time.Hour, old, "cloud:eu-west-2")
	expect(sent{"certificate.expiring", 1, "0a0a0a"})
	see(0, -time.Hour, old, "cloud:eu-west-2")
	see(1, -2*time.Hour, old, "cloud:us-east-1")
	expect(sent{"certificate.expired", 0, "0a0a0a"})
	// Renewed, but first seen 3 days before its own expiry: only the tightest crossed threshold.
	see(0, -57*day, renewed, "cloud:eu-west-2")
	expect(sent{"certificate.expiring", 7, "0b0b0b"})
	see(1, -59*day-12*time.Hour, renewed, "cloud:us-east-1")
	expect(sent{"certificate.expiring", 1, "0b0b0b"})
	time.Sleep(300 * time.Millisecond) // nothing more may come

	got := rcv.requests()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	for i, w := range want {
		verifySignature(t, secret, got[i])
		var doc struct {
			Type string `json:"type"`
			Data struct {
				Check       map[string]any `json:"check"`
				Certificate struct {
					Subject     string `json:"subject"`
					NotAfter    string `json:"not_after"`
					Fingerprint string `json:"fingerprint_sha256"`
				} `json:"certificate"`
				Region    string `json:"region"`
				DaysLeft  *int   `json:"days_left"`
				Threshold *int   `json:"threshold_days"`
			} `json:"data"`
		}
		if err := json.Unmarshal(got[i].Body, &doc); err != nil {
			t.Fatal(err)
		}
		d := doc.Data
		threshold := 0
		if d.Threshold != nil {
			threshold = *d.Threshold
		}
		if doc.Type != w.typ || threshold != w.threshold || d.Certificate.Fingerprint != w.fingerprint ||
			d.Check["id"] != e.check.String() || d.Certificate.Subject != old.Subject || d.Region == "" || d.DaysLeft == nil {
			t.Errorf("request %d: want %+v, got %s", i, w, got[i].Body)
		}
		if w.typ == "certificate.expired" && (d.Threshold != nil || *d.DaysLeft >= 0) {
			t.Errorf("request %d: an expiry with a threshold or days left: %s", i, got[i].Body)
		}
		if w.typ == "certificate.expiring" && (*d.DaysLeft < 0 || *d.DaysLeft >= threshold) {
			t.Errorf("request %d: %d days left for threshold %d", i, *d.DaysLeft, threshold)
		}
	}
	var rows int
	if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM certificate_alerts WHERE check_id = $1`, e.check).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 7 { // old: 14, 7, 1 and the expiry; renewed: 14 (recorded unannounced), 7 and 1
		t.Errorf("certificate_alerts holds %d rows, want 7", rows)
	}
	// A deleted check takes its records along (ON DELETE CASCADE).
	if _, err := e.st.Pool().Exec(ctx, `DELETE FROM checks WHERE id = $1`, e.check); err != nil {
		t.Fatal(err)
	}
	if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM certificate_alerts`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d certificate_alerts rows (%v) outlive their check", rows, err)
	}
}
