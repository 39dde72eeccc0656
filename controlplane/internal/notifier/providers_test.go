package notifier_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// fakeProvider is a local stand-in for a chat or on-call service: it checks every request the
// way the service documents it (method, path, headers, body schema), records what the message
// said (DOWN or UP), and answers as the service does — or with the status script(n) gives the
// n-th request (429 with Retry-After, 5xx).
type fakeProvider struct {
	*httptest.Server
	t      testing.TB
	check  func(r *http.Request, body []byte) (state string, err error)
	answer func(w http.ResponseWriter) // the service's success answer
	script func(n int) int             // 0: answer as the service does
	mu     sync.Mutex
	got    []fakeRequest
}

type fakeRequest struct {
	At     time.Time
	State  string // "DOWN" or "UP" as the message says; "" when refused
	Status int
	Err    string
}

func newFake(t testing.TB, check func(*http.Request, []byte) (string, error), answer func(http.ResponseWriter)) *fakeProvider {
	f := &fakeProvider{t: t, check: check, answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.got) + 1
		f.mu.Unlock()
		rec := fakeRequest{At: time.Now()}
		state, err := f.check(r, body)
		switch {
		case err != nil:
			rec.Err, rec.Status = err.Error(), http.StatusBadRequest
			http.Error(w, `{"error":"`+err.Error()+`"}`, http.StatusBadRequest)
		case f.script != nil && f.script(n) != 0:
			rec.State, rec.Status = state, f.script(n)
			if rec.Status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(rec.Status)
			_, _ = w.Write([]byte(`{"message":"slow down"}`))
		default:
			rec.State, rec.Status = state, http.StatusOK
			f.answer(w)
		}
		f.mu.Lock()
		f.got = append(f.got, rec)
		f.mu.Unlock()
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProvider) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.got...)
}

// accepted are the requests the fake answered 2xx, by the state they said.
func (f *fakeProvider) accepted() []string {
	var out []string
	for _, g := range f.requests() {
		if g.Status < 300 {
			out = append(out, g.State)
		}
	}
	return out
}

func (f *fakeProvider) refused() []string {
	var out []string
	for _, g := range f.requests() {
		if g.Err != "" {
			out = append(out, g.Err)
		}
	}
	return out
}

func answerJSON(status int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// jsonBody decodes a JSON request body after checking method and content type.
func jsonBody(r *http.Request, body []byte, path string) (map[string]any, error) {
	if r.Method != http.MethodPost {
		return nil, fmt.Errorf("method %s, want POST", r.Method)
	}
	if path != "" && r.URL.Path != path {
		return nil, fmt.Errorf("path %s, want %s", r.URL.Path, path)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, fmt.Errorf("content type %q", ct)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("body is not a JSON object: %v", err)
	}
	return v, nil
}

// stateOf reads DOWN or UP out of a headline.
func stateOf(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "DOWN") || strings.HasPrefix(s, "Still DOWN"):
		return "DOWN", nil
	case strings.HasPrefix(s, "UP"):
		return "UP", nil
	}
	return "", fmt.Errorf("headline %q says neither DOWN nor UP", s)
}

func str(v any) string { s, _ := v.(string); return s }

func anySlice(v any) []any { s, _ := v.([]any); return s }

// providerCase is one integration type: its settings against the fake, and the fake.
type providerCase struct {
	typ      string
	settings func(base string) integration.Settings
	fake     func(t testing.TB) *fakeProvider
}

const (
	pdRoutingKey = "R0123456789abcdef0123456789abcde"
	tgToken      = "123456:ABC-def_ghi"
)

