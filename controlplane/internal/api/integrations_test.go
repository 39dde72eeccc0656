package api

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// newIntegration stores an integration of org (through the store) and returns its id.
func (h *harness) newIntegration(org uuid.UUID, typ string) string {
	h.t.Helper()
	set := integration.Settings{"webhook_url": "https://hooks.example.com/services/T/B/secret-token"}
	switch typ {
	case integration.Telegram:
		set = integration.Settings{"bot_token": "123:secret", "chat_id": "42"}
	case integration.Pushover:
		set = integration.Settings{"app_token": "app-secret", "user_key": "user-secret"}
	case integration.IncidentIO:
		set = integration.Settings{"url": "https://api.incident.io/v2/alert_events/http/src", "token": "inc-secret"}
	case integration.Oncall:
		set = integration.Settings{"routing_key": "pd-secret"}
	}
	set, errs := integration.Validate(typ, set)
	if len(errs) > 0 {
		h.t.Fatal(errs)
	}
	in, err := h.st.CreateIntegration(context.Background(), store.SystemActor, org,
		store.NewIntegration{Name: typ, Type: typ, Settings: set})
	if err != nil {
		h.t.Fatal(err)
	}
	return in.ID.String()
}

func TestIntegrationLifecycleAndRedaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	page := h.do(http.MethodPost, "/v1/status_pages", h.tokenA, map[string]any{"name": "Acme", "subdomain": "acme-int"})
	expectStatus(t, page, http.StatusCreated)
	pageID := page.Result()["id"].(string)

	r := h.do(http.MethodPost, "/v1/integrations", h.tokenA, map[string]any{"name": "  Ops chat ", "type": "SLACK",
		"settings":        map[string]any{"webhook_url": "https://hooks.slack.com/services/T0/B0/very-secret-token"},
		"status_page_ids": []string{pageID}})
	expectStatus(t, r, http.StatusCreated)
	res := r.Result()
	id := res["id"].(string)
	set := res["settings"].(map[string]any)
	if res["name"] != "Ops chat" || res["type"] != "SLACK" || set["webhook_url"] != "https://hooks.slack.com/[redacted]" {
		t.Fatalf("create: %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), "very-secret-token") {
		t.Fatalf("the secret leaked: %s", r.Raw)
	}
	if sp := res["status_pages"].([]any); len(sp) != 1 || sp[0].(map[string]any)["id"] != pageID {
		t.Fatalf("status_pages: %s", r.Raw)
	}

	// Telegram: the default API URL is filled in, the token redacted, the chat id shown.
	tg := h.do(http.MethodPost, "/v1/integrations", h.tokenA, map[string]any{"name": "tg", "type": "TELEGRAM",
		"settings": map[string]any{"bot_token": "123456:tok", "chat_id": "-100"}})
	expectStatus(t, tg, http.StatusCreated)
	if s := tg.Result()["settings"].(map[string]any); s["bot_token"] != "[redacted]" || s["chat_id"] != "-100" ||
		s["api_url"] != integration.DefaultTelegramAPI {
		t.Fatalf("telegram: %s", tg.Raw)
	}

	g := h.do(http.MethodGet, "/v1/integrations/"+id, h.tokenA, nil)
	expectStatus(t, g, http.StatusOK)
	l := h.do(http.MethodGet, "/v1/integrations?type=SLACK", h.tokenA, nil)
	expectStatus(t, l, http.StatusOK)
	if items := l.Items(); len(items) != 1 || items[0]["id"] != id {
		t.Fatalf("list by type: %s", l.Raw)
	}

	// PATCH: the redacted form sent back keeps the secret; a new name changes.
	p := h.do(http.MethodPatch, "/v1/integrations/"+id, h.tokenA, map[string]any{"name": "Renamed",
		"settings": map[string]any{"webhook_url": "https://hooks.slack.com/[redacted]"}})
	expectStatus(t, p, http.StatusOK)
	stored, err := h.st.GetIntegration(context.Background(), h.orgA, uuid.MustParse(id))
	if err != nil || stored.Settings["webhook_url"] != "https://hooks.slack.com/services/T0/B0/very-secret-token" || stored.Name != "Renamed" {
		t.Fatalf("after PATCH: %+v %v", stored, err)
	}
	// The settings are sealed at rest.
	var enc []byte
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT settings_enc FROM integrations WHERE id = $1`, id).Scan(&enc); err != nil ||
		strings.Contains(string(enc), "very-secret-token") {
		t.Fatalf("settings are not sealed: %v", err)
	}
	// The audit log names the integration, never its settings.
	var audits string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT string_agg(coalesce(metadata::text, '') || auditable_display_name, ' ')
		FROM audit_events WHERE org_id = $1`, h.orgA).Scan(&audits); err != nil || strings.Contains(audits, "very-secret-token") {
		t.Fatalf("audit: %q %v", audits, err)
	}

	d := h.do(http.MethodGet, "/v1/integrations/"+id+"/deliveries", h.tokenA, nil)
	expectStatus(t, d, http.StatusOK)
	del := h.do(http.MethodDelete, "/v1/integrations/"+id, h.tokenA, nil)
	expectStatus(t, del, http.StatusOK)
	expectStatus(t, h.do(http.MethodGet, "/v1/integrations/"+id, h.tokenA, nil), http.StatusNotFound)
}

func TestIntegrationValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.newIntegration(h.orgA, integration.Slack)
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"no body fields", http.MethodPost, "/v1/integrations", map[string]any{}, "name: is required"},
		{"unknown type", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "IRC", "settings": map[string]any{}},
			"type: must be one of SLACK, DISCORD, MICROSOFT_TEAMS, TELEGRAM, PUSHOVER, INCIDENT_IO, ONCALL"},
		{"missing setting", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "ONCALL", "settings": map[string]any{}},
			"settings.routing_key: is required"},
		{"bad URL", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "DISCORD",
			"settings": map[string]any{"webhook_url": "ftp://discord.com/api/webhooks/1/x"}}, "settings.webhook_url: must be an absolute http(s) URL"},
		{"unknown setting", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "SLACK",
			"settings": map[string]any{"webhook_url": "https://h.example/x", "channel": "#ops"}}, "settings.channel: is not a setting of SLACK"},
		{"setting not a string", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "TELEGRAM",
			"settings": map[string]any{"bot_token": "1:a", "chat_id": 42}}, "settings.chat_id: must be a string"},
		{"token with a slash", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "TELEGRAM",
			"settings": map[string]any{"bot_token": "1:a/../x", "chat_id": "1"}}, "settings.bot_token: must not contain"},
		{"short secret", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "PUSHOVER",
			"settings": map[string]any{"app_token": "at", "user_key": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"}},
			"settings.app_token: must be at least 8 characters"},
		{"settings not an object", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "SLACK", "settings": "x"},
			"settings: must be"},
		{"unknown property", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "SLACK",
			"settings": map[string]any{"webhook_url": "https://h.example/x"}, "channel": "#ops"}, "channel: unknown property"},
		{"unknown status page", http.MethodPost, "/v1/integrations", map[string]any{"name": "x", "type": "SLACK",
			"settings": map[string]any{"webhook_url": "https://h.example/x"}, "status_page_ids": []string{uuid.NewString()}},
			"status_page_ids: unknown status page"},
		{"type on PATCH", http.MethodPatch, "/v1/integrations/" + id, map[string]any{"type": "DISCORD"}, "type: cannot be changed"},
		{"empty PATCH", http.MethodPatch, "/v1/integrations/" + id, map[string]any{}, "must change at least one field"},
		{"required setting cleared", http.MethodPatch, "/v1/integrations/" + id, map[string]any{"settings": map[string]any{"webhook_url": nil}},
			"settings.webhook_url: is required"},
		{"bad type filter", http.MethodGet, "/v1/integrations?type=irc", nil, "type: must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, h.tokenA, tc.body)
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("errors %q, want %q", r.ErrorText(), tc.want)
			}
		})
	}
}

