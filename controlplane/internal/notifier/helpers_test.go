package notifier_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// env is a fresh database with one paid organization and one check.
type env struct {
	t     testing.TB
	st    *store.Store
	org   uuid.UUID
	check uuid.UUID
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st := storetest.New(t)
	org, err := st.CreateOrganization(context.Background(), "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, org: org.ID}
	e.check = e.newCheck("api", nil, nil)
	return e
}

// newCheck creates a DOWN uptime check whose alerts name the given users and webhooks.
func (e *env) newCheck(name string, users, webhooks []uuid.UUID) uuid.UUID {
	e.t.Helper()
	return storetest.Check(e.t, e.st, &storetest.CheckOpts{OrgID: e.org, Name: name, State: "DOWN",
		Spec: func(sp *check.Spec) {
			sp.TestRegions, sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = []string{"cloud:eu-west-2"}, 0, 0
			sp.Alerts.User, sp.Alerts.Webhook = idStrings(users), idStrings(webhooks)
			u := "https://example.com/" + name
			sp.HTTP.URL = &u
		}}).ID
}

func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// newSecret is a Standard Webhooks secret.
func newSecret() string {
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// newWebhook creates a webhook and returns its id and secret.
func (e *env) newWebhook(url string, events []string, checks ...uuid.UUID) (uuid.UUID, string) {
	e.t.Helper()
	secret := newSecret()
	w, err := e.st.CreateWebhook(context.Background(), store.SystemActor, e.org, store.NewWebhook{URL: url, Events: events,
		Secret: secret, WebhookAssociations: store.WebhookAssociations{CheckIDs: checks}})
	if err != nil {
		e.t.Fatal(err)
	}
	return w.ID, secret
}

// emit inserts an outbox row exactly as the evaluator writes it (evaluator/effects.go) and
// returns the event id.
func (e *env) emit(event string, check uuid.UUID, alerts map[string][]string) uuid.UUID {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7())
	now := time.Now().UTC()
	incident := uuid.Must(uuid.NewV7())
	if alerts == nil {
		alerts = map[string][]string{}
	}
	var ended any
	if event == "uptime.up" {
		ended = now
	}
	payload, _ := json.Marshal(map[string]any{"event": event, "reminder": false, "occurred_at": now,
		"check": map[string]any{"id": check, "org_id": e.org, "name": "api", "check_type": "UPTIME",
			"url": "https://example.com/api", "state": map[string]string{"uptime.down": "DOWN", "uptime.up": "UP"}[event],
			"alert_priority": "HIGH", "alerts": alerts},
		"incident": map[string]any{"id": incident, "check_id": check, "started_at": now.Add(-time.Minute), "ended_at": ended}})
	_, err := e.st.Pool().Exec(context.Background(), `INSERT INTO outbox (id, org_id, event_type, check_id, incident_id,
		alert_priority, payload, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'HIGH', $6, $7, $7)`,
		id, e.org, event, check, incident, payload, now)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// run starts a notifier until the returned stop is called (or the test ends).
func (e *env) run(cfg notifier.Config) (stop func()) {
	e.t.Helper()
	return e.runWith(cfg, notifier.Deps{})
}

// runWith is run with deps; the store and a discarding logger are filled in.
func (e *env) runWith(cfg notifier.Config, deps notifier.Deps) (stop func()) {
	e.t.Helper()
	deps.Store, deps.Logger = e.st, slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := notifier.New(cfg, deps)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	e.t.Cleanup(stop)
	return stop
}

// fastRetries is a retry schedule for tests.
var fastRetries = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond,
	50 * time.Millisecond, 50 * time.Millisecond}

// received is one request a receiver got.
type received struct {
	At        time.Time
	Path      string
	ID        string
	Timestamp string
	Signature string
	Body      []byte
	Status    int
}

// receiver is a real HTTP server that records every request and answers with status(n), n
// counting requests from 1.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		code := http.StatusOK
		if r.status != nil {
			code = r.status(len(r.got) + 1)
		}
		r.got = append(r.got, received{At: time.Now(), Path: req.URL.Path, ID: req.Header.Get("webhook-id"),
			Timestamp: req.Header.Get("webhook-timestamp"), Signature: req.Header.Get("webhook-signature"), Body: body, Status: code})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// successes are the requests answered 2xx.
func (r *receiver) successes() []received {
	var out []received
	for _, g := range r.requests() {
		if g.Status < 300 {
			out = append(out, g)
		}
	}
	return out
}

// verifySignature checks a request the Standard Webhooks way, independently of notifier.Sign.
func verifySignature(t testing.TB, secret string, g received) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(g.ID + "." + g.Timestamp + "." + string(g.Body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(g.Signature)) {
		t.Fatalf("signature %q, want %q", g.Signature, want)
	}
	ts, err := strconv.ParseInt(g.Timestamp, 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
		t.Fatalf("webhook-timestamp %q is not now", g.Timestamp)
	}
}
