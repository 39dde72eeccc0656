package prober

import (
	"crypto/tls"
	"io"
	"log"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/tlscert/tlscerttest"
)

// TestHTTPCertificates serves certificates made here and checks what a result records of the
// chain and what its summary says, with verify_ssl on and off.
func TestHTTPCertificates(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ca := tlscerttest.NewCA(t, "Vantage Test CA")
	stranger := tlscerttest.NewCA(t, "Unknown CA")
	serve := func(cert tls.Certificate) string {
		ts := httptest.NewUnstartedServer(testMux())
		ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
		ts.StartTLS()
		t.Cleanup(ts.Close)
		return ts.URL + "/status/200"
	}
	expiredAt := now.Add(-3*24*time.Hour + time.Hour)
	cases := []struct {
		name     string
		cert     tls.Certificate
		verified bool
		problem  string // the chain's problem, and the summary's reason when verify_ssl fails it
		daysLeft int
	}{
		{"expiring in 10 days", ca.Issue(t, now.Add(-time.Hour), now.Add(10*24*time.Hour+time.Hour), "127.0.0.1"), true, "", 10},
		{"expired", ca.Issue(t, now.Add(-30*24*time.Hour), expiredAt, "127.0.0.1"), false,
			"expired on " + expiredAt.UTC().Format(time.DateOnly), -3},
		{"wrong host", ca.Issue(t, now.Add(-time.Hour), now.Add(60*24*time.Hour+time.Hour), "www.example.test"), false,
			"host mismatch for 127.0.0.1", 60},
		{"unknown CA", stranger.Issue(t, now.Add(-time.Hour), now.Add(20*24*time.Hour+time.Hour), "127.0.0.1"), false,
			"unknown authority", 20},
	}
	for _, tc := range cases {
		url := serve(tc.cert)
		for _, verify := range []bool{true, false} {
			name := tc.name + map[bool]string{true: ", verify_ssl on", false: ", verify_ssl off"}[verify]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				job := uptime(url)
				job.GetHttp().VerifySsl = verify
				res := run(t, NewHTTP(WithRootCAs(ca.Pool())), job, 5*time.Second)
				if verify && !tc.verified {
					wantFail(t, res, SourceTransport, TLSError)
					wantSummary(t, res, "TLS error: "+tc.problem, "certificate CN=")
				} else {
					wantPass(t, res)
				}
				c := res.TLS
				if c == nil {
					t.Fatal("no certificate chain recorded")
				}
				if c.Verified != tc.verified || c.Problem != tc.problem || c.Host != "127.0.0.1" {
					t.Errorf("chain verified %v, problem %q, host %q; want %v, %q", c.Verified, c.Problem, c.Host, tc.verified, tc.problem)
				}
				leaf := c.Leaf()
				if !leaf.NotAfter.Equal(tc.cert.Leaf.NotAfter) || leaf.Subject != tc.cert.Leaf.Subject.String() ||
					leaf.Issuer != tc.cert.Leaf.Issuer.String() || len(c.Certificates) != 2 {
					t.Errorf("leaf %+v (of %d) does not describe the served %s", leaf, len(c.Certificates), tc.cert.Leaf.Subject)
				}
				if d := leaf.DaysLeft(time.Now()); d != tc.daysLeft {
					t.Errorf("days left %d, want %d", d, tc.daysLeft)
				}
				if len(leaf.SANs) != 1 || leaf.SHA256 == "" {
					t.Errorf("SANs %v, fingerprint %q", leaf.SANs, leaf.SHA256)
				}
			})
		}
	}
	t.Run("plain HTTP records no chain", func(t *testing.T) {
		t.Parallel()
		res := run(t, NewHTTP(), uptime(newHTTPServer(t).URL+"/status/200"), 5*time.Second)
		wantPass(t, res)
		if res.TLS != nil {
			t.Errorf("chain %+v on plain HTTP", res.TLS)
		}
	})
}
