package notifier_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/smtptest"

	"github.com/vantagehq/vantage/pkg/testwait"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestCertificateEventsReachMailAndIntegrations: a certificate event of a check goes to the
// users of its user_alerts by e-mail and to its integrations, each worded as a certificate
// warning (not as an outage), and both events of one certificate reach a chat tool as two
// messages. Like every check alert, they name the check as it is at send time ("api"), not
// the event's snapshot ("shop").
func TestCertificateEventsReachMailAndIntegrations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	box := smtptest.New(t)
	alice := e.newMember("alice@example.com")
	chat := newReceiver(t, nil)
	slackID := e.newIntegration(integration.Slack, integration.Settings{"webhook_url": chat.URL + "/hooks/x"})
	alerts, _ := json.Marshal(map[string][]string{"user_alerts": {alice.String()}, "slack_alerts": {slackID.String()}})
	e.run(notifier.Config{SMTPURL: box.URL(), MailFrom: "alerts@vantage.test", PublicURL: "https://vantage.test"})

	now := time.Now().UTC()
	url := "https://shop.example.com/"
	alert := func(daysLeft int) event.CertificateAlert {
		return event.CertificateAlert{OccurredAt: now, Region: "cloud:eu-west-2", DaysLeft: daysLeft,
			Check: event.Check{ID: e.check, OrgID: e.org, Name: "shop", Kind: "UPTIME", URL: &url, State: "UP", AlertPriority: "HIGH", Alerts: alerts},
			Certificate: event.Certificate{Subject: "CN=shop.example.com", Issuer: "CN=Example CA", NotAfter: now.Add(time.Duration(daysLeft)*24*time.Hour + time.Hour),
				SHA256: "ab12cd34"}}
	}
	e.queue(store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: e.org, CheckID: &e.check, AlertPriority: "HIGH", CreatedAt: now,
		Event: event.CertificateExpiring{CertificateAlert: alert(6), ThresholdDays: 7}})
	e.queue(store.OutboxEvent{ID: uuid.Must(uuid.NewV7()), OrgID: e.org, CheckID: &e.check, AlertPriority: "HIGH", CreatedAt: now.Add(time.Millisecond),
		Event: event.CertificateExpired{CertificateAlert: alert(-1)}})

	box.Wait(t, 2)
	testwait.Eventually(t, 5*time.Second, testwait.Holds("two chat messages", func() bool { return len(chat.requests()) >= 2 }))
	time.Sleep(200 * time.Millisecond)
	msgs := box.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d e-mails, want 2", len(msgs))
	}
	for i, want := range [][]string{
		{"Subject: [Vantage] api: certificate expires in 6 days", `Check "api": the certificate expires in 6 days.`, "Certificate: CN=shop.example.com, issued by CN=Example CA",
			"seen from cloud:eu-west-2; SHA-256 ab12cd34", "https://vantage.test/v1/checks/" + e.check.String()},
		{"Subject: [Vantage] api: certificate expired", `Check "api": the certificate expired.`},
	} {
		for _, w := range want {
			if !strings.Contains(msgs[i].Raw, w) {
				t.Errorf("e-mail %d lacks %q:\n%s", i, w, msgs[i].Raw)
			}
		}
	}
	var heads []string
	for _, r := range chat.requests() {
		var msg struct {
			Blocks []struct {
				Text struct{ Text string } `json:"text"`
			} `json:"blocks"`
		}
		_ = json.Unmarshal(r.Body, &msg)
		if len(msg.Blocks) > 0 {
			heads = append(heads, msg.Blocks[0].Text.Text)
		}
	}
	if len(heads) != 2 || heads[0] != "Incident: api (certificate expires in 6 days)" || heads[1] != "Incident: api (certificate expired)" {
		t.Fatalf("chat headlines %q", heads)
	}
}
