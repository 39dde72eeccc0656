// Package tlscert records the certificate chain a TLS server served, and whether it verifies
// for the host the check asked for. Every prober that speaks TLS (HTTPS uptime checks and TCP
// checks with tcp_tls today; gRPC and WebSocket ones alike) records its chain here, so that a result says the same thing
// about a certificate whichever kind of check saw it.
//
// Verification is done here, on the served chain, whether or not the check verifies TLS: a
// self-signed or internal certificate expires too, and the control plane watches expiry on
// every chain. A check with verify_ssl on has already failed the handshake when the chain does
// not verify; Reason names why, for its summary.
package tlscert

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"time"
)

// MaxChain is how many certificates of a chain are recorded (leaf first); a longer chain is
// cut, since what follows is of no use to expiry alerts and would only swell the result.
const MaxChain = 5

// MaxSANs is how many subject alternative names of a certificate are recorded.
const MaxSANs = 100

// Certificate is one certificate of a served chain.
type Certificate struct {
	Subject   string
	Issuer    string
	SANs      []string // DNS names, then IP addresses, at most MaxSANs
	NotBefore time.Time
	NotAfter  time.Time
	// SHA256 is the hex SHA-256 fingerprint of the DER certificate: what identifies it (a
	// renewed certificate has another one even when its subject and issuer are the same).
	SHA256 string
}

// DaysLeft is how many whole days remain until c expires at now; negative once it has.
func (c Certificate) DaysLeft(now time.Time) int {
	return int(math.Floor(c.NotAfter.Sub(now).Hours() / 24))
}

// Chain is what a TLS server served, as recorded on a result.
type Chain struct {
	Host         string        // the name the chain was verified for (the check's host)
	Certificates []Certificate // leaf first
	Verified     bool          // the chain verifies for Host against the agent's roots
	// Problem says why the chain does not verify ("" when it does): see Reason.
	Problem string
}

// Leaf is the served leaf certificate; the zero Certificate when nothing was served.
func (c Chain) Leaf() Certificate {
	if len(c.Certificates) == 0 {
		return Certificate{}
	}
	return c.Certificates[0]
}

// Record describes the chain served to a client that asked for host, verifying it against
// roots (nil: the system's roots) at now.
func Record(served []*x509.Certificate, host string, roots *x509.CertPool, now time.Time) Chain {
	out := Chain{Host: hostOnly(host)}
	for i, c := range served {
		if i == MaxChain {
			break
		}
		out.Certificates = append(out.Certificates, describe(c))
	}
	if len(served) == 0 {
		out.Problem = "no certificate served"
		return out
	}
	inter := x509.NewCertPool()
	for _, c := range served[1:] {
		inter.AddCert(c)
	}
	_, err := served[0].Verify(x509.VerifyOptions{DNSName: out.Host, Roots: roots, Intermediates: inter, CurrentTime: now})
	if err != nil {
		out.Problem = Reason(err, out.Host, served[0], now)
		return out
	}
	out.Verified = true
	return out
}

// Served returns the chain a handshake error saw, unverified (nil when the error is not a
// certificate verification failure): a check with verify_ssl on records what it refused.
func Served(err error) []*x509.Certificate {
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return ce.UnverifiedCertificates
	}
	return nil
}

// Reason names, for people, why a chain does not verify: "expired on 2026-01-02", "not valid
// before …", "unknown authority", "host mismatch for <host>", or the verifier's own words.
// leaf may be nil when the error carries no certificate; now tells an expired certificate from
// one not yet valid.
func Reason(err error, host string, leaf *x509.Certificate, now time.Time) string {
	var (
		ce  *tls.CertificateVerificationError
		inv x509.CertificateInvalidError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
	)
	if errors.As(err, &ce) && leaf == nil && len(ce.UnverifiedCertificates) > 0 {
		leaf = ce.UnverifiedCertificates[0]
	}
	switch {
	case errors.As(err, &hn):
		return "host mismatch for " + hostOnly(host)
	case errors.As(err, &ua):
		return "unknown authority"
	case errors.As(err, &inv) && inv.Reason == x509.Expired:
		// The error does not say which end of the validity was passed; the leaf's dates do.
		c := inv.Cert
		if c == nil {
			c = leaf
		}
		if c != nil && now.Before(c.NotBefore) {
			return "not valid before " + c.NotBefore.UTC().Format(time.DateOnly)
		}
		if c != nil {
			return "expired on " + c.NotAfter.UTC().Format(time.DateOnly)
		}
		return "expired"
	case errors.As(err, &inv):
		return fmt.Sprintf("invalid certificate: %s", inv.Error())
	case err != nil:
		if ce != nil && ce.Err != nil {
			return ce.Err.Error()
		}
		return err.Error()
	}
	return ""
}

func describe(c *x509.Certificate) Certificate {
	sum := sha256.Sum256(c.Raw)
	sans := make([]string, 0, len(c.DNSNames)+len(c.IPAddresses))
	sans = append(sans, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		sans = append(sans, ip.String())
	}
	if len(sans) > MaxSANs {
		sans = sans[:MaxSANs]
	}
	return Certificate{Subject: c.Subject.String(), Issuer: c.Issuer.String(), SANs: sans,
		NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(), SHA256: hex.EncodeToString(sum[:])}
}

// hostOnly strips a port and IPv6 brackets: certificates name hosts, not addresses with ports.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}