var providerCases = []providerCase{
	{integration.Slack, func(base string) integration.Settings {
		return integration.Settings{"webhook_url": base + "/services/T000/B000/XXXX"}
	}, func(t testing.TB) *fakeProvider {
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/services/T000/B000/XXXX")
			if err != nil {
				return "", err
			}
			blocks, _ := v["blocks"].([]any)
			if str(v["text"]) == "" || len(blocks) < 2 {
				return "", fmt.Errorf("want text and blocks: %s", body)
			}
			for _, b := range blocks {
				if str(b.(map[string]any)["type"]) == "" {
					return "", fmt.Errorf("a block without type: %s", body)
				}
			}
			header := blocks[0].(map[string]any)
			text, _ := header["text"].(map[string]any)
			if str(header["type"]) != "header" || str(text["type"]) != "plain_text" || len([]rune(str(text["text"]))) > 150 {
				return "", fmt.Errorf("first block must be a plain_text header of ≤150 characters: %s", body)
			}
			state, err := stateOf(str(text["text"]))
			// A DOWN message says since when, from where, the last result and links to the check.
			if err == nil && state == "DOWN" {
				var parts []string
				for _, b := range blocks {
					for _, f := range anySlice(b.(map[string]any)["fields"]) {
						parts = append(parts, str(f.(map[string]any)["text"]))
					}
					for _, el := range anySlice(b.(map[string]any)["elements"]) {
						parts = append(parts, str(el.(map[string]any)["url"]))
					}
				}
				all := strings.Join(parts, "\n")
				for _, want := range []string{"*Since*\n", "*Regions*\ncloud:eu-west-2", "*Last result*\n", "HTTP 503", "/v1/checks/"} {
					if !strings.Contains(all, want) {
						return "", fmt.Errorf("the DOWN message lacks %q: %s", want, body)
					}
				}
			}
			return state, err
		}, func(w http.ResponseWriter) { _, _ = w.Write([]byte("ok")) })
	}},
	{integration.Discord, func(base string) integration.Settings {
		return integration.Settings{"webhook_url": base + "/api/webhooks/1234/tok-en"}
	}, func(t testing.TB) *fakeProvider {
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/api/webhooks/1234/tok-en")
			if err != nil {
				return "", err
			}
			embeds, _ := v["embeds"].([]any)
			if len(embeds) != 1 {
				return "", fmt.Errorf("want one embed: %s", body)
			}
			e := embeds[0].(map[string]any)
			if _, ok := e["color"].(float64); !ok || len([]rune(str(e["title"]))) > 256 {
				return "", fmt.Errorf("embed needs a title ≤256 and an integer color: %s", body)
			}
			fields, _ := e["fields"].([]any)
			for _, f := range fields {
				f := f.(map[string]any)
				if str(f["name"]) == "" || str(f["value"]) == "" || len([]rune(str(f["value"]))) > 1024 {
					return "", fmt.Errorf("embed field needs name and value ≤1024: %s", body)
				}
			}
			if _, err := time.Parse(time.RFC3339, str(e["timestamp"])); err != nil {
				return "", fmt.Errorf("embed timestamp must be ISO 8601: %s", body)
			}
			return stateOf(str(e["title"]))
		}, func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	}},
	{integration.MicrosoftTeams, func(base string) integration.Settings {
		return integration.Settings{"webhook_url": base + "/workflows/triggers/manual/paths/invoke?sig=abc"}
	}, func(t testing.TB) *fakeProvider {
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/workflows/triggers/manual/paths/invoke")
			if err != nil {
				return "", err
			}
			if r.URL.Query().Get("sig") != "abc" {
				return "", fmt.Errorf("the signature query was lost")
			}
			atts, _ := v["attachments"].([]any)
			if str(v["type"]) != "message" || len(atts) != 1 {
				return "", fmt.Errorf("want a message with one attachment: %s", body)
			}
			a := atts[0].(map[string]any)
			card, _ := a["content"].(map[string]any)
			if str(a["contentType"]) != "application/vnd.microsoft.card.adaptive" || card == nil ||
				str(card["type"]) != "AdaptiveCard" || str(card["version"]) == "" {
				return "", fmt.Errorf("want an Adaptive Card attachment: %s", body)
			}
			items, _ := card["body"].([]any)
			if len(items) == 0 {
				return "", fmt.Errorf("empty card: %s", body)
			}
			return stateOf(str(items[0].(map[string]any)["text"]))
		}, func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) })
	}},
	{integration.Telegram, func(base string) integration.Settings {
		return integration.Settings{"bot_token": tgToken, "chat_id": "-1001234567890", "api_url": base}
	}, func(t testing.TB) *fakeProvider {
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/bot"+tgToken+"/sendMessage")
			if err != nil {
				return "", err
			}
			text := str(v["text"])
			if str(v["chat_id"]) != "-1001234567890" || str(v["parse_mode"]) != "HTML" || text == "" || len([]rune(text)) > 4096 {
				return "", fmt.Errorf("sendMessage needs chat_id, parse_mode HTML and a text ≤4096: %s", body)
			}
			return stateOf(strings.TrimPrefix(text, "<b>"))
		}, answerJSON(200, `{"ok":true,"result":{"message_id":1,"chat":{"id":-1001234567890}}}`))
	}},
	{integration.Pushover, func(base string) integration.Settings {
		return integration.Settings{"app_token": "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "user_key": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
			"api_url": base + "/1/messages.json"}
	}, func(t testing.TB) *fakeProvider {
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			if r.Method != http.MethodPost || r.URL.Path != "/1/messages.json" ||
				r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				return "", fmt.Errorf("want a form POST to /1/messages.json, got %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			}
			form, err := url.ParseQuery(string(body))
			if err != nil {
				return "", err
			}
			if form.Get("token") != "azGDORePK8gMaC0QOYAMyEEuzJnyUi" || form.Get("user") != "uQiRzpo4DXghDmr9QzzfQu27cmVRsG" ||
				form.Get("message") == "" || len([]rune(form.Get("title"))) > 250 {
				return "", fmt.Errorf("want token, user, message and a title ≤250: %s", body)
			}
			state, err := stateOf(form.Get("title"))
			want := map[string]string{"DOWN": "1", "UP": "-1"}[state] // the check's alert_priority is HIGH
			if err == nil && form.Get("priority") != want {
				return "", fmt.Errorf("priority %q for %s, want %s", form.Get("priority"), state, want)
			}
			return state, err
		}, answerJSON(200, `{"status":1,"request":"647d2300-702c-4b38-8b2f-d56326ae460b"}`))
	}},
	{integration.IncidentIO, func(base string) integration.Settings {
		return integration.Settings{"url": base + "/v2/alert_events/http/01GW2G3V0S59R238FAHPDS1R66", "token": "inc_secret_token"}
	}, func(t testing.TB) *fakeProvider {
		var mu sync.Mutex
		keys := map[string]bool{}
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/v2/alert_events/http/01GW2G3V0S59R238FAHPDS1R66")
			if err != nil {
				return "", err
			}
			if r.Header.Get("Authorization") != "Bearer inc_secret_token" {
				return "", fmt.Errorf("missing bearer token")
			}
			status, key := str(v["status"]), str(v["deduplication_key"])
			if str(v["title"]) == "" || key == "" || (status != "firing" && status != "resolved") {
				return "", fmt.Errorf("want title, deduplication_key and status firing|resolved: %s", body)
			}
			mu.Lock()
			defer mu.Unlock()
			if status == "resolved" && !keys[key] {
				return "", fmt.Errorf("resolved %s was never firing", key)
			}
			keys[key] = true
			return map[string]string{"firing": "DOWN", "resolved": "UP"}[status], nil
		}, answerJSON(202, `{"status":"success","message":"Event accepted for processing","deduplication_key":"k"}`))
	}},
	{integration.Oncall, func(base string) integration.Settings {
		return integration.Settings{"routing_key": pdRoutingKey, "events_url": base + "/v2/enqueue"}
	}, func(t testing.TB) *fakeProvider {
		var mu sync.Mutex
		open := map[string]bool{}
		return newFake(t, func(r *http.Request, body []byte) (string, error) {
			v, err := jsonBody(r, body, "/v2/enqueue")
			if err != nil {
				return "", err
			}
			key := str(v["dedup_key"])
			if str(v["routing_key"]) != pdRoutingKey || key == "" || len(key) > 255 {
				return "", fmt.Errorf("want routing_key and a dedup_key ≤255: %s", body)
			}
			mu.Lock()
			defer mu.Unlock()
			switch str(v["event_action"]) {
			case "trigger":
				p, _ := v["payload"].(map[string]any)
				if p == nil || str(p["summary"]) == "" || str(p["source"]) == "" ||
					!slices.Contains([]string{"critical", "error", "warning", "info"}, str(p["severity"])) {
					return "", fmt.Errorf("trigger needs payload.summary, source and severity: %s", body)
				}
				if str(p["severity"]) != "critical" { // the check's alert_priority is HIGH
					return "", fmt.Errorf("severity %s for a HIGH alert", p["severity"])
				}
				open[key] = true
				return "DOWN", nil
			case "resolve":
				if !open[key] {
					return "", fmt.Errorf("resolve of %s, which was never triggered", key)
				}
				return "UP", nil
			}
			return "", fmt.Errorf("event_action %q", v["event_action"])
		}, answerJSON(202, `{"status":"success","message":"Event processed","dedup_key":"k"}`))
	}},
}

