package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// txtServer is a real DNS server on 127.0.0.1 (UDP) answering TXT queries from records.
type txtServer struct {
	mu      sync.Mutex
	records map[string][]string // fully qualified name → TXT values
	addr    string
}

func startTXTServer(t *testing.T) *txtServer {
	t.Helper()
	s := &txtServer{records: map[string][]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		s.mu.Lock()
		values, ok := s.records[strings.ToLower(q.Question[0].Name)]
		s.mu.Unlock()
		if !ok {
			m.Rcode = dns.RcodeNameError
		} else if q.Question[0].Qtype == dns.TypeTXT {
			for _, v := range values {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 0}, Txt: []string{v}})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

func (s *txtServer) set(name string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[dns.Fqdn(strings.ToLower(name))] = values
}

// lookupTXT resolves through the server only.
func (s *txtServer) lookupTXT(ctx context.Context, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", s.addr)
	}}
	return r.LookupTXT(ctx, name)
}

// TestCustomDomainVerifiedByDNS walks the custom domain flow against a real DNS server: a page
// does not answer on its custom domain until the TXT record with its token is published and
// verified; a changed domain needs a new record.
func TestCustomDomainVerifiedByDNS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dnsSrv := startTXTServer(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	pages := statusPages(t, h.st, nil)
	public := publicSite(t, h.st, web.Config{StatusDomain: "status.vantage.test", APIHost: "api.vantage.test", CacheTTL: -1},
		web.Deps{Store: pages, Logger: logger})
	api, err := New(Deps{Logger: logger, Store: h.st, Auth: h.auth, Registry: prometheus.NewRegistry(), Now: time.Now,
		Ready: h.st.Ping, Public: public, LookupTXT: dnsSrv.lookupTXT})
	if err != nil {
		t.Fatal(err)
	}
	h.handler = validated(t, api)
	visit := func(host string) int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec.Code
	}

	id := h.spCall(t, http.MethodPost, "/v1/status_pages", map[string]any{"name": "Acme", "subdomain": "acme-dns",
		"custom_domain": "https://Status.Acme.test/"}, http.StatusCreated).Result()["id"].(string)
	d := h.spCall(t, http.MethodGet, "/v1/status_pages/"+id+"/custom_domain", nil, http.StatusOK).Result()
	name, value := d["record_name"].(string), d["record_value"].(string)
	if d["status"] != "PENDING" || name != "_vantage-challenge.status.acme.test" || !strings.HasPrefix(value, "vantage-domain-verification=") ||
		d["record_type"] != "TXT" || d["verified_at"] != nil {
		t.Fatalf("before verification: %v", d)
	}
	if code := visit("status.acme.test"); code != http.StatusNotFound {
		t.Fatalf("unverified custom domain answered %d", code)
	}

	// No record, then a wrong one: still PENDING, with the problem said.
	v := h.spCall(t, http.MethodPost, "/v1/status_pages/"+id+"/custom_domain/verify", nil, http.StatusOK).Result()
	if v["status"] != "PENDING" || !strings.Contains(v["problem"].(string), name) {
		t.Fatalf("verify without a record: %v", v)
	}
	// The failed lookup is named by its class, never by the resolver that answered it.
	if p := v["problem"].(string); strings.Contains(p, dnsSrv.addr) || !strings.Contains(p, "DNS failure") {
		t.Fatalf("verify without a record: the problem %q names the resolver %s or no class of failure", p, dnsSrv.addr)
	}
	dnsSrv.set(name, "vantage-domain-verification=not-the-token", "v=spf1 -all")
	if v := h.spCall(t, http.MethodPost, "/v1/status_pages/"+id+"/custom_domain/verify", nil, http.StatusOK).Result(); v["status"] != "PENDING" {
		t.Fatalf("verify with a wrong record: %v", v)
	}
	if code := visit("status.acme.test"); code != http.StatusNotFound {
		t.Fatalf("custom domain with a wrong record answered %d", code)
	}

	// The right record: VERIFIED, and the page answers on the domain.
	dnsSrv.set(name, "v=spf1 -all", value)
	v = h.spCall(t, http.MethodPost, "/v1/status_pages/"+id+"/custom_domain/verify", nil, http.StatusOK).Result()
	if v["status"] != "VERIFIED" || v["verified_at"] == nil || v["problem"] != nil {
		t.Fatalf("verify with the record: %v", v)
	}
	if code := visit("status.acme.test"); code != http.StatusOK {
		t.Fatalf("verified custom domain answered %d", code)
	}
	// Other organizations see nothing of it.
	expectStatus(t, h.do(http.MethodPost, "/v1/status_pages/"+id+"/custom_domain/verify", h.tokenB, nil), http.StatusNotFound)

	// A new domain: a new token, PENDING again; neither host answers until it is verified.
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+id, map[string]any{"name": "Acme", "subdomain": "acme-dns",
		"custom_domain": "https://status.acme2.test"}, http.StatusOK)
	d = h.spCall(t, http.MethodGet, "/v1/status_pages/"+id+"/custom_domain", nil, http.StatusOK).Result()
	if d["status"] != "PENDING" || d["record_value"] == value {
		t.Fatalf("after a domain change: %v", d)
	}
	if visit("status.acme.test") != http.StatusNotFound || visit("status.acme2.test") != http.StatusNotFound {
		t.Fatal("a changed domain answers before verification")
	}
	// Keeping the same domain keeps the verification.
	dnsSrv.set(d["record_name"].(string), d["record_value"].(string))
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+id+"/custom_domain/verify", nil, http.StatusOK)
	h.spCall(t, http.MethodPatch, "/v1/status_pages/"+id, map[string]any{"name": "Acme renamed", "subdomain": "acme-dns",
		"custom_domain": "status.acme2.test"}, http.StatusOK)
	if visit("status.acme2.test") != http.StatusOK {
		t.Fatal("an unchanged domain lost its verification")
	}

	// A page without a custom domain has nothing to verify.
	plain := h.newPage(t, "plain-dns")
	if d := h.spCall(t, http.MethodGet, "/v1/status_pages/"+plain+"/custom_domain", nil, http.StatusOK).Result(); d["status"] != "NONE" {
		t.Fatalf("no domain: %v", d)
	}
	h.spCall(t, http.MethodPost, "/v1/status_pages/"+plain+"/custom_domain/verify", nil, http.StatusBadRequest)
}

