package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/subscribe"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

const testPublicURL = "http://vantage.test"

// subscriberLinks is the handler of the confirm and unsubscribe links on st.
func subscriberLinks(t *testing.T, st subscribe.Store) http.Handler {
	t.Helper()
	links, err := subscribe.NewHandler(subscribe.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return links
}

// runNotifier runs a notifier on the harness's database, e-mailing through sink, until the
// test ends.
func runNotifier(t *testing.T, st *store.Store, sink *smtptest.Server) {
	t.Helper()
	n, err := notifier.New(notifier.Config{
		SMTPURL: sink.URL(), MailFrom: "Status <status@vantage.test>", PublicURL: testPublicURL,
		PollInterval: 20 * time.Millisecond, Workers: 2, Backoff: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}},
		notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// settle waits until the outbox is drained and no delivery is pending.
func (h *harness) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var n int
		if err := h.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM outbox WHERE delivered_at IS NULL)
			+ (SELECT count(*) FROM deliveries WHERE status = 'PENDING')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d outbox events or deliveries still pending", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// visit sends a request for an e-mailed link to the confirm/unsubscribe handler.
func visit(t *testing.T, h http.Handler, method, link string, body string) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host; got != testPublicURL {
		t.Fatalf("link %s is not on %s", link, testPublicURL)
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, u.RequestURI(), rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// subscriberState returns address → confirmed for the page's subscribers (via the API).
func (h *harness) subscriberState(t *testing.T, page string) map[string]bool {
	t.Helper()
	r := h.spCall(t, http.MethodGet, "/v1/status_pages/"+page+"/subscribers?per_page=100", nil, http.StatusOK)
	out := map[string]bool{}
	for _, s := range r.Items() {
		out[s["email_address"].(string)], _ = s["confirmed"].(bool)
	}
	return out
}

func TestSubscriberMailDoubleOptInAndUnsubscribe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	links := subscriberLinks(t, h.st)
	page := h.newPage(t, "optin")
	base := "/v1/status_pages/" + page + "/subscribers"

	h.spCall(t, http.MethodPost, base, map[string]any{"email_address": "ann@example.com"}, http.StatusCreated)
	h.settle(t)
	got := sink.WaitTo(t, "ann@example.com", 1)
	if len(got) != 1 || len(sink.Messages()) != 1 {
		t.Fatalf("want exactly one confirmation e-mail, got %d (%d in all)", len(got), len(sink.Messages()))
	}
	msg := got[0]
	if s := msg.Header.Get("Subject"); !strings.Contains(s, "Confirm your subscription to Acme optin") {
		t.Errorf("subject %q", s)
	}
	unsub := msg.Link(t, "/unsubscribe?token=")
	if lu := msg.Header.Get("List-Unsubscribe"); lu != "<"+unsub+">" {
		t.Errorf("List-Unsubscribe %q, want <%s>", lu, unsub)
	}
	if p := msg.Header.Get("List-Unsubscribe-Post"); p != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", p)
	}
	confirm := msg.Link(t, "/status/optin/confirm?token=")
	if h.subscriberState(t, page)["ann@example.com"] {
		t.Fatal("confirmed before the link was opened")
	}

	// A token of another page's path, or a made-up one, confirms nothing.
	if code, _ := visit(t, links, http.MethodGet, strings.Replace(confirm, "/optin/", "/other/", 1), ""); code != http.StatusNotFound {
		t.Errorf("confirm on another page: %d, want 404", code)
	}
	if code, _ := visit(t, links, http.MethodGet, testPublicURL+"/status/optin/confirm?token=forged", ""); code != http.StatusNotFound {
		t.Errorf("forged token: %d, want 404", code)
	}
	code, html := visit(t, links, http.MethodGet, confirm, "")
	if code != http.StatusOK || !strings.Contains(html, "Subscription confirmed") || !strings.Contains(html, `<html lang="en">`) {
		t.Fatalf("confirm: %d %s", code, html)
	}
	if !h.subscriberState(t, page)["ann@example.com"] {
		t.Fatal("not confirmed after the link was opened")
	}
	if code, _ := visit(t, links, http.MethodGet, confirm, ""); code != http.StatusNotFound {
		t.Errorf("second use of the confirmation link: %d, want 404", code)
	}

	// The unsubscribe link: GET only asks, POST (one-click, RFC 8058) unsubscribes, twice is fine.
	code, html = visit(t, links, http.MethodGet, unsub, "")
	if code != http.StatusOK || !strings.Contains(html, `<form method="post">`) || !strings.Contains(html, "ann@example.com") {
		t.Fatalf("unsubscribe page: %d %s", code, html)
	}
	if _, ok := h.subscriberState(t, page)["ann@example.com"]; !ok {
		t.Fatal("GET unsubscribed")
	}
	for i := 0; i < 2; i++ {
		if code, html := visit(t, links, http.MethodPost, unsub, "List-Unsubscribe=One-Click"); code != http.StatusOK || !strings.Contains(html, "Unsubscribed") {
			t.Fatalf("one-click unsubscribe #%d: %d %s", i+1, code, html)
		}
	}
	if _, ok := h.subscriberState(t, page)["ann@example.com"]; ok {
		t.Fatal("still subscribed after unsubscribing")
	}
	if n := h.auditCount(t, "status_page_subscriber.unsubscribed"); n != 1 {
		t.Errorf("%d unsubscribe audit events, want 1", n)
	}
}