// newIntegration stores an integration of the test's organization.
func (e *env) newIntegration(typ string, set integration.Settings) uuid.UUID {
	e.t.Helper()
	set, errs := integration.Validate(typ, set)
	if len(errs) > 0 {
		e.t.Fatalf("settings: %v", errs)
	}
	in, err := e.st.CreateIntegration(context.Background(), store.SystemActor, e.org,
		store.NewIntegration{Name: typ + " alerts", Type: typ, Settings: set})
	if err != nil {
		e.t.Fatal(err)
	}
	return in.ID
}

// alertTo makes the check UP, unmuted and alerting the integration through its type's list.
func (e *env) alertTo(check uuid.UUID, typ string, id uuid.UUID) {
	e.t.Helper()
	alerts, _ := json.Marshal(map[string][]string{integration.AlertsField(typ): {id.String()}})
	if _, err := e.st.Pool().Exec(context.Background(), `UPDATE checks SET state = 'UP', muted = false, alerts = $2
		WHERE id = $1`, check, alerts); err != nil {
		e.t.Fatal(err)
	}
}

// driver feeds a check's results through the real evaluator.
type driver struct {
	t     testing.TB
	e     *env
	ev    *evaluator.Evaluator
	runAt time.Time
}

func newDriver(t testing.TB, e *env) *driver {
	ev, err := evaluator.New(evaluator.Config{}, evaluator.Deps{Store: e.st})
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, e: e, ev: ev, runAt: time.Now().Add(-time.Hour).Truncate(time.Second)}
}