// TestAlertListsNameIntegrations: the *_alerts lists of checks and heartbeats take only
// integrations of their type in the organization, and an integration named by one cannot be
// deleted (409 naming them) until it is removed there.
func TestAlertListsNameIntegrations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slack := h.newIntegration(h.orgA, integration.Slack)
	pd := h.newIntegration(h.orgA, integration.Oncall)
	other := h.newIntegration(h.orgB, integration.Slack)

	for _, tc := range []struct {
		name  string
		field string
		ids   []string
		want  string
	}{
		{"unknown id", "slack_alerts", []string{uuid.NewString()}, "slack_alerts: unknown integration"},
		{"not an id", "discord_alerts", []string{"d1"}, "discord_alerts: unknown integration d1"},
		{"another organization's", "slack_alerts", []string{other}, "slack_alerts: unknown integration"},
		{"wrong type", "slack_alerts", []string{pd}, "slack_alerts: integration " + pd + " is of type ONCALL, not SLACK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/checks/uptime", h.tokenA, ckWith(ckUptimeBody(), tc.field, tc.ids))
			expectStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Fatalf("check: %q, want %q", r.ErrorText(), tc.want)
			}
			hb := h.do(http.MethodPost, "/v1/heartbeats", h.tokenA, map[string]any{"name": "hb", "report_period": 3600,
				"grace_period": 60, tc.field: tc.ids})
			expectStatus(t, hb, http.StatusBadRequest)
			if !strings.Contains(hb.ErrorText(), tc.want) {
				t.Fatalf("heartbeat: %q, want %q", hb.ErrorText(), tc.want)
			}
		})
	}

	chk := ckID(t, h, "/v1/checks/uptime", ckWith(ckUptimeBody(), "name", "api", "slack_alerts", []string{slack}, "oncall_alerts", []string{pd}))
	hb := h.do(http.MethodPost, "/v1/heartbeats", h.tokenA, map[string]any{"name": "backup", "report_period": 3600,
		"grace_period": 60, "oncall_alerts": []string{pd}})
	expectStatus(t, hb, http.StatusCreated)
	hbID := hb.Result()["id"].(string)

	r := h.do(http.MethodDelete, "/v1/integrations/"+pd, h.tokenA, nil)
	expectStatus(t, r, http.StatusConflict)
	if msg := r.ErrorText(); !strings.Contains(msg, `check "api" (`+chk+`)`) || !strings.Contains(msg, `heartbeat "backup" (`+hbID+`)`) ||
		!strings.Contains(msg, "oncall_alerts") {
		t.Fatalf("409 must name the users: %q", msg)
	}
	expectStatus(t, h.do(http.MethodPatch, "/v1/checks/uptime/"+chk, h.tokenA, map[string]any{"oncall_alerts": []string{}}), http.StatusOK)
	expectStatus(t, h.do(http.MethodPatch, "/v1/heartbeats/"+hbID, h.tokenA, map[string]any{"oncall_alerts": []string{}}), http.StatusOK)
	expectStatus(t, h.do(http.MethodDelete, "/v1/integrations/"+pd, h.tokenA, nil), http.StatusOK)
	// A PATCH that leaves the lists alone is not judged on them again.
	expectStatus(t, h.do(http.MethodPatch, "/v1/checks/uptime/"+chk, h.tokenA, map[string]any{"name": "api2"}), http.StatusOK)
}

