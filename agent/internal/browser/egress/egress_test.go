package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Everything on this machine is private, so the proxy refuses it all: a CONNECT answers 403, a
// plain request gets no response at all, the target sees nothing, and Blocked says why. (The
// allowed path is tested with real Chromium in a network namespace: browser.TestPrivateTargetPolicy.)
func TestProxyRefusesPrivateTargets(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	p, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	proxyAddr := strings.TrimPrefix(p.URL(), "http://")
	host := strings.TrimPrefix(target.URL, "http://")

	c, err := net.DialTimeout("tcp", proxyAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT to a loopback address: %s, want 403", resp.Status)
	}

	proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(t, p.URL()))}, Timeout: 5 * time.Second}
	r, err := proxied.Get(strings.Replace(target.URL, "127.0.0.1", "localhost", 1) + "/secret")
	if err == nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		t.Errorf("a plain request to localhost got a response: %s %q", r.Status, b)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target got %d requests", n)
	}
	blocked := p.Blocked()
	if len(blocked) < 2 || blocked[0].Host != host || !strings.Contains(blocked[0].Reason, "127.0.0.1 is a loopback address") ||
		!strings.HasPrefix(blocked[len(blocked)-1].Host, "localhost:") {
		t.Errorf("blocked %v", blocked)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
