// Package netpolicy is Vantage's one outbound address policy: which addresses a connection
// made on behalf of a user (a probe, a webhook delivery, any future outbound call) may reach
// when private targets are denied. It refuses every range of the IANA special-purpose address
// registries (IPv4 and IPv6), multicast, and every IPv6 address outside global unicast
// (2000::/3), and it looks inside the forms that carry an IPv4 address (IPv4-mapped,
// IPv4-compatible, SIIT-translated, NAT64, 6to4, Teredo), so that no spelling of a private
// address gets through.
//
// The policy is applied where a socket connects, after name resolution, on the very address
// being dialled (Dialer, Control), so neither a name that resolves to a private address nor DNS
// rebinding gets around it.
//
// Describe is the one text a user reads about an outbound request that failed: the host they
// gave and the class of the failure, never the address it resolved to or the resolver asked.
package netpolicy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrForbidden marks a connection refused by the policy.
var ErrForbidden = errors.New("private targets are not allowed")

// Dialer returns a net.Dialer using resolver that refuses non-public addresses unless
// allowPrivate. Timeouts and keep-alive are left for the caller to set.
func Dialer(resolver *net.Resolver, allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Resolver: resolver}
	if !allowPrivate {
		d.Control = Control
	}
	return d
}

// Control is a net.Dialer Control function refusing non-public addresses: it runs after name
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
	if why := Range(a); why != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrForbidden, a.Unmap(), why)
	}
	return nil
}

// Range names the non-public range a is in, or returns "" for a public address.
func Range(a netip.Addr) string {
	a = a.WithZone("")
	if !a.IsValid() {
		return "invalid"
	}
	if a.Is4In6() { // the IPv4 address itself, as sockets treat it
		return Range(a.Unmap())
	}
	if a.Is4() {
		return lookup(ipv4Ranges, a)
	}
	if why := lookup(ipv6Ranges, a); why != "" {
		return why
	}
	// 6to4 carries the IPv4 address of its relay in bits 16-47: refused when that address is.
	if sixToFour.Contains(a) {
		b := a.As16()
		if why := Range(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); why != "" {
			return "6to4 " + why
		}
		return ""
	}
	if !globalUnicast.Contains(a) {
		return "non-global-unicast (outside 2000::/3)"
	}
	return ""
}

func lookup(ranges []namedRange, a netip.Addr) string {
	for _, r := range ranges {
		if r.prefix.Contains(a) {
			return r.name
		}
	}
	return ""
}

type namedRange struct {
	prefix netip.Prefix
	name   string
}

func ranges(pairs ...string) []namedRange {
	out := make([]namedRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, namedRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

var (
	sixToFour     = netip.MustParsePrefix("2002::/16")
	globalUnicast = netip.MustParsePrefix("2000::/3")

	// ipv4Ranges is the IANA IPv4 Special-Purpose Address Registry, whole (the ranges the
	// registry marks globally reachable too: nobody monitors an anycast relay, and an
	// allow-list is safer than an exception list), plus multicast and the reserved 240/4.
	// The first match names the range, so narrower ranges come before the ones holding them.
	ipv4Ranges = ranges(
		"0.0.0.0/8", "this-network", // RFC 791
		"10.0.0.0/8", "private", // RFC 1918
		"100.64.0.0/10", "shared carrier-grade NAT", // RFC 6598
		"127.0.0.0/8", "loopback", // RFC 1122
		"169.254.0.0/16", "link-local", // RFC 3927
		"172.16.0.0/12", "private", // RFC 1918
		"192.0.0.0/24", "IETF protocol assignment", // RFC 6890
		"192.0.2.0/24", "documentation TEST-NET-1", // RFC 5737
		"192.31.196.0/24", "AS112-v4", // RFC 7535
		"192.52.193.0/24", "AMT", // RFC 7450
		"192.88.99.0/24", "deprecated 6to4 relay anycast", // RFC 7526
		"192.168.0.0/16", "private", // RFC 1918
		"192.175.48.0/24", "AS112 direct delegation", // RFC 7534
		"198.18.0.0/15", "benchmarking", // RFC 2544
		"198.51.100.0/24", "documentation TEST-NET-2", // RFC 5737
		"203.0.113.0/24", "documentation TEST-NET-3", // RFC 5737
		"224.0.0.0/4", "multicast", // RFC 5771
		"255.255.255.255/32", "limited-broadcast", // RFC 919
		"240.0.0.0/4", "reserved", // RFC 1112
	)

	// ipv6Ranges is the IANA IPv6 Special-Purpose Address Registry, whole, with the forms
	// that embed an IPv4 address refused outright (IPv4-compatible and SIIT are deprecated,
	// and a NAT64 gateway reaches whatever IPv4 address it is given, private ones included).
	// IPv4-mapped addresses and 6to4 are judged by the address they carry (Range).
	ipv6Ranges = ranges(
		"::1/128", "loopback", // RFC 4291
		"::/128", "unspecified", // RFC 4291
		"::ffff:0:0:0/96", "IPv4-translated SIIT", // RFC 2765
		"::/96", "IPv4-compatible", // RFC 4291, deprecated
		"64:ff9b::/96", "NAT64 IPv4-IPv6 translation", // RFC 6052
		"64:ff9b:1::/48", "local-use IPv4/IPv6 translation", // RFC 8215
		"100::/64", "discard-only", // RFC 6666
		"100:0:0:1::/64", "dummy IPv6 prefix", // RFC 9780
		"2001::/32", "Teredo", // RFC 4380
		"2001::/23", "IETF protocol assignment", // RFC 2928
		"2001:db8::/32", "documentation", // RFC 3849
		"2620:4f:8000::/48", "AS112 direct delegation", // RFC 7534
		"3fff::/20", "documentation", // RFC 9637
		"5f00::/16", "SRv6 SID", // RFC 9602
		"fc00::/7", "unique-local", // RFC 4193
		"fe80::/10", "link-local", // RFC 4291
		"fec0::/10", "site-local", // RFC 3879, deprecated
		"ff00::/8", "multicast", // RFC 4291
	)
)