func TestIntegrationsOrgScopingAndPermissions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	idA := h.newIntegration(h.orgA, integration.Discord)
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		r := h.do(m, "/v1/integrations/"+idA, h.tokenB, map[string]any{"name": "mine"})
		if m == http.MethodGet || m == http.MethodDelete {
			r = h.do(m, "/v1/integrations/"+idA, h.tokenB, nil)
		}
		expectStatus(t, r, http.StatusNotFound)
	}
	expectStatus(t, h.do(http.MethodPost, "/v1/integrations/"+idA+"/test", h.tokenB, nil), http.StatusNotFound)
	expectStatus(t, h.do(http.MethodGet, "/v1/integrations/"+idA+"/deliveries", h.tokenB, nil), http.StatusNotFound)
	if l := h.do(http.MethodGet, "/v1/integrations", h.tokenB, nil); len(l.Items()) != 0 {
		t.Fatalf("org B sees org A's integrations: %s", l.Raw)
	}

	read := h.token(h.orgA, "INTEGRATIONS:READ")
	expectStatus(t, h.do(http.MethodGet, "/v1/integrations/"+idA, read, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodPost, "/v1/integrations/"+idA+"/test", read, nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodDelete, "/v1/integrations/"+idA, read, nil), http.StatusForbidden)
	expectStatus(t, h.do(http.MethodPost, "/v1/integrations", read, map[string]any{"name": "x", "type": "SLACK",
		"settings": map[string]any{"webhook_url": "https://h.example/x"}}), http.StatusForbidden)
	none := h.token(h.orgA, "WEBHOOKS:EDIT")
	expectStatus(t, h.do(http.MethodGet, "/v1/integrations", none, nil), http.StatusForbidden)
}

// TestIntegrationTestMessage: POST /v1/integrations/{id}/test sends a marked test message now
// and returns what the provider answered, refusals included, with secrets redacted.
func TestIntegrationTestMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got []string
	status := http.StatusOK
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":` + map[bool]string{true: "true", false: "false"}[status == 200] + `,"echo":"` + r.URL.Path + `"}`))
	}))
	defer fake.Close()
	r := h.do(http.MethodPost, "/v1/integrations", h.tokenA, map[string]any{"name": "tg", "type": "TELEGRAM",
		"settings": map[string]any{"bot_token": "777:topsecret", "chat_id": "1", "api_url": fake.URL}})
	expectStatus(t, r, http.StatusCreated)
	id := r.Result()["id"].(string)

	res := h.do(http.MethodPost, "/v1/integrations/"+id+"/test", h.tokenA, nil)
	expectStatus(t, res, http.StatusOK)
	out := res.Result()
	if out["delivered"] != true || out["status_code"] != float64(200) || out["error"] != nil || len(got) != 1 ||
		!strings.Contains(got[0], "[TEST]") {
		t.Fatalf("test: %s (fake got %v)", res.Raw, got)
	}
	if strings.Contains(string(res.Raw), "topsecret") {
		t.Fatalf("the bot token leaked through the echoed path: %s", res.Raw)
	}

	status = http.StatusUnauthorized
	res = h.do(http.MethodPost, "/v1/integrations/"+id+"/test", h.tokenA, nil)
	expectStatus(t, res, http.StatusOK)
	out = res.Result()
	if out["delivered"] != false || out["status_code"] != float64(401) || !strings.Contains(out["error"].(string), "HTTP 401") {
		t.Fatalf("refused test: %s", res.Raw)
	}

	// No answer at all (issue 20, F7): the error names the host given and the class of the
	// failure, not the address "localhost" resolved to.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	expectStatus(t, h.do(http.MethodPatch, "/v1/integrations/"+id, h.tokenA, map[string]any{"settings": map[string]any{
		"api_url": "http://localhost:" + port, "bot_token": "777:topsecret"}}), http.StatusOK)
	res = h.do(http.MethodPost, "/v1/integrations/"+id+"/test", h.tokenA, nil)
	expectStatus(t, res, http.StatusOK)
	if out = res.Result(); out["delivered"] != false || out["status_code"] != nil || out["error"] != "localhost:"+port+": connection refused" {
		t.Fatalf("test to a closed port: %s", res.Raw)
	}
}

