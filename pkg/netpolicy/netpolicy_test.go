package netpolicy

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// TestRange walks every special-purpose range of the IANA registries (first and last address
// of each, and the forms that embed an IPv4 address) and public addresses on either side.
func TestRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr string
		want string // a substring of the range's name; "" for public
	}{
		// IPv4 special-purpose registry.
		{"0.0.0.0", "this-network"}, {"0.255.255.255", "this-network"}, {"0.1.2.3", "this-network"},
		{"10.0.0.0", "private"}, {"10.255.255.255", "private"},
		{"100.64.0.0", "carrier-grade"}, {"100.127.255.255", "carrier-grade"},
		{"127.0.0.1", "loopback"}, {"127.255.255.254", "loopback"},
		{"169.254.169.254", "link-local"}, {"169.254.0.0", "link-local"},
		{"172.16.0.0", "private"}, {"172.31.255.255", "private"},
		{"192.0.0.0", "IETF"}, {"192.0.0.8", "IETF"}, {"192.0.0.9", "IETF"}, {"192.0.0.10", "IETF"}, {"192.0.0.170", "IETF"}, {"192.0.0.255", "IETF"},
		{"192.0.2.1", "TEST-NET-1"},
		{"192.31.196.1", "AS112-v4"},
		{"192.52.193.1", "AMT"},
		{"192.88.99.1", "6to4 relay"},
		{"192.168.0.1", "private"}, {"192.168.255.255", "private"},
		{"192.175.48.1", "AS112"},
		{"198.18.0.0", "benchmarking"}, {"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "TEST-NET-2"},
		{"203.0.113.9", "TEST-NET-3"},
		{"224.0.0.1", "multicast"}, {"239.255.255.255", "multicast"},
		{"240.0.0.1", "reserved"}, {"255.255.255.254", "reserved"},
		{"255.255.255.255", "broadcast"},
		// Public IPv4 on the edges of the ranges.
		{"1.1.1.1", ""}, {"8.8.8.8", ""}, {"9.255.255.255", ""}, {"11.0.0.0", ""},
		{"100.63.255.255", ""}, {"100.128.0.0", ""}, {"172.15.255.255", ""}, {"172.32.0.0", ""},
		{"192.0.1.255", ""}, {"192.0.3.0", ""}, {"192.167.255.255", ""}, {"192.169.0.0", ""},
		{"198.17.255.255", ""}, {"198.20.0.0", ""}, {"223.255.255.255", ""},
		// IPv6 special-purpose registry.
		{"::1", "loopback"}, {"::", "unspecified"},
		{"::ffff:0:10.0.0.1", "SIIT"}, {"::ffff:0:8.8.8.8", "SIIT"},
		{"::10.0.0.1", "IPv4-compatible"}, {"::127.0.0.1", "IPv4-compatible"}, {"::8.8.8.8", "IPv4-compatible"},
		{"64:ff9b::10.0.0.1", "NAT64"}, {"64:ff9b::127.0.0.1", "NAT64"}, {"64:ff9b::8.8.8.8", "NAT64"},
		{"64:ff9b:1::a00:1", "translation"}, {"64:ff9b:1:ffff::1", "translation"},
		{"100::1", "discard"},
		{"100:0:0:1::1", "dummy"},
		{"2001::1", "Teredo"}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"2001:1::1", "IETF"}, {"2001:2::1", "IETF"}, {"2001:3::1", "IETF"}, {"2001:4:112::1", "IETF"},
		{"2001:10::1", "IETF"}, {"2001:20::1", "IETF"}, {"2001:30::1", "IETF"}, {"2001:1ff:ffff::1", "IETF"},
		{"2001:db8::1", "documentation"}, {"2001:db8:ffff::1", "documentation"},
		{"2620:4f:8000::1", "AS112"},
		{"3fff::1", "documentation"}, {"3fff:fff:ffff::1", "documentation"},
		{"5f00::1", "SRv6"},
		{"fc00::1", "unique-local"}, {"fd12:3456::1", "unique-local"},
		{"fe80::1", "link-local"}, {"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"}, {"ff0e::1", "multicast"},
		{"4000::1", "non-global"}, {"e000::1", "non-global"},
		// IPv4-mapped forms are judged by the address they carry.
		{"::ffff:10.0.0.1", "private"}, {"::ffff:127.0.0.1", "loopback"},
		{"::ffff:0.0.0.1", "this-network"}, {"::ffff:169.254.169.254", "link-local"},
		{"::ffff:100.64.1.1", "shared"}, {"::ffff:8.8.8.8", ""},
		// 6to4 is judged by the relay address it embeds.
		{"2002:0a00:0001::1", "6to4 private"}, {"2002:7f00:0001::1", "6to4 loopback"},
		{"2002:a9fe:a9fe::1", "6to4 link-local"}, {"2002:0000:0001::1", "6to4 this-network"},
		{"2002:c0a8:0101::1", "6to4 private"}, {"2002:0808:0808::1", ""},
		// Public IPv6.
		{"2606:4700:4700::1111", ""}, {"2a00:1450:4001::1", ""}, {"2001:200::1", ""}, {"2001:db7:ffff::1", ""},
		{"2620:4f:7fff::1", ""}, {"3ffe::1", ""},
		// Zones do not hide anything.
		{"fe80::1%eth0", "link-local"},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tc.addr)
			got := Range(a)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("Range(%s) = %q, want %q", tc.addr, got, tc.want)
			}
			err := Check(a)
			if (err != nil) != (tc.want != "") || err != nil && !errors.Is(err, ErrForbidden) {
				t.Fatalf("Check(%s) = %v", tc.addr, err)
			}
		})
	}
}

// TestControl runs the policy where a socket connects: the address given after resolution.
func TestControl(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"8.8.8.8:53": true, "[2606:4700:4700::1111]:443": true,
		"127.0.0.1:80": false, "[::ffff:127.0.0.1]:80": false, "[64:ff9b::7f00:1]:80": false,
		"0.1.2.3:80": false, "[2002:c0a8:101::1]:80": false, "not-an-address": false,
	} {
		if err := Control("tcp", addr, nil); (err == nil) != ok || err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("Control(%s) = %v", addr, err)
		}
	}
	// A real dial to a loopback listener is refused before any packet leaves.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := Dialer(nil, false).Dial("tcp", ln.Addr().String()); !errors.Is(err, ErrForbidden) {
		t.Fatalf("dial loopback with private targets denied: %v", err)
	}
	c, err := Dialer(nil, true).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback with private targets allowed: %v", err)
	}
	c.Close()
}
