package api

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// badgeCheck creates an uptime check of orgA whose name and target must never show in a badge,
// UP, created 40 days ago, with a 3-hour incident 5 days ago, run counters, and passing
// results of 100, 120 and 500 ms in the last hour (and a failing one of 9 s, left out).
func badgeCheck(t *testing.T, h *harness) string {
	t.Helper()
	id := ckID(t, h, "/v1/checks/uptime", map[string]any{"name": "Secret Billing Backend",
		"url": "https://billing.internal.example.com/health"})
	now := time.Now().UTC()
	ckSQL(t, h, `UPDATE checks SET state = 'UP', created_at = $2 WHERE id = $1`, id, now.Add(-40*24*time.Hour))
	ckSQL(t, h, `INSERT INTO check_incidents (id, org_id, check_id, started_at, ended_at) VALUES (gen_random_uuid(), $1, $2, $3, $4)`,
		h.orgA, id, now.Add(-5*24*time.Hour), now.Add(-5*24*time.Hour+3*time.Hour))
	ckSQL(t, h, `INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs) VALUES ($1, $2, $3, 1440, 3)`,
		h.orgA, id, now.Add(-5*24*time.Hour).Truncate(24*time.Hour))
	for i, r := range []struct {
		ms      float64
		passing bool
	}{{100, true}, {120, true}, {500, true}, {9000, false}} {
		ckSQL(t, h, `INSERT INTO check_results (id, org_id, check_id, job_id, region, attempt_number, is_final_attempt,
			checked_at, passing, response_time_ms, body_availability)
			VALUES (gen_random_uuid(), $1, $2, gen_random_uuid(), 'cloud:us-east-1', 1, true, $3, $4, $5, 'NONE')`,
			h.orgA, id, now.Add(-time.Duration(i+1)*time.Minute), r.passing, r.ms)
	}
	return id
}

// badgeSVG is what the tests read back from a badge.
type badgeSVG struct {
	XMLName xml.Name `xml:"svg"`
	Label   string   `xml:"aria-label,attr"`
	Texts   []string `xml:"g>text"`
}

// getBadge fetches a public badge without credentials, from the router as New built it (the
// badges are not in the OpenAPI document).
func getBadge(t *testing.T, h *harness, url string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec
}

