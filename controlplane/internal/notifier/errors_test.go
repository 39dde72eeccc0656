package notifier_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/redact"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// addressPattern finds an IPv4 or IPv6 address, or a port, in an error text.
var addressPattern = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+|\[?[0-9a-f]*::[0-9a-f:]*\]?|:\d{2,5}\b`)

// expectOnlyGivenHost fails when msg names an address or port beyond the host the
// organization gave, or repeats Go's dial or lookup error.
func expectOnlyGivenHost(t *testing.T, msg, given string) {
	t.Helper()
	for _, leak := range []string{"dial tcp", "lookup ", "read udp", "->"} {
		if strings.Contains(msg, leak) {
			t.Fatalf("the error %q repeats Go's error (%q)", msg, leak)
		}
	}
	if addr := addressPattern.FindString(strings.ReplaceAll(msg, given, "")); addr != "" {
		t.Fatalf("the error %q names %s, which the organization did not give", msg, addr)
	}
}

// TestIntegrationTestErrorsNameHostAndClass sends test messages that fail in each way — a
// closed port, a name that does not resolve, an untrusted certificate, a server that never
// answers, the address policy — and expects the error to name the host given and the class,
// never the address the host resolved to nor the resolver.
func TestIntegrationTestErrorsNameHostAndClass(t *testing.T) {
	t.Parallel()
	st := newEnv(t).st
	closed := closedPort(t)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	tlsHost := strings.TrimPrefix(tlsSrv.URL, "https://")
	silent := silentPort(t)
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(plain.Close)
	_, plainPort, _ := net.SplitHostPort(strings.TrimPrefix(plain.URL, "http://"))

	for _, tc := range []struct {
		name, host, scheme string
		deny               bool
		want               string
	}{
		{"closed port", "localhost:" + closed, "http", false, "connection refused"},
		{"name does not resolve", "does-not-exist.invalid", "http", false, "DNS failure: "},
		{"untrusted certificate", tlsHost, "https", false, "TLS: certificate signed by an unknown authority"},
		{"never answers", "localhost:" + silent, "http", false, "timeout: no answer in time"},
		{"refused by policy", "localhost:" + plainPort, "http", true, "refused by policy: the address is private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, err := notifier.New(notifier.Config{Timeout: 500 * time.Millisecond, DenyPrivateTargets: tc.deny},
				notifier.Deps{Store: st})
			if err != nil {
				t.Fatal(err)
			}
			res := n.TestIntegration(context.Background(), integration.Telegram, integration.Settings{
				"bot_token": "123456:ABC-secret-token", "chat_id": "1", "api_url": tc.scheme + "://" + tc.host}, "tg")
			if res.Delivered || !strings.HasPrefix(res.Error, tc.host+": "+tc.want) {
				t.Fatalf("error %q, want %q", res.Error, tc.host+": "+tc.want)
			}
			expectOnlyGivenHost(t, res.Error, tc.host)
		})
	}
}

// TestShortSecretsRedactedAsWholeTokensOnly: a secret shorter than 8 characters stored before
// such secrets were refused is redacted where it stands alone, not inside ordinary words.
func TestShortSecretsRedactedAsWholeTokensOnly(t *testing.T) {
	t.Parallel()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"errors":["token at is not private, start again"],"status":0}`, http.StatusBadRequest)
	}))
	t.Cleanup(echo.Close)
	n, err := notifier.New(notifier.Config{}, notifier.Deps{Store: newEnv(t).st})
	if err != nil {
		t.Fatal(err)
	}
	res := n.TestIntegration(context.Background(), integration.Pushover, integration.Settings{
		"app_token": "at", "user_key": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "api_url": echo.URL}, "phone")
	want := "token " + redact.Marker + " is not private, start again"
	if !strings.Contains(res.Body, want) || !strings.Contains(res.Error, want) {
		t.Fatalf("body %q, error %q: want %q", res.Body, res.Error, want)
	}
}

