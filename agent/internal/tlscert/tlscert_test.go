package tlscert_test

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/tlscert"
	"github.com/vantagehq/vantage/agent/internal/tlscert/tlscerttest"
)

func TestRecord(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ca := tlscerttest.NewCA(t, "Vantage Test CA")
	other := tlscerttest.NewCA(t, "Someone Else")
	chainOf := func(c tls.Certificate) []*x509.Certificate {
		out := make([]*x509.Certificate, len(c.Certificate))
		for i, der := range c.Certificate {
			crt, err := x509.ParseCertificate(der)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = crt
		}
		return out
	}
	cases := []struct {
		name     string
		cert     tls.Certificate
		host     string
		roots    *x509.CertPool
		verified bool
		problem  string
		daysLeft int
	}{
		{"valid, ten days left", ca.Issue(t, now.Add(-time.Hour), now.Add(10*24*time.Hour+time.Hour), "shop.example", "192.0.2.7"),
			"shop.example:443", ca.Pool(), true, "", 10},
		{"expired", ca.Issue(t, now.Add(-48*time.Hour), now.Add(-23*time.Hour), "shop.example"),
			"shop.example", ca.Pool(), false, "expired on " + now.Add(-23*time.Hour).UTC().Format(time.DateOnly), -1},
		{"not yet valid", ca.Issue(t, now.Add(24*time.Hour), now.Add(48*time.Hour), "shop.example"),
			"shop.example", ca.Pool(), false, "not valid before " + now.Add(24*time.Hour).UTC().Format(time.DateOnly), 1},
		{"wrong host", ca.Issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "other.example"),
			"shop.example", ca.Pool(), false, "host mismatch for shop.example", 89},
		{"unknown authority", other.Issue(t, now.Add(-time.Hour), now.Add(30*24*time.Hour+time.Hour), "shop.example"),
			"shop.example", ca.Pool(), false, "unknown authority", 30},
		{"IPv6 host in brackets", ca.Issue(t, now.Add(-time.Hour), now.Add(48*time.Hour), "2001:db8::1"),
			"[2001:db8::1]:8443", ca.Pool(), true, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			served := chainOf(tc.cert)
			got := tlscert.Record(served, tc.host, tc.roots, now)
			if got.Verified != tc.verified || got.Problem != tc.problem {
				t.Errorf("verified %v, problem %q; want %v, %q", got.Verified, got.Problem, tc.verified, tc.problem)
			}
			if len(got.Certificates) != len(served) {
				t.Fatalf("%d certificates recorded, want %d", len(got.Certificates), len(served))
			}
			leaf := got.Leaf()
			if leaf.Subject != served[0].Subject.String() || leaf.Issuer != served[0].Issuer.String() ||
				!leaf.NotAfter.Equal(served[0].NotAfter) || !leaf.NotBefore.Equal(served[0].NotBefore) {
				t.Errorf("leaf %+v does not describe %s", leaf, served[0].Subject)
			}
			if d := leaf.DaysLeft(now); d != tc.daysLeft {
				t.Errorf("days left %d, want %d", d, tc.daysLeft)
			}
			if len(leaf.SHA256) != 64 || leaf.SHA256 == got.Certificates[1].SHA256 {
				t.Errorf("fingerprint %q", leaf.SHA256)
			}
			if got.Certificates[1].Subject != "CN="+served[1].Subject.CommonName {
				t.Errorf("issuer certificate %q", got.Certificates[1].Subject)
			}
		})
	}
	t.Run("SANs and host", func(t *testing.T) {
		t.Parallel()
		got := tlscert.Record(chainOf(ca.Issue(t, now.Add(-time.Hour), now.Add(time.Hour), "a.example", "b.example", "192.0.2.7")), "a.example:443", ca.Pool(), now)
		if strings.Join(got.Leaf().SANs, ",") != "a.example,b.example,192.0.2.7" || got.Host != "a.example" {
			t.Errorf("SANs %v, host %q", got.Leaf().SANs, got.Host)
		}
	})
	t.Run("renewal changes the fingerprint", func(t *testing.T) {
		t.Parallel()
		a := tlscert.Record(chainOf(ca.Issue(t, now.Add(-time.Hour), now.Add(time.Hour), "a.example")), "a.example", ca.Pool(), now)
		b := tlscert.Record(chainOf(ca.Issue(t, now.Add(-time.Hour), now.Add(time.Hour), "a.example")), "a.example", ca.Pool(), now)
		if a.Leaf().SHA256 == b.Leaf().SHA256 {
			t.Error("two certificates with one fingerprint")
		}
	})
	t.Run("nothing served", func(t *testing.T) {
		t.Parallel()
		if got := tlscert.Record(nil, "a.example", nil, now); got.Verified || got.Problem == "" || got.Leaf().SHA256 != "" {
			t.Errorf("%+v", got)
		}
	})
}