// until reports runs of check until it reaches want, and returns when the transition committed.
func (d *driver) until(check uuid.UUID, passing bool, want string) time.Time {
	d.t.Helper()
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		d.runAt = d.runAt.Add(time.Minute)
		summary := "Expected status 200, got 503"
		code := int32(503)
		if passing {
			summary, code = "OK", 200
		}
		row := store.ResultRow{ID: uuid.New(), OrgID: d.e.org, CheckID: check, JobID: uuid.New(), Region: "cloud:eu-west-2",
			AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: d.runAt, CheckedAt: d.runAt, Passing: passing,
			ResponseTimeMs: 12, BodyAvailability: "AVAILABLE", ResultSummary: &summary, ResponseCode: &code}
		if _, err := d.ev.IngestBatch(ctx, []store.ResultRow{row}); err != nil {
			d.t.Fatal(err)
		}
		var s string
		if err := d.e.st.Pool().QueryRow(ctx, `SELECT state FROM checks WHERE id = $1`, check).Scan(&s); err != nil {
			d.t.Fatal(err)
		}
		if s == want {
			return time.Now()
		}
	}
	d.t.Fatalf("check never reached %s", want)
	return time.Time{}
}

// TestIntegrationsDeliverDownAndUp: for every provider, an integration named in the check's
// list of its type gets exactly one DOWN message when the real evaluator takes the check down,
// and exactly one UP (resolve) when it recovers, in the provider's documented format.
func TestIntegrationsDeliverDownAndUp(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.typ, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			fake := pc.fake(t)
			id := e.newIntegration(pc.typ, pc.settings(fake.URL))
			e.alertTo(e.check, pc.typ, id)
			d := newDriver(t, e)
			e.run(notifier.Config{PublicURL: "https://vantage.example"})

			d.until(e.check, false, "DOWN")
			testwait.Eventually(t, 5*time.Second, testwait.Holds("the DOWN message", func() bool { return len(fake.requests()) >= 1 }))
			d.until(e.check, true, "UP")
			testwait.Eventually(t, 5*time.Second, testwait.Holds("the UP message", func() bool { return len(fake.requests()) >= 2 }))
			time.Sleep(300 * time.Millisecond) // a third request would be a duplicate
			if bad := fake.refused(); len(bad) > 0 {
				t.Fatalf("the fake refused: %v", bad)
			}
			if got := fake.accepted(); !slices.Equal(got, []string{"DOWN", "UP"}) {
				t.Fatalf("messages %v, want exactly [DOWN UP]", got)
			}
			var ds []store.Delivery
			var total int64
			var err error
			testwait.Eventually(t, 5*time.Second, testwait.Holds("both deliveries recorded", func() bool {
				ds, total, err = e.st.IntegrationDeliveries(context.Background(), e.org, id, 10, 0)
				return err != nil || (total == 2 && ds[0].Status != store.DeliveryPending)
			}))
			if err != nil || total != 2 || ds[0].Status != store.DeliveryDelivered || len(ds[0].Attempts) != 1 {
				t.Fatalf("delivery log %+v %d %v", ds, total, err)
			}
		})
	}
}