// capture is a local HTTP server that records everything each request carried (path, query,
// headers, body) and answers 200.
type capture struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var hdr strings.Builder
		_ = r.Header.Write(&hdr)
		c.mu.Lock()
		c.got = append(c.got, r.URL.String()+"\n"+hdr.String()+"\n"+string(b))
		c.mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true,"status":1}`))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *capture) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// TestIntegrationURLMoveNeedsSecrets (issue 20, F2): with INTEGRATIONS:EDIT alone, moving an
// integration's URL setting to a host the caller controls must not make the stored secrets go
// there. A PATCH that changes a URL setting's scheme, host or port without giving every secret
// again is a 400 naming them, and the test message keeps going to the old destination; given
// again, the move is accepted and only the new secrets reach the new host; a path-only change
// needs no secret.
func TestIntegrationURLMoveNeedsSecrets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	edit := h.token(h.orgA, "INTEGRATIONS:EDIT")
	for _, tc := range []struct {
		typ      string
		urlField string
		path     string // of the URL setting
		secrets  map[string]string
		others   map[string]string
	}{
		{integration.Telegram, "api_url", "", map[string]string{"bot_token": "777:stored-bot-token"}, map[string]string{"chat_id": "42"}},
		{integration.Pushover, "api_url", "/1/messages.json",
			map[string]string{"app_token": "stored-app-token", "user_key": "stored-user-key"}, nil},
		{integration.IncidentIO, "url", "/v2/alert_events/http/src", map[string]string{"token": "stored-incident-token"}, nil},
		{integration.Oncall, "events_url", "/v2/enqueue", map[string]string{"routing_key": "stored-routing-key"}, nil},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			legit, attacker := newCapture(t), newCapture(t)
			settings := map[string]any{tc.urlField: legit.URL + tc.path}
			for k, v := range tc.secrets {
				settings[k] = v
			}
			for k, v := range tc.others {
				settings[k] = v
			}
			r := h.do(http.MethodPost, "/v1/integrations", h.tokenA, map[string]any{"name": "x", "type": tc.typ, "settings": settings})
			expectStatus(t, r, http.StatusCreated)
			id := r.Result()["id"].(string)
			path := "/v1/integrations/" + id

			// Moved without the secrets, or with them sent back redacted: 400 naming each.
			redacted := map[string]any{tc.urlField: attacker.URL + tc.path}
			for k := range tc.secrets {
				redacted[k] = "[redacted]"
			}
			for _, moved := range []map[string]any{{tc.urlField: attacker.URL + tc.path}, redacted} {
				r = h.do(http.MethodPatch, path, edit, map[string]any{"settings": moved})
				expectStatus(t, r, http.StatusBadRequest)
				for k := range tc.secrets {
					want := "settings." + k + ": must be given again when settings." + tc.urlField + " moves to another scheme, host or port"
					if !strings.Contains(string(r.Raw), want) {
						t.Fatalf("PATCH without %s: %s", k, r.Raw)
					}
				}
			}
			res := h.do(http.MethodPost, path+"/test", edit, nil)
			expectStatus(t, res, http.StatusOK)
			if res.Result()["delivered"] != true || len(legit.requests()) == 0 || len(attacker.requests()) != 0 {
				t.Fatalf("after the refused moves the test went elsewhere: %s (legit %d, attacker %d)", res.Raw,
					len(legit.requests()), len(attacker.requests()))
			}

			// A path on the same origin: no secret needed.
			r = h.do(http.MethodPatch, path, edit, map[string]any{"settings": map[string]any{tc.urlField: legit.URL + "/proxy" + tc.path}})
			expectStatus(t, r, http.StatusOK)

			// Moved with every secret given again: accepted, and only the new ones arrive.
			fresh := map[string]any{tc.urlField: attacker.URL + tc.path}
			for k := range tc.secrets {
				fresh[k] = "new-" + k + "-value"
			}
			r = h.do(http.MethodPatch, path, edit, map[string]any{"settings": fresh})
			expectStatus(t, r, http.StatusOK)
			res = h.do(http.MethodPost, path+"/test", edit, nil)
			expectStatus(t, res, http.StatusOK)
			got := attacker.requests()
			if res.Result()["delivered"] != true || len(got) == 0 {
				t.Fatalf("test after the move: %s", res.Raw)
			}
			for _, req := range got {
				for _, old := range tc.secrets {
					if strings.Contains(req, old) {
						t.Fatalf("the stored secret reached the new host: %q", req)
					}
				}
			}
		})
	}
}
