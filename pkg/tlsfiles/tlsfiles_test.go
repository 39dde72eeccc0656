package tlsfiles

import (
	"crypto/tls"
	"math/big"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/tlsfiles/tlsfilestest"
)

// clock is a settable clock, so tests step past CheckInterval instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// serve accepts TLS connections with cfg on loopback until the test ends, completing each
// handshake, and returns its address.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if tc, ok := c.(*tls.Conn); ok && tc.Handshake() == nil {
					_, _ = tc.Write([]byte("ok"))
				}
			}()
		}
	}()
	return lis.Addr().String()
}

// dial handshakes with addr as cfg says and returns the server certificate's serial.
func dial(addr string, cfg *tls.Config) (*big.Int, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// With TLS 1.3 a refused client certificate shows on the first read.
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil {
		return nil, err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
}

func TestMutualTLS(t *testing.T) {
	ca, other := tlsfilestest.NewCA(t, "vantage"), tlsfilestest.NewCA(t, "stranger")
	srv := ca.Server("controlplane", "127.0.0.1", "cp.vantage.test")
	cfg, err := ServerConfig(srv.CertFile, srv.KeyFile, ca.CertFile, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	agent, strangerAgent := ca.Client("agent-eu"), other.Client("agent-eu")
	tests := []struct {
		name       string
		caFile     string
		pair       *tlsfilestest.Pair
		serverName string
		ok         bool
	}{
		{"client certificate of the CA", ca.CertFile, &agent, "127.0.0.1", true},
		{"by DNS name", ca.CertFile, &agent, "cp.vantage.test", true},
		{"no client certificate", ca.CertFile, nil, "127.0.0.1", false},
		{"client certificate of another CA", ca.CertFile, &strangerAgent, "127.0.0.1", false},
		{"server not signed by the trusted CA", other.CertFile, &agent, "127.0.0.1", false},
		{"another server name", ca.CertFile, &agent, "other.vantage.test", false},
		{"system roots", "", &agent, "127.0.0.1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cert, key := "", ""
			if tc.pair != nil {
				cert, key = tc.pair.CertFile, tc.pair.KeyFile
			}
			c, err := ClientConfig(tc.caFile, cert, key, tc.serverName, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = dial(addr, c)
			if (err == nil) != tc.ok {
				t.Fatalf("handshake: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestServerCertificateRotation(t *testing.T) {
	ca := tlsfilestest.NewCA(t, "vantage")
	srv := ca.Server("controlplane", "127.0.0.1")
	clk := &clock{t: time.Now()}
	var reloads []string
	var mu sync.Mutex
	cfg, err := ServerConfig(srv.CertFile, srv.KeyFile, "", Options{Now: clk.Now, OnReload: func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			what += ": " + err.Error()
		}
		reloads = append(reloads, what)
	}})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	client, err := ClientConfig(ca.CertFile, "", "", "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := tlsfilestest.Serial(t, srv.CertFile)
	if got, err := dial(addr, client); err != nil || got.Cmp(first) != 0 {
		t.Fatalf("before rotation: serial %v, %v", got, err)
	}

	next := ca.Server("controlplane-next", "127.0.0.1")
	tlsfilestest.Replace(t, srv, next)
	if got, _ := dial(addr, client); got.Cmp(first) != 0 {
		t.Errorf("files were read again within CheckInterval")
	}
	clk.Add(CheckInterval)
	if got, err := dial(addr, client); err != nil || got.Cmp(tlsfilestest.Serial(t, next.CertFile)) != 0 {
		t.Fatalf("after rotation: serial %v (%v), want the new certificate's", got, err)
	}

	// A broken file keeps the certificate in use, and is reported once.
	if err := os.WriteFile(srv.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		clk.Add(CheckInterval)
		if got, err := dial(addr, client); err != nil || got.Cmp(tlsfilestest.Serial(t, next.CertFile)) != 0 {
			t.Fatalf("with a broken file: serial %v (%v), want the last good certificate's", got, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reloads) != 2 || reloads[0] != "certificate "+srv.CertFile {
		t.Errorf("reload reports %q, want one success and one failure", reloads)
	}
}

func TestClientTrustRotation(t *testing.T) {
	oldCA, newCA := tlsfilestest.NewCA(t, "old"), tlsfilestest.NewCA(t, "new")
	srv := newCA.Server("controlplane", "127.0.0.1")
	cfg, err := ServerConfig(srv.CertFile, srv.KeyFile, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	trust := t.TempDir() + "/ca.pem"
	copyFile(t, oldCA.CertFile, trust)
	clk := &clock{t: time.Now()}
	client, err := ClientConfig(trust, "", "", "127.0.0.1", Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(addr, client); err == nil {
		t.Fatal("a server of an untrusted CA was accepted")
	}
	copyFile(t, newCA.CertFile, trust)
	clk.Add(CheckInterval)
	if _, err := dial(addr, client); err != nil {
		t.Fatalf("after the CA bundle changed: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(to+".tmp", to); err != nil {
		t.Fatal(err)
	}
}

func TestConfigErrors(t *testing.T) {
	ca := tlsfilestest.NewCA(t, "vantage")
	srv := ca.Server("cp", "127.0.0.1")
	if _, err := ServerConfig(srv.CertFile, ca.CertFile, "", Options{}); err == nil {
		t.Error("a key that is not the certificate's was accepted")
	}
	if _, err := ServerConfig(srv.CertFile, srv.KeyFile, srv.KeyFile, Options{}); err == nil {
		t.Error("a client CA file without certificates was accepted")
	}
	if _, err := ClientConfig(ca.CertFile, srv.CertFile, "", "cp", Options{}); err == nil {
		t.Error("a client certificate without its key was accepted")
	}
	if _, err := ClientConfig(ca.CertFile, "", "", "", Options{}); err == nil {
		t.Error("no server name was accepted")
	}
}
