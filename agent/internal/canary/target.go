package canary

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Kinds of canary target.
const (
	KindHTTP = "http"
	KindTCP  = "tcp"
	KindDNS  = "dns"
)

// Target is one canary target.
type Target struct {
	Raw  string // as configured: what reports name it by
	Kind string // KindHTTP, KindTCP or KindDNS
	// ControlPlane marks the control plane's own endpoint (Registered.canary_url).
	ControlPlane bool
	job          *vantagev1.CheckJob
}

// ParseTargets reads VANTAGE_CANARY_TARGETS: comma-separated targets, each one of
//
//	http://host[:port][/path], https://…  an HTTP GET; any HTTP answer passes (the location reached it)
//	tcp://host:port                        a TCP connection
//	dns://name[@resolver[:port]]           an A query for name, to resolver (port 53) or the system's
//
// Empty: none.
func ParseTargets(s string) ([]Target, error) {
	var out []Target
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		t, err := ParseTarget(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// ParseTarget reads one target (see ParseTargets).
func ParseTarget(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, fmt.Errorf("canary target %q: want http://, https://, tcp:// or dns://", raw)
	}
	t := Target{Raw: raw}
	switch strings.ToLower(scheme) {
	case "http", "https":
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return Target{}, fmt.Errorf("canary target %q: not an http(s) URL with a host", raw)
		}
		t.Kind = KindHTTP
		t.job = &vantagev1.CheckJob{Kind: check.JobKind(check.Uptime), Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{
			Url: &raw, Method: "GET", FollowRedirects: false, VerifySsl: true}}}
	case "tcp":
		host, port, err := splitPort(rest, "")
		if err != nil {
			return Target{}, fmt.Errorf("canary target %q: want tcp://host:port: %w", raw, err)
		}
		t.Kind = KindTCP
		family := "IPv4"
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			family = "IPv6"
		}
		t.job = &vantagev1.CheckJob{Kind: check.JobKind(check.TCP), Spec: &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{
			Hostname: host, Port: uint32(port), IpFamily: family}}}
	case "dns":
		name, resolver, hasResolver := strings.Cut(rest, "@")
		if name == "" || strings.ContainsAny(name, "/:") {
			return Target{}, fmt.Errorf("canary target %q: want dns://name[@resolver[:port]]", raw)
		}
		spec := &vantagev1.DNSSpec{Domain: name, RecordType: "A", Protocol: "UDP"}
		if hasResolver {
			host, port, err := splitPort(resolver, "53")
			if err != nil {
				return Target{}, fmt.Errorf("canary target %q: resolver: %w", raw, err)
			}
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			spec.Resolver = &addr
		}
		t.Kind = KindDNS
		t.job = &vantagev1.CheckJob{Kind: check.JobKind(check.DNS), Spec: &vantagev1.CheckJob_Dns{Dns: spec}}
	default:
		return Target{}, fmt.Errorf("canary target %q: scheme %q is not http, https, tcp or dns", raw, scheme)
	}
	return t, nil
}

// splitPort splits host:port, with def as the port when there is none ("" requires one).
func splitPort(s, def string) (string, int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if def == "" {
			return "", 0, err
		}
		host, port = strings.Trim(s, "[]"), def
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || host == "" {
		return "", 0, fmt.Errorf("%q is not host:port", s)
	}
	return host, n, nil
}
