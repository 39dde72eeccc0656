package netpolicy

import (
	"context"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDescribeNamesHostAndClassOnly makes real requests that fail in each way a delivery can —
// a closed port, a name that does not resolve, a resolver that refuses, TLS failures, a
// server that never answers, the address policy — and checks that the text a tenant reads
// names the host it gave and the class of failure, and neither the address the host resolved
// to, nor a port it did not give, nor the resolver, while Go's own error did.
func TestDescribeNamesHostAndClassOnly(t *testing.T) {
	t.Parallel()
	closedPort := closedLoopbackPort(t)
	refusingDNS := closedUDPAddr(t)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	plainSrv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(plainSrv.Close)
	silentTCP := silentListener(t)
	trusted := x509.NewCertPool()
	trusted.AddCert(tlsSrv.Certificate())

	for _, tc := range []struct {
		name     string
		url      string
		tr       func() *http.Transport
		want     string   // the text Describe gives (its beginning, for the machine's resolver)
		leakedBy []string // what Go's error said that the tenant must not read
		// deadline of the request: only the silent server needs one to fire; the others get
		// one far from their normal time, so a loaded machine does not turn them into timeouts.
		deadline time.Duration
	}{
		{"closed port", "http://localhost:" + closedPort + "/", plainTransport,
			"localhost:" + closedPort + ": connection refused", []string{"127.0.0.1", "dial tcp"}, 0},
		{"name does not resolve", "http://does-not-exist.invalid/", plainTransport,
			// No such host from a resolver that answers; the class whatever the machine's resolver does.
			"does-not-exist.invalid: DNS failure: ", []string{"lookup does-not-exist.invalid"}, 0},
		{"resolver refuses", "http://example.com/", func() *http.Transport {
			return transportWith(&net.Dialer{Resolver: &net.Resolver{PreferGo: true,
				Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "udp", refusingDNS)
				}}})
		}, "example.com: DNS failure: the lookup failed", []string{refusingDNS, "lookup example.com on"}, 0},
		{"untrusted certificate", tlsSrv.URL + "/", plainTransport,
			hostOf(tlsSrv.URL) + ": TLS: certificate signed by an unknown authority", []string{"x509"}, 0},
		{"certificate for other names", "https://localhost:" + portOf(tlsSrv.URL) + "/", func() *http.Transport {
			tr := plainTransport()
			tr.TLSClientConfig.RootCAs = trusted
			return tr
		}, "localhost:" + portOf(tlsSrv.URL) + ": TLS: certificate is not valid for this host", []string{"valid for example.com"}, 0},
		{"not TLS", "https://" + hostOf(plainSrv.URL) + "/", plainTransport,
			hostOf(plainSrv.URL) + ": TLS: the server does not speak TLS", []string{"HTTP response to HTTPS client"}, 0},
		{"never answers", "http://localhost:" + portOf(silentTCP) + "/", plainTransport,
			"localhost:" + portOf(silentTCP) + ": timeout: no answer in time", []string{"context deadline exceeded"}, time.Second},
		{"refused by policy", "http://localhost:" + portOf(plainSrv.URL) + "/", func() *http.Transport {
			return transportWith(Dialer(nil, false))
		}, "localhost:" + portOf(plainSrv.URL) + ": " + refusedByPolicy, []string{"127.0.0.1", "loopback"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deadline := tc.deadline
			if deadline == 0 {
				deadline = 30 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
			resp, err := (&http.Client{Transport: tc.tr()}).Do(req)
			if err == nil {
				_ = resp.Body.Close()
				t.Fatalf("%s answered %d", tc.url, resp.StatusCode)
			}
			got := Describe(req.URL.Host, err)
			if got != tc.want && !(strings.HasSuffix(tc.want, ": ") && strings.HasPrefix(got, tc.want)) {
				t.Fatalf("Describe = %q, want %q (the error was %q)", got, tc.want, err)
			}
			for _, leak := range tc.leakedBy {
				if !strings.Contains(err.Error(), leak) {
					t.Fatalf("the error %q does not say %q: the case no longer tests what it should", err, leak)
				}
			}
			if addr := addressIn(got, req.URL.Host); addr != "" {
				t.Fatalf("Describe = %q names the address %s", got, addr)
			}
		})
	}
}

// addressIn finds an IP address (with or without a port) in s once the host the tenant gave is
// taken out.
func addressIn(s, given string) string {
	s = strings.ReplaceAll(s, given, "")
	return regexp.MustCompile(`\d+\.\d+\.\d+\.\d+|\[?[0-9a-f]*::[0-9a-f:]*\]?|:\d{2,5}\b`).FindString(s)
}

func plainTransport() *http.Transport { return transportWith(&net.Dialer{}) }

func transportWith(d *net.Dialer) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = d.DialContext
	return tr
}

// closedLoopbackPort is a loopback port nothing listens on (it was just released).
func closedLoopbackPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(ln.Addr().String())
	_ = ln.Close()
	return port
}

// closedUDPAddr is a loopback UDP address nothing listens on (it was just released): a
// resolver there is refused.
func closedUDPAddr(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	_ = pc.Close()
	return addr
}

// silentListener accepts connections and never answers; it returns its address.
func silentListener(t *testing.T) string {
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
	return ln.Addr().String()
}

func hostOf(rawURL string) string {
	return strings.TrimPrefix(strings.TrimPrefix(rawURL, "https://"), "http://")
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(hostOf(addr))
	if _, err := strconv.Atoi(port); err != nil {
		panic("no port in " + addr)
	}
	return port
}