// TestWebhookDeliveryErrorNamesHostAndClass: a webhook delivery refused by a closed port records
// the host of the URL as written and the class, not the address dialled; a URL that is all
// one secret variable is named by its reference, never by its value.
func TestWebhookDeliveryErrorNamesHostAndClass(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	host := "localhost:" + closedPort(t)
	if _, err := e.st.CreateEnvVar(context.Background(), store.SystemActor, e.org,
		store.NewEnvVar{Name: "HOOK_URL", Type: "secret", Value: "http://" + host + "/in/s3cr3t-path"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // URL template → the error recorded
		"http://user:pass@" + host + "/hook": host + ": connection refused",
		"{{HOOK_URL}}":                       "{{HOOK_URL}}: connection refused",
	}
	hooks := map[string]uuid.UUID{}
	for tmpl := range want {
		hooks[tmpl], _ = e.newWebhook(tmpl, []string{"uptime.down"}, e.check)
	}
	e.run(notifier.Config{Backoff: []time.Duration{time.Hour}})
	e.emit("uptime.down", e.check, nil)
	for tmpl, hook := range hooks {
		var ds []store.Delivery
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the refused attempt", func() bool {
			ds, _, _ = e.st.ListDeliveries(context.Background(), e.org, hook, 1, 0)
			return len(ds) == 1 && ds[0].LastError != nil
		}))
		if msg := *ds[0].LastError; msg != want[tmpl] {
			t.Fatalf("%s: recorded error %q, want %q", tmpl, msg, want[tmpl])
		}
		if a := ds[0].Attempts; len(a) != 1 || a[0].Error == nil || *a[0].Error != want[tmpl] {
			t.Fatalf("%s: attempts %+v", tmpl, a)
		}
	}
}

// closedPort is a loopback port nothing listens on (it was just released).
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}

// silentPort is a loopback port that accepts connections and never answers.
func silentPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // once the listener is closed
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestUndecodableAlertListsFailTheFanout: an uptime.down whose stored alert lists do not decode
// is not routed by association only, as reading them leniently did (its listed webhooks and
// integrations would silently hear nothing): its fan-out fails, is counted and recorded on the
// outbox row, and nothing is delivered until it is fixed.
func TestUndecodableAlertListsFailTheFanout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rcv := newReceiver(t, nil)
	e.newWebhook(rcv.URL+"/assoc", []string{"uptime.down"}, e.check)
	reg := prometheus.NewRegistry()
	e.runWith(notifier.Config{PollInterval: 10 * time.Millisecond}, notifier.Deps{Registerer: reg})
	now := time.Now()
	listed := uuid.NewString()
	e.queue(store.OutboxEvent{OrgID: e.org, CheckID: &e.check, AlertPriority: "HIGH", CreatedAt: now,
		Event: event.UptimeDown{UptimeAlert: event.UptimeAlert{OccurredAt: now, Check: event.Check{ID: e.check, OrgID: e.org,
			Name: "api", Kind: "UPTIME", State: "DOWN", AlertPriority: "HIGH",
			Alerts: json.RawMessage(`{"webhook_alerts":"` + listed + `"}`)}}}})
	var lastError *string
	testwait.Eventually(t, 10*time.Second, testwait.Holds("the failed fan-out recorded", func() bool {
		err := e.st.Pool().QueryRow(context.Background(), `SELECT last_error FROM outbox WHERE org_id = $1`, e.org).Scan(&lastError)
		return err == nil && lastError != nil
	}))
	if !strings.Contains(*lastError, "the alert lists of check "+e.check.String()) {
		t.Fatalf("recorded error %q", *lastError)
	}
	if n := counterValue(t, reg, "vantage_notifier_fanout_errors_total"); n < 1 {
		t.Fatalf("fan-out errors counted %v", n)
	}
	var deliveries int
	if err := e.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE org_id = $1`, e.org).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 || len(rcv.requests()) != 0 {
		t.Fatalf("%d deliveries, %d requests: the event was routed", deliveries, len(rcv.requests()))
	}
}

// counterValue is the value of the counter name in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
