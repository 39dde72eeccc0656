package api

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
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