// confirmAll confirms every subscriber of the page through their e-mailed links.
func confirmAll(t *testing.T, sink *smtptest.Server, links http.Handler, rcpts ...string) {
	t.Helper()
	for _, r := range rcpts {
		m := sink.WaitTo(t, r, 1)[0]
		if code, _ := visit(t, links, http.MethodGet, m.Link(t, "/confirm?token="), ""); code != http.StatusOK {
			t.Fatalf("confirm %s: %d", r, code)
		}
	}
}

func TestSubscriberMailIncidentNotifications(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	links := subscriberLinks(t, h.st)
	page := h.newPage(t, "notify")
	api, db := h.newComponent(t, page, "API"), h.newComponent(t, page, "Database")
	subs := "/v1/status_pages/" + page + "/subscribers"
	h.spCall(t, http.MethodPost, subs, map[string]any{"email_address": "all@example.com"}, http.StatusCreated)
	h.spCall(t, http.MethodPost, subs, map[string]any{"email_address": "api@example.com",
		"component_subscription_mode": "SELECTED_COMPONENTS", "component_ids": []string{api}}, http.StatusCreated)
	h.spCall(t, http.MethodPost, subs, map[string]any{"email_address": "db@example.com",
		"component_subscription_mode": "SELECTED_COMPONENTS", "component_ids": []string{db}}, http.StatusCreated)
	h.spCall(t, http.MethodPost, subs, map[string]any{"email_address": "pending@example.com"}, http.StatusCreated)
	confirmAll(t, sink, links, "all@example.com", "api@example.com", "db@example.com")
	h.settle(t)
	before := map[string]int{}
	for _, r := range []string{"all@example.com", "api@example.com", "db@example.com", "pending@example.com"} {
		before[r] = len(sink.To(r))
	}
	news := func(r string) []smtptest.Message { return sink.To(r)[before[r]:] }

	// An incident on API reaches everyone confirmed for it, and no one else.
	inc := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "API errors",
		"description": "Requests fail with 502.", "status": "INVESTIGATING",
		"components": []map[string]any{{"id": api, "status": "MAJOR_OUTAGE"}}}, http.StatusCreated).Result()["id"].(string)
	h.settle(t)
	for r, want := range map[string]int{"all@example.com": 1, "api@example.com": 1, "db@example.com": 0, "pending@example.com": 0} {
		if got := len(news(r)); got != want {
			t.Errorf("after the incident %s received %d e-mails, want %d", r, got, want)
		}
	}
	m := news("api@example.com")[0]
	if s := m.Header.Get("Subject"); s != "[Acme notify] API errors: Investigating" {
		t.Errorf("subject %q", s)
	}
	for _, want := range []string{"Requests fail with 502.", "API (Major outage)", "Impact: Major outage", testPublicURL + "/status/notify\n"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, m.Body)
		}
	}
	if m.Header.Get("List-Unsubscribe") != "<"+m.Link(t, "/unsubscribe?token=")+">" {
		t.Errorf("List-Unsubscribe %q", m.Header.Get("List-Unsubscribe"))
	}

	// An update without notify_subscribers e-mails no one; one with it follows the incident's
	// components (API), even though the update itself changes none.
	updates := "/v1/status_pages/" + page + "/incidents/" + inc + "/updates"
	h.spCall(t, http.MethodPost, updates, map[string]any{"status": "IDENTIFIED", "description": "quiet", "notify_subscribers": false}, http.StatusCreated)
	h.spCall(t, http.MethodPost, updates, map[string]any{"status": "RESOLVED", "description": "Fixed."}, http.StatusCreated)
	h.settle(t)
	for r, want := range map[string]int{"all@example.com": 2, "api@example.com": 2, "db@example.com": 0, "pending@example.com": 0} {
		if got := len(news(r)); got != want {
			t.Errorf("after the updates %s received %d e-mails, want %d", r, got, want)
		}
	}
	if s := news("all@example.com")[1].Header.Get("Subject"); s != "[Acme notify] API errors: Resolved" {
		t.Errorf("subject %q", s)
	}

	// An incident created with notify_subscribers false e-mails no one.
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "Silent",
		"description": "d", "status": "INVESTIGATING", "notify_subscribers": false}, http.StatusCreated)

	// Unsubscribed through a notification's link: no more e-mails.
	if code, _ := visit(t, links, http.MethodPost, news("all@example.com")[0].Link(t, "/unsubscribe?token="), "List-Unsubscribe=One-Click"); code != http.StatusOK {
		t.Fatalf("unsubscribe: %d", code)
	}
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "Database slow",
		"description": "d", "status": "INVESTIGATING", "components": []map[string]any{{"id": db, "status": "DEGRADED_PERFORMANCE"}}}, http.StatusCreated)
	h.settle(t)
	for r, want := range map[string]int{"all@example.com": 2, "api@example.com": 2, "db@example.com": 1, "pending@example.com": 0} {
		if got := len(news(r)); got != want {
			t.Errorf("at the end %s received %d e-mails, want %d", r, got, want)
		}
	}
}