// badgeURLs enables (POST) or reads (GET) a check's badge and returns its URLs as paths.
func badgeURLs(t *testing.T, h *harness, method, id string) map[string]string {
	t.Helper()
	r := h.do(method, "/v1/checks/"+id+"/badge", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["enabled"] != true {
		t.Fatalf("%s badge: %s", method, r.Raw)
	}
	out := map[string]string{}
	for k, v := range r.Result()["urls"].(map[string]any) {
		u := v.(string)
		if !strings.HasPrefix(u, "http://example.com/badges/") {
			t.Fatalf("%s url %q: want an absolute URL on the request's origin", k, u)
		}
		out[k] = strings.TrimPrefix(u, "http://example.com")
	}
	return out
}

func TestBadgeLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := badgeCheck(t, h)

	r := h.do(http.MethodGet, "/v1/checks/"+id+"/badge", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["enabled"] != false || r.Result()["urls"] != nil {
		t.Fatalf("a new check's badge: %s", r.Raw)
	}
	urls := badgeURLs(t, h, http.MethodPost, id)
	if again := badgeURLs(t, h, http.MethodPost, id); again["status"] != urls["status"] {
		t.Errorf("enabling an enabled badge changed its URL: %s, then %s", urls["status"], again["status"])
	}
	if read := badgeURLs(t, h, http.MethodGet, id); read["uptime"] != urls["uptime"] {
		t.Errorf("GET shows %s, POST answered %s", read["uptime"], urls["uptime"])
	}
	token := strings.Split(urls["status"], "/")[2]
	if len(token) != store.BadgeTokenLen || !validBadgeToken(token) {
		t.Errorf("token %q: want %d characters of base64url", token, store.BadgeTokenLen)
	}

	// Each badge renders as XML with its value, and reveals nothing of the check.
	secrets := []string{id, strings.ReplaceAll(id, "-", ""), h.orgA.String(), "Secret", "Billing", "billing.internal", "example.com/health"}
	for _, tc := range []struct{ url, label, value string }{
		{urls["status"], "status", "up"},
		{urls["uptime"], "uptime 30d", "99.58%"},
		{urls["uptime"] + "?range=7d", "uptime 7d", "98.21%"},
		{urls["response"], "response time 24h", "120 ms"},
		{urls["response"] + "?range=1h", "response time 1h", "120 ms"},
	} {
		rec := getBadge(t, h, tc.url)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", tc.url, rec.Code, rec.Body)
		}
		var svg badgeSVG
		if err := xml.Unmarshal(rec.Body.Bytes(), &svg); err != nil {
			t.Fatalf("GET %s is not XML: %v\n%s", tc.url, err, rec.Body)
		}
		if want := tc.label + ": " + tc.value; svg.Label != want || len(svg.Texts) != 4 || svg.Texts[3] != tc.value {
			t.Errorf("GET %s: aria-label %q, texts %q; want %q", tc.url, svg.Label, svg.Texts, want)
		}
		hd := rec.Header()
		for k, want := range map[string]string{"Content-Type": "image/svg+xml", "Cache-Control": "max-age=60",
			"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"} {
			if got := hd.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", tc.url, k, got, want)
			}
		}
		if hd.Get("Set-Cookie") != "" {
			t.Errorf("GET %s sets a cookie: %s", tc.url, hd.Get("Set-Cookie"))
		}
		everything := tc.url + "\n" + rec.Body.String()
		for k, v := range hd {
			everything += "\n" + k + ": " + strings.Join(v, ", ")
		}
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(everything), strings.ToLower(s)) {
				t.Errorf("GET %s reveals %q:\n%s", tc.url, s, everything)
			}
		}
	}

	// Disabled: the URLs answer 404 at once (though cached a moment ago), exactly as a token
	// that never existed does.
	r = h.do(http.MethodDelete, "/v1/checks/"+id+"/badge", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	if r.Result()["enabled"] != false || r.Result()["urls"] != nil {
		t.Fatalf("DELETE badge: %s", r.Raw)
	}
	never := getBadge(t, h, "/badges/"+strings.Repeat("A", store.BadgeTokenLen)+"/status.svg")
	for _, u := range urls {
		rec := getBadge(t, h, u)
		if rec.Code != http.StatusNotFound || rec.Body.String() != never.Body.String() ||
			rec.Header().Get("Content-Type") != never.Header().Get("Content-Type") || never.Code != http.StatusNotFound {
			t.Errorf("GET %s after DELETE: %d %q; a token that never existed: %d %q", u, rec.Code, rec.Body, never.Code, never.Body)
		}
	}
	if r := h.do(http.MethodDelete, "/v1/checks/"+id+"/badge", h.tokenA, nil); r.Status != http.StatusOK {
		t.Errorf("DELETE of a disabled badge: %d %s", r.Status, r.Raw)
	}

	// Enabled again: a new token; the old one stays 404.
	fresh := badgeURLs(t, h, http.MethodPost, id)
	if fresh["status"] == urls["status"] {
		t.Fatalf("re-enabled badge kept its old URL %s", urls["status"])
	}
	if rec := getBadge(t, h, fresh["status"]); rec.Code != http.StatusOK {
		t.Errorf("GET %s: %d", fresh["status"], rec.Code)
	}
	if rec := getBadge(t, h, urls["status"]); rec.Code != http.StatusNotFound {
		t.Errorf("old URL after re-enabling: %d", rec.Code)
	}

	// Enabling and disabling are audited, once per change (enabling an enabled badge is none).
	r = h.do(http.MethodGet, "/v1/audit_logs?search=check_badge", h.tokenA, nil)
	expectStatus(t, r, http.StatusOK)
	var actions []string
	for _, ev := range r.Items() {
		if ev["auditable_id"] != id {
			t.Errorf("audit event %v is not of the check", ev)
		}
		actions = append(actions, ev["audit_action"].(string))
	}
	if strings.Join(actions, ",") != "check_badge.enabled,check_badge.disabled,check_badge.enabled" {
		t.Errorf("audit log %v; want enabled, disabled, enabled (newest first)", actions)
	}

	// The token is stored hashed and sealed: nowhere in the database as written.
	var n int
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM check_badges
		WHERE position($1::bytea IN token_enc) > 0 OR position($1::bytea IN token_hash) > 0`,
		[]byte(strings.Split(fresh["status"], "/")[2])).Scan(&n); err != nil || n != 0 {
		t.Errorf("the plain token is in check_badges (%d rows, %v)", n, err)
	}
}

func TestBadgeStatusValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := badgeCheck(t, h)
	urls := badgeURLs(t, h, http.MethodPost, id)
	fresh := ckID(t, h, "/v1/checks/tcp", ckTCPBody())
	freshURLs := badgeURLs(t, h, http.MethodPost, fresh)
	for _, tc := range []struct {
		name, sql, url, value string
	}{
		{"down", `UPDATE checks SET state = 'DOWN' WHERE id = $1`, urls["status"], "down"},
		{"muting is not shown", `UPDATE checks SET muted = true WHERE id = $1`, urls["status"], "down"},
		{"paused", `UPDATE checks SET paused = true WHERE id = $1`, urls["status"], "paused"},
		{"new check", ``, freshURLs["status"], "pending"},
		{"new check's uptime", ``, freshURLs["uptime"], "no data"},
		{"new check's response time", ``, freshURLs["response"], "no data"},
	} {
		if tc.sql != "" {
			ckSQL(t, h, tc.sql, id)
		}
		// A fresh cache: the badge as the change left it, not as cached a moment ago.
		rec := getBadgeUncached(t, h, tc.url)
		var svg badgeSVG
		if err := xml.Unmarshal(rec.Body.Bytes(), &svg); err != nil || len(svg.Texts) != 4 || svg.Texts[3] != tc.value {
			t.Errorf("%s: GET %s = %d %q (%v), want %q", tc.name, tc.url, rec.Code, svg.Texts, err, tc.value)
		}
	}
}

// getBadgeUncached fetches a badge from a router of its own, whose cache is empty.
func getBadgeUncached(t *testing.T, h *harness, url string) *httptest.ResponseRecorder {
	t.Helper()
	handler, err := New(Deps{Store: h.st, Auth: h.auth, Registry: prometheus.NewRegistry(), Ready: h.st.Ping,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec
}

func TestBadgePermissionsAndIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := badgeCheck(t, h)
	path := "/v1/checks/" + id + "/badge"
	reader := h.token(h.orgA, string(auth.UptimeChecks)+":"+string(auth.Read))

	if r := h.do(http.MethodGet, path, reader, nil); r.Status != http.StatusOK {
		t.Errorf("GET with READ: %d %s", r.Status, r.Raw)
	}
	for _, m := range []string{http.MethodPost, http.MethodDelete} {
		if r := h.do(m, path, reader, nil); r.Status != http.StatusForbidden {
			t.Errorf("%s with READ only: %d %s", m, r.Status, r.Raw)
		}
	}
	if r := h.do(http.MethodGet, path, reader, nil); r.Result()["enabled"] != false {
		t.Errorf("a READ token enabled the badge: %s", r.Raw)
	}
	// Another organization's check, and a check that does not exist, are not found.
	for _, p := range []string{path, "/v1/checks/" + uuid.NewString() + "/badge"} {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			if r := h.do(m, p, h.tokenB, nil); r.Status != http.StatusNotFound || !strings.Contains(r.FirstError(), "not found") {
				t.Errorf("%s %s from another organization: %d %s", m, p, r.Status, r.Raw)
			}
		}
	}
	if r := h.do(http.MethodGet, path, h.tokenA, nil); r.Result()["enabled"] != false {
		t.Errorf("another organization enabled the badge: %s", r.Raw)
	}
	if r := h.do(http.MethodGet, "/v1/checks/"+id+"/badge", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("GET without a token: %d", r.Status)
	}
}

func TestBadgeBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := badgeCheck(t, h)
	urls := badgeURLs(t, h, http.MethodPost, id)
	path := "/v1/checks/" + id + "/badge"

	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"a property", map[string]any{"label": "x"}, "label"},
		{"not an object", "[1]", "body"},
		{"not JSON", "{", "body"},
	} {
		r := h.do(http.MethodPost, path, h.tokenA, tc.body)
		if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.FirstError(), tc.field+":") {
			t.Errorf("POST %s: %d %s; want a 400 naming %s", tc.name, r.Status, r.Raw, tc.field)
		}
	}
	if r := h.do(http.MethodPost, path, h.tokenA, map[string]any{}); r.Status != http.StatusOK {
		t.Errorf("POST {}: %d %s", r.Status, r.Raw)
	}
	if r := h.do(http.MethodGet, "/v1/checks/short/badge", h.tokenA, nil); r.Status != http.StatusBadRequest {
		t.Errorf("a short check id: %d %s", r.Status, r.Raw)
	}

	for _, tc := range []struct {
		url    string
		status int
	}{
		{urls["uptime"] + "?range=5m", http.StatusBadRequest},
		{urls["uptime"] + "?range=1h", http.StatusBadRequest},
		{urls["response"] + "?range=30d", http.StatusBadRequest},
		{urls["status"] + "?range=24h", http.StatusBadRequest},
		{strings.Replace(urls["status"], "status.svg", "name.svg", 1), http.StatusNotFound},
		{strings.Replace(urls["status"], "/badges/", "/badges/x", 1), http.StatusNotFound},
		{"/badges/" + strings.Repeat("%3C", store.BadgeTokenLen) + "/status.svg", http.StatusNotFound},
		{"/badges/short/status.svg", http.StatusNotFound},
	} {
		rec := getBadge(t, h, tc.url)
		if rec.Code != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.url, rec.Code, rec.Body, tc.status)
		}
		if tc.status == http.StatusBadRequest && !strings.Contains(rec.Body.String(), `"message":"range: `) {
			t.Errorf("GET %s: %s; want a failure envelope naming range", tc.url, rec.Body)
		}
	}
}