// TestIntegrationHonoursRetryAfter: a 429 answer is retried after its Retry-After (1 s), not
// at the notifier's backoff (here 10 ms, which would hammer the provider), and sent once more
// only; a 5xx is retried at the backoff.
func TestIntegrationHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.typ, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			fake := pc.fake(t)
			fake.script = func(n int) int {
				switch n {
				case 1:
					return http.StatusTooManyRequests
				case 2:
					return http.StatusBadGateway
				}
				return 0
			}
			id := e.newIntegration(pc.typ, pc.settings(fake.URL))
			e.alertTo(e.check, pc.typ, id)
			d := newDriver(t, e)
			e.run(notifier.Config{Backoff: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond},
				Jitter: -1, PollInterval: 10 * time.Millisecond})
			d.until(e.check, false, "DOWN")
			testwait.Eventually(t, 10*time.Second, testwait.Holds("the DOWN message accepted", func() bool { return len(fake.accepted()) >= 1 }))
			got := fake.requests()
			if len(got) != 3 || got[0].Status != 429 || got[1].Status != 502 {
				t.Fatalf("requests %+v, want 429, 502, then accepted", got)
			}
			// The fake stamps arrivals, a few milliseconds after the attempt began.
			if wait := got[1].At.Sub(got[0].At); wait < 950*time.Millisecond {
				t.Fatalf("retried %s after a 429 with Retry-After: 1", wait)
			}
			var ds []store.Delivery
			var err error
			testwait.Eventually(t, 5*time.Second, testwait.Holds("the delivery recorded", func() bool {
				ds, _, err = e.st.IntegrationDeliveries(context.Background(), e.org, id, 10, 0)
				return err != nil || (len(ds) == 1 && ds[0].Status != store.DeliveryPending)
			}))
			if err != nil || len(ds) != 1 || ds[0].Status != store.DeliveryDelivered || len(ds[0].Attempts) != 3 ||
				*ds[0].Attempts[0].StatusCode != 429 {
				t.Fatalf("delivery log %+v %v", ds, err)
			}
		})
	}
}

func providerCaseOf(t testing.TB, typ string) providerCase {
	for _, pc := range providerCases {
		if pc.typ == typ {
			return pc
		}
	}
	t.Fatalf("no provider case %s", typ)
	return providerCase{}
}

// queue writes events to the outbox as their producers do (store.OutboxEvent).
func (e *env) queue(events ...store.OutboxEvent) {
	e.t.Helper()
	err := e.st.InStatusPageTx(context.Background(), func(tx *store.StatusPageTx) error { return tx.QueueEvents(context.Background(), events...) })
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestIntegrationsHeartbeatAndStatusPageEvents: a heartbeat's oncall_alerts trigger and then
// resolve the on-call incident; an integration attached to a status page gets its incident's
// start and resolution.
func TestIntegrationsHeartbeatAndStatusPageEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pd := providerCaseOf(t, integration.Oncall)
	pdFake := pd.fake(t)
	pdID := e.newIntegration(integration.Oncall, pd.settings(pdFake.URL))
	chat := newReceiver(t, nil)
	slackID := e.newIntegration(integration.Slack, integration.Settings{"webhook_url": chat.URL + "/hooks/x"})
	page := uuid.Must(uuid.NewV7())
	if _, err := e.st.Pool().Exec(context.Background(), `INSERT INTO integration_status_pages (org_id, integration_id, status_page_id)
		VALUES ($1, $2, $3)`, e.org, slackID, page); err != nil {
		t.Fatal(err)
	}
	e.run(notifier.Config{})

	hbID := uuid.Must(uuid.NewV7())
	hb := func(status string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"id": hbID, "name": "nightly backup", "status": status, "last_seen": nil,
			"report_period": 3600, "grace_period": 300, "alerts": map[string]any{"oncall_alerts": []string{pdID.String()}}})
		return b
	}
	now := time.Now()
	e.queue(store.OutboxEvent{OrgID: e.org, CheckID: &hbID, AlertPriority: "HIGH", CreatedAt: now,
		Event: event.HeartbeatDown{HeartbeatAlert: event.HeartbeatAlert{OccurredAt: now, Heartbeat: hb("DOWN")}}})
	e.queue(store.OutboxEvent{OrgID: e.org, CheckID: &hbID, AlertPriority: "HIGH", CreatedAt: now.Add(time.Millisecond),
		Event: event.HeartbeatUp{HeartbeatAlert: event.HeartbeatAlert{OccurredAt: now, Heartbeat: hb("UP")}}})

	incident, _ := json.Marshal(map[string]any{"id": uuid.NewString(), "title": "Elevated errors", "impact": "MAJOR_OUTAGE",
		"started": now, "updates": []any{map[string]any{"status": "INVESTIGATING", "description": "Looking into it."}}})
	change := event.IncidentChange{OccurredAt: now, StatusPage: event.PageRef{ID: page, Name: "Acme"}, Incident: incident}
	e.queue(store.OutboxEvent{OrgID: e.org, StatusPageID: &page, CreatedAt: now, Event: event.IncidentStarted{IncidentChange: change}})
	e.queue(store.OutboxEvent{OrgID: e.org, StatusPageID: &page, CreatedAt: now.Add(time.Millisecond),
		Event: event.IncidentResolved{IncidentChange: change}})

	testwait.Eventually(t, 5*time.Second, testwait.Holds("trigger and resolve", func() bool { return len(pdFake.requests()) >= 2 }))
	testwait.Eventually(t, 5*time.Second, testwait.Holds("both incident messages", func() bool { return len(chat.requests()) >= 2 }))
	time.Sleep(300 * time.Millisecond)
	if bad := pdFake.refused(); len(bad) > 0 {
		t.Fatalf("PagerDuty fake refused: %v", bad)
	}
	if got := pdFake.accepted(); !slices.Equal(got, []string{"DOWN", "UP"}) {
		t.Fatalf("on-call got %v, want a trigger then a resolve", got)
	}
	var heads []string
	for _, r := range chat.requests() {
		var msg struct {
			Blocks []struct {
				Text struct{ Text string } `json:"text"`
			} `json:"blocks"`
		}
		_ = json.Unmarshal(r.Body, &msg)
		heads = append(heads, msg.Blocks[0].Text.Text)
	}
	if len(heads) != 2 || heads[0] != "Incident: Elevated errors (Acme)" || heads[1] != "Resolved: Elevated errors (Acme)" {
		t.Fatalf("status page messages %q", heads)
	}
}

