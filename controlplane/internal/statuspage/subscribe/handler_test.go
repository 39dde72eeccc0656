package subscribe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/subscribe"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// setup makes a page named name at subdomain "acme" with one subscriber and returns the store,
// the subscriber's links' tokens, and the handler mounted as a parent mux would mount it.
func setup(t *testing.T, name string) (*store.Store, store.SubscriberMail, http.Handler) {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	org, err := st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := statuspage.New(statuspage.Config{}, statuspage.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	page, err := pages.CreateStatusPage(ctx, store.SystemActor, org.ID, store.StatusPageInput{Name: name, Subdomain: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	pageID := uuid.MustParse(page.ID)
	sub, err := pages.CreateSubscriber(ctx, store.SystemActor, org.ID, pageID,
		store.NewSubscriber{EmailAddress: "kim@example.com", Mode: statuspage.AllComponents, ComponentIDs: []uuid.UUID{}})
	if err != nil {
		t.Fatal(err)
	}
	mail, err := st.SubscriberMail(ctx, org.ID, uuid.MustParse(sub.ID))
	if err != nil {
		t.Fatal(err)
	}
	links, err := subscribe.NewHandler(subscribe.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/status/", links)
	return st, mail, mux
}

func do(t *testing.T, h http.Handler, method, target, form string) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if form != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestSubscriberLinks(t *testing.T) {
	t.Parallel()
	_, tokens, h := setup(t, `Acme <script>alert(1)</script>`)
	confirm := "/status/acme/confirm?token=" + url.QueryEscape(tokens.ConfirmToken)
	unsub := "/status/acme/unsubscribe?token=" + url.QueryEscape(tokens.UnsubscribeToken)

	for _, tc := range []struct {
		name, method, target, form string
		status                     int
		contains                   string
	}{
		{"confirm without token", "GET", "/status/acme/confirm", "", 400, "Link not valid"},
		{"confirm on another page", "GET", "/status/other/confirm?token=" + tokens.ConfirmToken, "", 404, "Link not valid"},
		{"unsubscribe token does not confirm", "GET", "/status/acme/confirm?token=" + tokens.UnsubscribeToken, "", 404, "Link not valid"},
		{"confirm", "GET", confirm, "", 200, "kim@example.com will now receive e-mail updates"},
		{"confirm twice", "GET", confirm, "", 404, "Link not valid"},
		{"subdomain case does not matter", "GET", "/status/ACME/unsubscribe?token=" + tokens.UnsubscribeToken, "", 200, "Stop e-mail updates"},
		{"unsubscribe asks first", "GET", unsub, "", 200, `<button type="submit">Unsubscribe kim@example.com</button>`},
		{"confirm token does not unsubscribe", "POST", "/status/acme/unsubscribe?token=" + tokens.ConfirmToken, "", 200, "receives no e-mail updates"},
		{"still subscribed", "GET", unsub, "", 200, "Stop e-mail updates"},
		{"unsubscribe via the form", "POST", "/status/acme/unsubscribe", "token=" + url.QueryEscape(tokens.UnsubscribeToken), 200, "kim@example.com will receive no more e-mail updates"},
		{"one-click again", "POST", unsub, "List-Unsubscribe=One-Click", 200, "Unsubscribed"},
		{"gone", "GET", unsub, "", 404, "Link not valid"},
		{"other method", "DELETE", unsub, "", 405, ""},
		{"other path", "GET", "/status/acme/nothing", "", 404, ""},
	} {
		rec := do(t, h, tc.method, tc.target, tc.form)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.contains) {
			t.Fatalf("%s: %d %s; want %d with %q", tc.name, rec.Code, rec.Body, tc.status, tc.contains)
		}
		if tc.contains == "" {
			continue
		}
		if strings.Contains(rec.Body.String(), "<script>") {
			t.Fatalf("%s: page name not escaped: %s", tc.name, rec.Body)
		}
		for k, v := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", tc.name, k, got, v)
			}
		}
	}
}