// TestBadgeInChromium opens a status badge in real headless Chromium and checks that it draws
// the green of UP.
func TestBadgeInChromium(t *testing.T) {
	exec := ""
	for _, p := range []string{"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			exec = p
			break
		}
	}
	if exec == "" {
		t.Fatal("Chromium is required: neither /usr/bin/chromium-headless-shell nor /usr/bin/chromium exists")
	}
	h := newHarness(t)
	urls := badgeURLs(t, h, http.MethodPost, badgeCheck(t, h))
	srv := httptest.NewServer(h.api)
	defer srv.Close()

	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(exec), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(300, 100))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+urls["status"])); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil || len(shot) == 0 {
		t.Fatalf("chromium screenshot (%d bytes): %v", len(shot), err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	green := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 110 && g>>8 > 170 && bl>>8 < 80 { // #4c1 under the badge's faint gradient
				green++
			}
		}
	}
	if green < 100 {
		t.Errorf("the status badge drew %d green pixels in Chromium, want the value side of an UP badge", green)
	}
}

// TestBadgeDisabledOnEveryReplicaAtOnce: two API instances on one database; a badge that B has
// cached answers 404 on B's very next request after it was disabled through A.
func TestBadgeDisabledOnEveryReplicaAtOnce(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	a, b := newReplica(t, dbURL), newReplica(t, dbURL)
	ctx := context.Background()
	org, err := a.st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewSecret()
	if _, err := a.st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: org.ID, Name: "t",
		Grants: auth.AllGrants(), SecretHash: hash}); err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, body string) map[string]any {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, req)
		var env struct{ Result map[string]any }
		if rec.Code >= 300 || json.Unmarshal(rec.Body.Bytes(), &env) != nil {
			t.Fatalf("%s %s through A: %d %s", method, path, rec.Code, rec.Body)
		}
		return env.Result
	}
	id := call(http.MethodPost, "/v1/checks/uptime", `{"name":"n","url":"https://example.com"}`)["id"].(string)
	u := call(http.MethodPost, "/v1/checks/"+id+"/badge", "")["urls"].(map[string]any)["status"].(string)
	path := u[strings.Index(u, "/badges/"):]
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		b.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, ">pending<") {
		t.Fatalf("B before the change: %d %s", code, body)
	}
	if _, err := a.st.Pool().Exec(ctx, `UPDATE checks SET state = 'DOWN' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, ">pending<") {
		t.Fatalf("B does not answer the badge from its cache (%d %s): the test would prove nothing", code, body)
	}
	call(http.MethodDelete, "/v1/checks/"+id+"/badge", "")
	if code, body := get(); code != http.StatusNotFound {
		t.Errorf("B right after the badge was disabled through A: %d %s", code, body)
	}
}
