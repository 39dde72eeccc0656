package check

import (
	"fmt"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// The one mapping between the model and the job agents run (proto/vantage/v1, job.proto and
// check.proto). Probers read the decoded job directly; the control plane builds it with Job.

// Job returns what a job carries of s: the kind, the timeout, the assertions and the kind's
// specification, with every field of the specification (fields tagged `job:"-"` stay in the
// control plane). The scheduler adds the run's fields: ids, region, times, attempts and the
// values to redact.
func (s Spec) Job() (*vantagev1.CheckJob, error) {
	j := &vantagev1.CheckJob{Kind: JobKind(s.Kind), Assertions: JobAssertions(s.Assertions)}
	if s.TimeoutMs != nil {
		j.TimeoutMs = uint32(*s.TimeoutMs)
	}
	missing := fmt.Errorf("a %s check without its %s settings", s.Kind, s.Kind)
	switch s.Kind {
	case Uptime:
		h := s.HTTP
		if h == nil {
			return nil, missing
		}
		j.Spec = &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{
			Url: h.URL, TextToSearchFor: h.TextToSearchFor, Headers: h.Headers, Method: h.Method, Body: h.Body,
			FollowRedirects: h.FollowRedirects, VerifySsl: h.VerifySSL, AuthUsername: h.AuthUsername, AuthPassword: h.AuthPassword,
		}}
	case Browser:
		h := s.HTTP
		if h == nil {
			return nil, missing
		}
		j.Spec = &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{
			Url: h.URL, TextToSearchFor: h.TextToSearchFor, Headers: h.Headers, Method: h.Method, Body: h.Body,
			FollowRedirects: h.FollowRedirects, VerifySsl: h.VerifySSL, AuthUsername: h.AuthUsername, AuthPassword: h.AuthPassword,
			Script: h.Script,
		}}
	case DNS:
		d := s.DNS
		if d == nil {
			return nil, missing
		}
		j.Spec = &vantagev1.CheckJob_Dns{Dns: &vantagev1.DNSSpec{
			Domain: d.Domain, RecordType: d.RecordType, Resolver: d.Resolver, Protocol: d.Protocol,
		}}
	case TCP:
		t := s.TCP
		if t == nil {
			return nil, missing
		}
		j.Spec = &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{
			Hostname: t.Hostname, Port: uint32(t.Port), IpFamily: t.IPFamily, Data: t.Data, ShouldFail: t.ShouldFail,
			Tls: t.TLS, VerifySsl: t.VerifySSL,
		}}
	case Multistep:
		m := s.Multistep
		if m == nil {
			return nil, missing
		}
		j.Spec = &vantagev1.CheckJob_Multistep{Multistep: &vantagev1.MultistepSpec{Script: m.Script}}
	case Ping, GRPC, WebSocket:
		if err := s.extensionJob(j); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown check kind %q", s.Kind)
	}
	return j, nil
}

// FromJob is the inverse of Job: a Spec with the fields a job carries (the others are zero).
// Protobuf does not tell an empty list or map from none: those come back nil.
func FromJob(j *vantagev1.CheckJob) (Spec, error) {
	s := Spec{Kind: KindOfJob(j.GetKind()), Assertions: AssertionsOfJob(j.GetAssertions())}
	if ms := j.GetTimeoutMs(); ms != 0 {
		s.TimeoutMs = ptr(int(ms))
	}
	switch spec := j.GetSpec().(type) {
	case *vantagev1.CheckJob_Http:
		h := spec.Http
		s.HTTP = &HTTPSpec{
			URL: h.Url, TextToSearchFor: h.TextToSearchFor, Headers: h.Headers, Method: h.Method, Body: h.Body,
			FollowRedirects: h.FollowRedirects, VerifySSL: h.VerifySsl, AuthUsername: h.AuthUsername, AuthPassword: h.AuthPassword,
		}
	case *vantagev1.CheckJob_Browser:
		b := spec.Browser
		s.HTTP = &HTTPSpec{
			URL: b.Url, TextToSearchFor: b.TextToSearchFor, Headers: b.Headers, Method: b.Method, Body: b.Body,
			FollowRedirects: b.FollowRedirects, VerifySSL: b.VerifySsl, AuthUsername: b.AuthUsername, AuthPassword: b.AuthPassword,
			Script: b.Script,
		}
	case *vantagev1.CheckJob_Dns:
		d := spec.Dns
		s.DNS = &DNSSpec{Domain: d.Domain, RecordType: d.RecordType, Resolver: d.Resolver, Protocol: d.Protocol}
	case *vantagev1.CheckJob_Tcp:
		t := spec.Tcp
		s.TCP = &TCPSpec{Hostname: t.Hostname, Port: int(t.Port), IPFamily: t.IpFamily, Data: t.Data, ShouldFail: t.ShouldFail,
			TLS: t.Tls, VerifySSL: t.VerifySsl}
	case *vantagev1.CheckJob_Multistep:
		s.Multistep = &MultistepSpec{Script: spec.Multistep.GetScript()}
	case *vantagev1.CheckJob_Ping, *vantagev1.CheckJob_Grpc, *vantagev1.CheckJob_Websocket:
		s.setExtensionOfJob(j)
	default:
		return s, fmt.Errorf("job %s carries no check specification", j.GetJobId())
	}
	return s, nil
}

// JobKind is the job's name of kind k (CHECK_KIND_UNSPECIFIED for an unknown kind).
func JobKind(k Kind) vantagev1.CheckKind {
	switch k {
	case Uptime:
		return vantagev1.CheckKind_CHECK_KIND_UPTIME
	case Browser:
		return vantagev1.CheckKind_CHECK_KIND_BROWSER
	case DNS:
		return vantagev1.CheckKind_CHECK_KIND_DNS
	case TCP:
		return vantagev1.CheckKind_CHECK_KIND_TCP
	case Multistep:
		return vantagev1.CheckKind_CHECK_KIND_MULTISTEP
	case Ping:
		return vantagev1.CheckKind_CHECK_KIND_PING
	case GRPC:
		return vantagev1.CheckKind_CHECK_KIND_GRPC
	case WebSocket:
		return vantagev1.CheckKind_CHECK_KIND_WEBSOCKET
	}
	return vantagev1.CheckKind_CHECK_KIND_UNSPECIFIED
}

// KindOfJob is the inverse of JobKind; an unknown job kind is "".
func KindOfJob(k vantagev1.CheckKind) Kind {
	for _, kind := range Kinds {
		if JobKind(kind) == k {
			return kind
		}
	}
	return ""
}

// JobAssertions is the job form of assertions.
func JobAssertions(as []Assertion) []*vantagev1.Assertion {
	var out []*vantagev1.Assertion
	for _, a := range as {
		out = append(out, &vantagev1.Assertion{Type: a.Type, Property: a.Property, Comparison: a.Comparison, Expected: a.Expected})
	}
	return out
}

// AssertionsOfJob is the inverse of JobAssertions.
func AssertionsOfJob(as []*vantagev1.Assertion) []Assertion {
	var out []Assertion
	for _, a := range as {
		out = append(out, Assertion{Type: a.GetType(), Property: a.GetProperty(), Comparison: a.GetComparison(), Expected: a.GetExpected()})
	}
	return out
}
