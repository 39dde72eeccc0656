package netpolicy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
)

// Describe is what a user may read about an outbound request made for them that failed with
// err: the host they gave, then the class of the failure — refused by policy, DNS failure,
// connection refused, timeout, TLS with its reason, … It never repeats err's own text, which
// names the address the host resolved to ("dial tcp 10.1.2.3:443"), the resolver that was asked
// ("lookup x on 10.255.255.53:53") or the local socket: a tenant must not learn the
// deployment's network through the errors of its webhooks and integrations.
func Describe(host string, err error) string {
	return host + ": " + class(err)
}

// Phrases of the classes Describe names.
const (
	refusedByPolicy = "refused by policy: the address is private, loopback, link-local or special-purpose, which this deployment does not allow"
	dnsNotFound     = "DNS failure: no such host"
	dnsTimeout      = "DNS failure: the lookup timed out"
	dnsFailure      = "DNS failure: the lookup failed"
	timedOut        = "timeout: no answer in time"
	connRefused     = "connection refused"
	connReset       = "connection reset"
	hostUnreachable = "host unreachable"
	connClosed      = "connection closed by the server"
	connFailed      = "connection failed"
	tlsUnknownCA    = "TLS: certificate signed by an unknown authority"
	tlsWrongHost    = "TLS: certificate is not valid for this host"
	tlsExpired      = "TLS: certificate has expired or is not yet valid"
	tlsInvalidCert  = "TLS: certificate is not valid"
	tlsNotTLS       = "TLS: the server does not speak TLS"
	tlsServerAlert  = "TLS: the server refused the handshake ("
	tlsHandshake    = "TLS: handshake failed"
)

// class names the kind of failure of err from fixed phrases; the order matters where one error
// is several things (a DNS lookup that timed out is a DNS failure).
func class(err error) string {
	var (
		dnsErr      *net.DNSError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidCert x509.CertificateInvalidError
		recordErr   tls.RecordHeaderError
		opErr       *net.OpError
		netErr      net.Error
	)
	switch {
	case errors.Is(err, ErrForbidden):
		return refusedByPolicy
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return dnsNotFound
		case dnsErr.IsTimeout:
			return dnsTimeout
		}
		return dnsFailure
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return timedOut
	case errors.As(err, &unknownAuth):
		return tlsUnknownCA
	case errors.As(err, &hostErr):
		return tlsWrongHost
	case errors.As(err, &invalidCert):
		if invalidCert.Reason == x509.Expired {
			return tlsExpired
		}
		return tlsInvalidCert
	case errors.As(err, &recordErr):
		return tlsNotTLS
	case errors.As(err, &opErr) && opErr.Op == "remote error": // a TLS alert from the server; its name is fixed text
		return tlsServerAlert + strings.TrimPrefix(opErr.Err.Error(), "tls: ") + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return connRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return connReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTDOWN), errors.Is(err, syscall.ENETDOWN):
		return hostUnreachable
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return connClosed
	case errors.As(err, &netErr) && netErr.Timeout():
		return timedOut
	}
	// Errors without a type of their own: matched on their fixed wording, never copied.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return tlsNotTLS
	case strings.Contains(msg, "tls: "), strings.Contains(msg, "x509: "):
		return tlsHandshake
	}
	return connFailed
}
