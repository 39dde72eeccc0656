package prober

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// errForbiddenTarget marks a connection refused by WithPrivateTargets(false).
var errForbiddenTarget = netpolicy.ErrForbidden

// errTooManyRedirects stops an HTTP probe after MaxRedirects redirects.
var errTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)

// classify sorts a network error into a failure type (all of source TRANSPORT). ctx is the
// attempt's context: once its deadline has passed, whatever error that caused is a TIMEOUT.
func classify(ctx context.Context, err error) string {
	var (
		dnsErr      *net.DNSError
		certErr     *tls.CertificateVerificationError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidCert x509.CertificateInvalidError
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
		netErr      net.Error
	)
	switch {
	case errors.Is(err, errForbiddenTarget):
		return ForbiddenTarget
	case errors.Is(err, errTooManyRedirects):
		return TooManyRedirects
	case errors.Is(ctx.Err(), context.DeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, os.ErrDeadlineExceeded):
		return Timeout
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return Timeout
		}
		return DNSError
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr),
		errors.As(err, &invalidCert), errors.As(err, &recordErr), errors.As(err, &alertErr):
		return TLSError
	case errors.Is(err, syscall.ECONNREFUSED):
		return ConnectionRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ConnectionReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTDOWN), errors.Is(err, syscall.ENETDOWN):
		return HostUnreachable
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ConnectionClosed
	case errors.As(err, &netErr) && netErr.Timeout():
		return Timeout
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: "), strings.Contains(msg, "x509: "),
		strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return TLSError
	case strings.Contains(msg, "malformed HTTP"), strings.Contains(msg, "unsupported protocol scheme"):
		return InvalidResponse
	}
	return ConnectionError
}

// describe is the summary of a transport failure: a phrase for the failure type, then the
// error without the url.Error wrapper (which repeats the URL).
func describe(failureType string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	phrase := map[string]string{
		Timeout:           "timed out",
		ConnectionRefused: "connection refused",
		ConnectionReset:   "connection reset",
		ConnectionClosed:  "connection closed by the server",
		HostUnreachable:   "host unreachable",
		DNSError:          "DNS resolution failed",
		TLSError:          "TLS error",
		TooManyRedirects:  "too many redirects",
		InvalidResponse:   "invalid response",
		ForbiddenTarget:   "target not allowed",
	}[failureType]
	if phrase == "" {
		phrase = "connection failed"
	}
	return phrase + ": " + err.Error()
}

// dialer returns a net.Dialer that applies the private-target rule when guard is set.
func (o options) dialer(guard bool) *net.Dialer {
	return netpolicy.Dialer(o.resolver, !guard || o.allowPrivate)
}