// runWebhooks runs a notifier on st, without e-mail, until the test ends.
func runWebhooks(t *testing.T, st *store.Store) {
	t.Helper()
	n, err := notifier.New(notifier.Config{PollInterval: 20 * time.Millisecond}, notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// domainHarness is the harness whose API verifies custom domains through dnsSrv, with a second
// paid organization (custom domains need a paid plan), and a way to visit a host.
type domainHarness struct {
	*harness
	dns    *txtServer
	orgC   uuid.UUID
	tokenC string
	visit  func(host string) int
}

func newDomainHarness(t *testing.T) *domainHarness {
	t.Helper()
	h := newHarness(t)
	d := &domainHarness{harness: h, dns: startTXTServer(t)}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	public := publicSite(t, h.st, web.Config{StatusDomain: "status.vantage.test", APIHost: "api.vantage.test", CacheTTL: -1},
		web.Deps{Store: statusPages(t, h.st, nil), Logger: logger})
	api, err := New(Deps{Logger: logger, Store: h.st, Auth: h.auth, Registry: prometheus.NewRegistry(), Now: h.now,
		Ready: h.st.Ping, Public: public, LookupTXT: d.dns.lookupTXT})
	if err != nil {
		t.Fatal(err)
	}
	h.handler = validated(t, api)
	d.visit = func(host string) int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec.Code
	}
	c, err := h.st.CreateOrganization(context.Background(), "Org C", "paid")
	if err != nil {
		t.Fatal(err)
	}
	d.orgC, d.tokenC = c.ID, h.token(c.ID, auth.AllGrants()...)
	return d
}

// claim creates a page of token's organization claiming domain and returns its id.
func (d *domainHarness) claim(t *testing.T, token, subdomain, domain string) string {
	t.Helper()
	r := d.do(http.MethodPost, "/v1/status_pages", token, map[string]any{"name": "Page " + subdomain, "subdomain": subdomain,
		"custom_domain": "https://" + domain})
	expectStatus(t, r, http.StatusCreated)
	return r.Result()["id"].(string)
}

// publish publishes page's challenge record (read through the API as token's organization).
func (d *domainHarness) publish(t *testing.T, token, page string) {
	t.Helper()
	r := d.do(http.MethodGet, "/v1/status_pages/"+page+"/custom_domain", token, nil)
	expectStatus(t, r, http.StatusOK)
	d.dns.set(r.Result()["record_name"].(string), r.Result()["record_value"].(string))
}

// domainStatus is a page's custom domain verification as token's organization sees it.
func (d *domainHarness) domainStatus(t *testing.T, token, page string) map[string]any {
	t.Helper()
	r := d.do(http.MethodGet, "/v1/status_pages/"+page+"/custom_domain", token, nil)
	expectStatus(t, r, http.StatusOK)
	return r.Result()
}

// outboxEvents counts the events of type typ queued in org for page.
func (d *domainHarness) outboxEvents(t *testing.T, org uuid.UUID, typ, page string) int {
	t.Helper()
	var n int
	if err := d.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE org_id = $1 AND event_type = $2
		AND status_page_id = $3 AND payload->'status_page'->>'id' = $3::text`, org, typ, page).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCustomDomainUnverifiedClaimsCoexist: an unverified claim of a domain neither keeps
// another organization from claiming it nor tells it that the domain is claimed (the old code
// answered the second claim 409 custom_domain_taken). The first page to verify takes the
// domain; the other claim goes back to NONE, told with status_page.custom_domain_released;
// then the domain is exclusive.
func TestCustomDomainUnverifiedClaimsCoexist(t *testing.T) {
	t.Parallel()
	d := newDomainHarness(t)
	squat := d.claim(t, d.tokenA, "squatter", "status.owner.test")
	owner := d.claim(t, d.tokenC, "owner", "status.owner.test")
	if s := d.domainStatus(t, d.tokenA, squat); s["status"] != "PENDING" {
		t.Fatalf("first claim: %v", s)
	}
	if s := d.domainStatus(t, d.tokenC, owner); s["status"] != "PENDING" {
		t.Fatalf("second claim: %v", s)
	}
	// A PATCH to the same domain is a claim too, and coexists as well.
	other := d.claim(t, d.tokenA, "other", "status.elsewhere.test")
	d.spCall(t, http.MethodPatch, "/v1/status_pages/"+other, map[string]any{"name": "Other", "subdomain": "other",
		"custom_domain": "status.owner.test"}, http.StatusOK)

	// Org A hears of lost claims through a webhook.
	hooks := make(chan []byte, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	t.Cleanup(rcv.Close)
	expectStatus(t, d.do(http.MethodPost, "/v1/webhooks", d.tokenA, map[string]any{"url": rcv.URL,
		"events": []string{"status_page.custom_domain_released"}, "status_page_ids": []string{squat}}), http.StatusCreated)

	// The owner proves control and verifies: the domain is theirs, the other claims are NONE.
	d.publish(t, d.tokenC, owner)
	v := d.do(http.MethodPost, "/v1/status_pages/"+owner+"/custom_domain/verify", d.tokenC, nil)
	expectStatus(t, v, http.StatusOK)
	if v.Result()["status"] != "VERIFIED" {
		t.Fatalf("owner's verification: %v", v.Result())
	}
	if code := d.visit("status.owner.test"); code != http.StatusOK {
		t.Fatalf("verified domain answered %d", code)
	}
	for _, page := range []string{squat, other} {
		if s := d.domainStatus(t, d.tokenA, page); s["status"] != "NONE" || s["custom_domain"] != nil {
			t.Errorf("released claim of page %s: %v", page, s)
		}
		if n := d.outboxEvents(t, d.orgA, "status_page.custom_domain_released", page); n != 1 {
			t.Errorf("page %s: %d status_page.custom_domain_released events, want 1", page, n)
		}
		if p := d.spCall(t, http.MethodGet, "/v1/status_pages/"+page, nil, http.StatusOK).Result(); p["custom_domain"] != nil {
			t.Errorf("released page %s still shows custom_domain %v", page, p["custom_domain"])
		}
	}
	if n := d.outboxEvents(t, d.orgC, "status_page.custom_domain_released", owner); n != 0 {
		t.Errorf("the verifying page was told it lost the domain (%d events)", n)
	}
	runWebhooks(t, d.st)
	told := map[string]bool{}
	for range 2 {
		select {
		case b := <-hooks:
			var doc struct {
				Type string `json:"type"`
				Data struct {
					StatusPage   struct{ ID, Name string } `json:"status_page"`
					CustomDomain string                    `json:"custom_domain"`
				} `json:"data"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || doc.Type != "status_page.custom_domain_released" ||
				doc.Data.CustomDomain != "status.owner.test" || doc.Data.StatusPage.Name == "" {
				t.Fatalf("webhook document %s (%v)", b, err)
			}
			told[doc.Data.StatusPage.ID] = true
		case <-time.After(15 * time.Second):
			t.Fatalf("the webhook was told of %d released claims, want 2", len(told))
		}
	}
	if !told[squat] || !told[other] {
		t.Errorf("the webhook was told of %v, want %s and %s", told, squat, other)
	}

	// Verifying a released claim has nothing to verify.
	expectStatus(t, d.do(http.MethodPost, "/v1/status_pages/"+squat+"/custom_domain/verify", d.tokenA, nil), http.StatusBadRequest)

	// Now the domain is exclusive: a new claim, on create or PATCH, is a 409.
	r := d.do(http.MethodPost, "/v1/status_pages", d.tokenA, map[string]any{"name": "Again", "subdomain": "again",
		"custom_domain": "status.owner.test"})
	expectStatus(t, r, http.StatusConflict)
	if !strings.Contains(string(r.Raw), "custom_domain_taken") {
		t.Errorf("claim of a verified domain: %s", r.Raw)
	}
	expectStatus(t, d.do(http.MethodPatch, "/v1/status_pages/"+squat, d.tokenA, map[string]any{"name": "Squat", "subdomain": "squatter",
		"custom_domain": "status.owner.test"}), http.StatusConflict)
	// The owner keeps editing its page with its domain.
	expectStatus(t, d.do(http.MethodPatch, "/v1/status_pages/"+owner, d.tokenC, map[string]any{"name": "Owner", "subdomain": "owner",
		"custom_domain": "status.owner.test"}), http.StatusOK)
	if s := d.domainStatus(t, d.tokenC, owner); s["status"] != "VERIFIED" {
		t.Fatalf("owner after PATCH: %v", s)
	}
}