// TestIntegrationTargetsPolicyAndRedaction: with private targets denied, an integration URL
// that resolves to loopback is refused at connect time; a provider's answer that echoes a
// secret is recorded with the secret redacted.
func TestIntegrationTargetsPolicyAndRedaction(t *testing.T) {
	t.Parallel()
	t.Run("private target denied", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		fake := providerCaseOf(t, integration.Slack).fake(t)
		// "localhost" resolves to loopback: the policy applies after name resolution.
		id := e.newIntegration(integration.Slack, integration.Settings{
			"webhook_url": strings.Replace(fake.URL, "127.0.0.1", "localhost", 1) + "/services/T000/B000/XXXX"})
		e.alertTo(e.check, integration.Slack, id)
		d := newDriver(t, e)
		e.run(notifier.Config{DenyPrivateTargets: true, Backoff: []time.Duration{time.Hour}})
		d.until(e.check, false, "DOWN")
		var ds []store.Delivery
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the refused attempt", func() bool {
			ds, _, _ = e.st.IntegrationDeliveries(context.Background(), e.org, id, 10, 0)
			return len(ds) == 1 && ds[0].AttemptCount == 1 && ds[0].LastError != nil
		}))
		// The refusal says what was refused, not which address "localhost" resolved to.
		if len(fake.requests()) != 0 || !strings.Contains(*ds[0].LastError, "private, loopback, link-local") ||
			strings.Contains(*ds[0].LastError, "127.0.0.1") {
			t.Fatalf("requests %d, error %q", len(fake.requests()), *ds[0].LastError)
		}
	})
	t.Run("secret redacted from answers", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"ok":false,"description":"Not Found: `+r.URL.Path+`"}`, http.StatusNotFound)
		}))
		t.Cleanup(echo.Close)
		id := e.newIntegration(integration.Telegram, integration.Settings{"bot_token": "999:very-secret", "chat_id": "1", "api_url": echo.URL})
		e.alertTo(e.check, integration.Telegram, id)
		d := newDriver(t, e)
		e.run(notifier.Config{Backoff: []time.Duration{time.Hour}})
		d.until(e.check, false, "DOWN")
		var ds []store.Delivery
		testwait.Eventually(t, 5*time.Second, testwait.Holds("the refused attempt", func() bool {
			ds, _, _ = e.st.IntegrationDeliveries(context.Background(), e.org, id, 10, 0)
			return len(ds) == 1 && ds[0].LastError != nil
		}))
		if msg := *ds[0].LastError; strings.Contains(msg, "very-secret") || !strings.Contains(msg, "HTTP 404") {
			t.Fatalf("recorded error %q", msg)
		}
	})
}