func TestSubscriberMailMaintenanceFlags(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	links := subscriberLinks(t, h.st)
	page := h.newPage(t, "maintmail")
	db := h.newComponent(t, page, "Database")
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/subscribers", map[string]any{"email_address": "ops@example.com"}, http.StatusCreated)
	confirmAll(t, sink, links, "ops@example.com")

	start := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	base := "/v1/status_pages/" + page + "/scheduled_maintenance"
	// Notified at start only, and one notified at neither; both run their whole window at once.
	h.spCall(t, http.MethodPost, base, map[string]any{"title": "Upgrade", "description": "Major version.", "start_date": start,
		"duration_minutes": 5, "components_affected": []string{db}, "notifications": map[string]any{"at_start": true, "at_end": false}}, http.StatusCreated)
	h.spCall(t, http.MethodPost, base, map[string]any{"title": "Quiet", "description": "d", "start_date": start,
		"duration_minutes": 5, "notifications": map[string]any{"at_start": false, "at_end": false}}, http.StatusCreated)
	if err := statusPages(t, h.st, nil).AdvanceMaintenance(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	h.settle(t)
	got := sink.To("ops@example.com")
	if len(got) != 2 { // confirmation + maintenance started
		t.Fatalf("received %d e-mails, want 2 (confirmation, maintenance started)", len(got))
	}
	if s := got[1].Header.Get("Subject"); s != "[Acme maintmail] Maintenance in progress: Upgrade" {
		t.Errorf("subject %q", s)
	}
	if !strings.Contains(got[1].Body, "Database (Maintenance)") {
		t.Errorf("body:\n%s", got[1].Body)
	}

	// The notice an hour before: sent once when the start is within the hour, then at_end.
	soon := time.Now().Add(30 * time.Minute).UTC()
	failover := h.spCall(t, http.MethodPost, base, map[string]any{"title": "Failover", "description": "Switching regions.",
		"start_date": soon.Format(time.RFC3339), "duration_minutes": 10, "components_affected": []string{db},
		"notifications": map[string]any{"an_hour_before": true, "at_start": false, "at_end": true}}, http.StatusCreated).Result()["id"].(string)
	advance := func(want int, what string) {
		t.Helper()
		for i := 0; i < 2; i++ {
			if err := statusPages(t, h.st, nil).AdvanceMaintenance(context.Background(), time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		h.settle(t)
		if n := len(sink.To("ops@example.com")); n != want {
			t.Fatalf("received %d e-mails, want %d (%s)", n, want, what)
		}
	}
	advance(3, "+ an hour before")
	// Postponed: no notice while it is far; moved close again: a new notice.
	h.spCall(t, http.MethodPatch, base+"/"+failover, map[string]any{"start_date": soon.Add(3 * time.Hour).Format(time.RFC3339)}, http.StatusOK)
	advance(3, "postponed")
	h.spCall(t, http.MethodPatch, base+"/"+failover, map[string]any{"start_date": soon.Format(time.RFC3339)}, http.StatusOK)
	advance(4, "+ an hour before the new start")
	// The window passes (moved into the past, as outbox rows must not be dated in the future).
	if _, err := h.st.Pool().Exec(context.Background(), `UPDATE status_page_incidents SET start_date = start_date - interval '1 hour'
		WHERE title = 'Failover'`); err != nil {
		t.Fatal(err)
	}
	if err := statusPages(t, h.st, nil).AdvanceMaintenance(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	h.settle(t)
	got = sink.To("ops@example.com")
	if len(got) != 5 {
		t.Fatalf("received %d e-mails, want 5 (+ completed)", len(got))
	}
	for i, want := range map[int]string{2: "[Acme maintmail] Maintenance within the hour: Failover", 3: "[Acme maintmail] Maintenance within the hour: Failover",
		4: "[Acme maintmail] Maintenance completed: Failover"} {
		if s := got[i].Header.Get("Subject"); s != want {
			t.Errorf("e-mail %d: subject %q, want %q", i, s, want)
		}
	}
	if !strings.Contains(got[2].Body, "Scheduled: "+soon.Format("2006-01-02 15:04")+" UTC for 10 minutes") {
		t.Errorf("body:\n%s", got[2].Body)
	}
}

// TestSubscriberMailNeverTwice runs two notifiers on one database: every subscriber gets each
// e-mail exactly once.
func TestSubscriberMailNeverTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	runNotifier(t, h.st, sink)
	page := h.newPage(t, "twice")
	const n = 12
	var rcpts []string
	for i := 0; i < n; i++ {
		r := "s" + string(rune('a'+i)) + "@example.com"
		rcpts = append(rcpts, r)
		h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/subscribers", map[string]any{"email_address": r}, http.StatusCreated)
	}
	confirmAll(t, sink, subscriberLinks(t, h.st), rcpts...)
	for i := 0; i < 3; i++ {
		h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/incidents", map[string]any{"title": "Outage",
			"description": "d", "status": "INVESTIGATING"}, http.StatusCreated)
	}
	h.settle(t)
	time.Sleep(200 * time.Millisecond) // a duplicate would have had time to arrive
	for _, r := range rcpts {
		if got := len(sink.To(r)); got != 4 {
			t.Errorf("%s received %d e-mails, want 4 (confirmation and three incidents)", r, got)
		}
	}
	var delivered int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE channel = 'email' AND status = 'DELIVERED'`).Scan(&delivered); err != nil {
		t.Fatal(err)
	}
	if delivered != 4*n || len(sink.Messages()) != 4*n {
		t.Errorf("%d deliveries and %d messages, want %d", delivered, len(sink.Messages()), 4*n)
	}
}

// TestSubscriberMailSkippedAfterUnsubscribe: an e-mail fanned out to a subscriber who is gone
// by the time it is sent is not sent; the delivery is SKIPPED with the reason.
func TestSubscriberMailSkippedAfterUnsubscribe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	page := h.newPage(t, "gone")
	sub := h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/subscribers", map[string]any{"email_address": "gone@example.com"},
		http.StatusCreated).Result()["id"].(string)
	id := uuid.MustParse(sub)
	// Fan out (stage 1) only, as a notifier that then stalls would.
	res, err := h.st.DispatchOutbox(ctx, 10, time.Second, func(context.Context, store.PendingEvent) (store.Fanout, error) {
		return store.Fanout{Body: []byte(`{"data":{}}`), Mail: &store.MailFanout{SubscriberID: &id}}, nil
	})
	if err != nil || res.Deliveries != 1 {
		t.Fatalf("fan-out: %+v %v", res, err)
	}
	h.spCall(t, http.MethodDelete, "/v1/status_pages/"+page+"/subscribers/"+sub, nil, http.StatusOK)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	h.settle(t)
	var status, reason string
	if err := h.st.Pool().QueryRow(ctx, `SELECT status, last_error FROM deliveries WHERE target = $1`, id).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != store.DeliverySkipped || !strings.Contains(reason, "unsubscribed") || len(sink.Messages()) != 0 {
		t.Errorf("delivery %s (%s), %d e-mails sent", status, reason, len(sink.Messages()))
	}
}

// TestSubscriberMailRetried: an SMTP server that refuses for a while delays the e-mail, it does
// not lose it, and every attempt is recorded.
func TestSubscriberMailRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	sink.RefuseNext(2)
	runNotifier(t, h.st, sink)
	page := h.newPage(t, "retry")
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/subscribers", map[string]any{"email_address": "late@example.com"}, http.StatusCreated)
	h.settle(t)
	if got := sink.To("late@example.com"); len(got) != 1 {
		t.Fatalf("received %d e-mails, want 1", len(got))
	}
	var attempts int
	var status string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT d.status, (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id)
		FROM deliveries d WHERE d.address = 'late@example.com'`).Scan(&status, &attempts); err != nil {
		t.Fatal(err)
	}
	if status != store.DeliveryDelivered || attempts != 3 {
		t.Errorf("delivery %s after %d attempts, want DELIVERED after 3", status, attempts)
	}
}