// TestCustomDomainRecheck: a verified domain is looked up again every DomainRecheck; its
// record missing for less than DomainGrace changes nothing, found again it starts over, and
// missing for DomainGrace the domain is PENDING again (the page no longer answers on it), told
// once with status_page.custom_domain_unverified even when two replicas re-check at once.
func TestCustomDomainRecheck(t *testing.T) {
	t.Parallel()
	d := newDomainHarness(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	d.setNow(t0)
	page := d.claim(t, d.tokenA, "recheck", "status.recheck.test")
	d.publish(t, d.tokenA, page)
	d.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/custom_domain/verify", nil, http.StatusOK)
	record := d.domainStatus(t, d.tokenA, page)
	name, value := record["record_name"].(string), record["record_value"].(string)

	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	replica := func() *statuspage.Service {
		s, err := statuspage.New(statuspage.Config{DomainRecheck: time.Hour, DomainGrace: 72 * time.Hour},
			statuspage.Deps{Store: d.st, Now: clock, LookupTXT: d.dns.lookupTXT, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	replicas := []*statuspage.Service{replica(), replica()}
	recheckAt := func(at time.Time) {
		t.Helper()
		mu.Lock()
		now = at
		mu.Unlock()
		var wg sync.WaitGroup
		errs := make([]error, len(replicas))
		for i, r := range replicas {
			wg.Go(func() { errs[i] = r.RecheckDomains(context.Background()) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	expect := func(step, status string, code int) {
		t.Helper()
		if s := d.domainStatus(t, d.tokenA, page); s["status"] != status {
			t.Fatalf("%s: status %v, want %s", step, s["status"], status)
		}
		if got := d.visit("status.recheck.test"); got != code {
			t.Fatalf("%s: the domain answered %d, want %d", step, got, code)
		}
	}

	d.dns.set(name) // the record is removed
	recheckAt(t0.Add(30 * time.Minute))
	expect("not due yet", "VERIFIED", http.StatusOK)
	recheckAt(t0.Add(time.Hour)) // missing since t0+1h
	expect("missing for a moment", "VERIFIED", http.StatusOK)
	recheckAt(t0.Add(72 * time.Hour)) // missing for 71 hours
	expect("missing within the grace period", "VERIFIED", http.StatusOK)
	d.dns.set(name, value)
	recheckAt(t0.Add(73 * time.Hour)) // found again: the grace period starts over
	expect("found again", "VERIFIED", http.StatusOK)
	d.dns.set(name)
	recheckAt(t0.Add(74 * time.Hour)) // missing since t0+74h
	recheckAt(t0.Add(145 * time.Hour))
	expect("missing for 71 hours since it was found", "VERIFIED", http.StatusOK)
	if n := d.outboxEvents(t, d.orgA, "status_page.custom_domain_unverified", page); n != 0 {
		t.Fatalf("%d events before the grace period ended", n)
	}
	recheckAt(t0.Add(146 * time.Hour)) // missing for the grace period
	expect("missing for the grace period", "PENDING", http.StatusNotFound)
	recheckAt(t0.Add(148 * time.Hour))
	if n := d.outboxEvents(t, d.orgA, "status_page.custom_domain_unverified", page); n != 1 {
		t.Fatalf("%d status_page.custom_domain_unverified events, want 1", n)
	}
	// The owner publishes the record again and verifies: VERIFIED again.
	d.dns.set(name, value)
	d.spCall(t, http.MethodPost, "/v1/status_pages/"+page+"/custom_domain/verify", nil, http.StatusOK)
	expect("verified again", "VERIFIED", http.StatusOK)
}
