package notifier_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// newMember adds a user to the organization and returns the user's id.
func (e *env) newMember(email string) uuid.UUID {
	e.t.Helper()
	id := uuid.New()
	ctx := context.Background()
	if _, err := e.st.Pool().Exec(ctx, `INSERT INTO users (id, email) VALUES ($1, $2)`, id, email); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.Pool().Exec(ctx, `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'STANDARD')`, e.org, id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// emailDeliveries reads the e-mail deliveries of the environment's organization.
func (e *env) emailDeliveries() []struct{ Status, Address, Error string } {
	e.t.Helper()
	rows, err := e.st.Pool().Query(context.Background(), `SELECT status, address, coalesce(last_error, '') FROM deliveries
		WHERE org_id = $1 AND channel = 'email' ORDER BY address`, e.org)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []struct{ Status, Address, Error string }
	for rows.Next() {
		var d struct{ Status, Address, Error string }
		if err := rows.Scan(&d.Status, &d.Address, &d.Error); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestNotifierEmailsUserAlerts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	box := smtptest.New(t)
	alice := e.newMember("alice@example.com")
	outsider := uuid.New() // not a member: never e-mailed
	if _, err := e.st.Pool().Exec(context.Background(), `INSERT INTO users (id, email) VALUES ($1, 'mallory@example.com')`, outsider); err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{SMTPURL: box.URL(), MailFrom: "Vantage Alerts <alerts@vantage.test>", PublicURL: "https://vantage.test"})
	ev := e.emit("uptime.down", e.check, map[string][]string{"user_alerts": {alice.String(), outsider.String()}})
	box.Wait(t, 1)
	time.Sleep(200 * time.Millisecond)
	msgs := box.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if m.From != "alerts@vantage.test" || len(m.To) != 1 || m.To[0] != "alice@example.com" {
		t.Fatalf("envelope %+v", m)
	}
	for _, want := range []string{"Subject: [Vantage] api: DOWN", "To: <alice@example.com>", `Check "api" is DOWN (priority HIGH)`,
		"https://vantage.test/v1/checks/" + e.check.String(), "Event id: " + ev.String()} {
		if !strings.Contains(m.Raw, want) {
			t.Fatalf("message lacks %q:\n%s", want, m.Raw)
		}
	}
	testwait.Eventually(t, time.Second, testwait.Holds("the recorded delivery", func() bool {
		ds := e.emailDeliveries()
		return len(ds) == 1 && ds[0].Status == store.DeliveryDelivered
	}))
}

func TestNotifierSkipsEmailWithoutSMTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bob := e.newMember("bob@example.com")
	e.run(notifier.Config{})
	e.emit("uptime.up", e.check, map[string][]string{"user_alerts": {bob.String()}})
	testwait.Eventually(t, 2*time.Second, testwait.Holds("the skipped delivery", func() bool {
		ds := e.emailDeliveries()
		return len(ds) == 1 && ds[0].Status == store.DeliverySkipped &&
			ds[0].Error == "e-mail is disabled: VANTAGE_SMTP_URL is not set" && ds[0].Address == "bob@example.com"
	}))
}
