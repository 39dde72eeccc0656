package notifier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/testwait"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestCertificateDocumentsPinned pins, byte for byte, the documents webhooks receive for the
// certificate events (testdata/certificate_*.json), as TestNotifierDocumentsUnchanged pins the
// others'.
func TestCertificateDocumentsPinned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rcv := newReceiver(t, nil)
	e.newWebhook(rcv.URL, []string{event.TypeCertificateExpiring, event.TypeCertificateExpired}, e.check)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	url := "https://shop.example.com/health"
	alert := func(region string, daysLeft int, notAfter time.Time) event.CertificateAlert {
		return event.CertificateAlert{OccurredAt: at, Region: region, DaysLeft: daysLeft,
			Check: event.Check{ID: e.check, OrgID: e.org, Name: "shop", Kind: "UPTIME", URL: &url, State: "UP", AlertPriority: "HIGH",
				Alerts: json.RawMessage(docAlerts)},
			Certificate: event.Certificate{Subject: "CN=shop.example.com", Issuer: "CN=Example CA,O=Example",
				NotAfter: notAfter, SHA256: "5f2c0d4e9a1b7c3d"}}
	}
	events := map[string]store.OutboxEvent{
		"certificate_expiring": {ID: uuid.MustParse("0190a0b0-0000-7000-8000-0000000ce001"), OrgID: e.org, CheckID: &e.check, AlertPriority: "HIGH",
			Event: event.CertificateExpiring{CertificateAlert: alert("cloud:eu-west-2", 6, at.Add(150*time.Hour)), ThresholdDays: 7}},
		"certificate_expired": {ID: uuid.MustParse("0190a0b0-0000-7000-8000-0000000ce002"), OrgID: e.org, CheckID: &e.check, AlertPriority: "HIGH",
			Event: event.CertificateExpired{CertificateAlert: alert("cloud:us-east-1", -1, at.Add(-time.Hour))}},
	}
	err := e.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		for _, name := range []string{"certificate_expiring", "certificate_expired"} {
			if err := tx.QueueEvents(ctx, events[name]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{})
	testwait.Eventually(t, 5*time.Second, testwait.Holds("both documents", func() bool { return len(rcv.requests()) >= 2 }))
	bodies := map[string][]byte{}
	for _, g := range rcv.requests() {
		bodies[g.ID] = g.Body
	}
	for name, o := range events {
		want, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		// The check and organization ids are the test's own.
		want = bytes.ReplaceAll(want, []byte("{check_id}"), []byte(e.check.String()))
		if got := bodies[o.ID.String()]; !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
