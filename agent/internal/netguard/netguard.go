// Package netguard is the agent's private-target policy: with VANTAGE_ALLOW_PRIVATE_TARGETS
// false, no probe may connect to a loopback, private, link-local, carrier-grade NAT, multicast
// or unspecified address. The policy is applied where a socket connects, after name
// resolution, on the very address being dialled, so neither a name that resolves to a private
// address nor DNS rebinding gets around it. The HTTP, TCP and browser probes all dial through
// it (the browser through its egress proxy).
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrForbidden marks a connection refused by the policy.
var ErrForbidden = errors.New("private targets are not allowed")

// Dialer returns a net.Dialer using resolver that refuses private addresses unless
// allowPrivate.
func Dialer(resolver *net.Resolver, allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Resolver: resolver}
	if !allowPrivate {
		d.Control = Control
	}
	return d
}

// Control is a net.Dialer Control function refusing private addresses: it runs after name
// resolution, on the address the socket is about to connect to.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot tell what %q is", ErrForbidden, address)
	}
	return Check(ap.Addr())
}

// Check returns an error wrapping ErrForbidden when a is not a public address.
func Check(a netip.Addr) error {
	if why := PrivateRange(a); why != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrForbidden, a.Unmap(), why)
	}
	return nil
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT, RFC 6598
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // RFC 1122 "this network"
)

// PrivateRange names the non-public range a is in, or returns "".
func PrivateRange(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	case sharedSpace.Contains(a):
		return "shared (carrier-grade NAT)"
	}
	return ""
}
