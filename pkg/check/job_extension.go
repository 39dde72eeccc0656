package check

import (
	"fmt"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// The job mapping of the extension kinds (ping, gRPC, WebSocket), kept beside job.go's so
// that the shared switches there stay one line per kind.

// extensionJob sets j's specification from s, a ping, gRPC or WebSocket check.
func (s Spec) extensionJob(j *vantagev1.CheckJob) error {
	missing := fmt.Errorf("a %s check without its %s settings", s.Kind, s.Kind)
	switch s.Kind {
	case Ping:
		p := s.Ping
		if p == nil {
			return missing
		}
		j.Spec = &vantagev1.CheckJob_Ping{Ping: &vantagev1.PingSpec{
			Hostname: p.Hostname, Count: uint32(p.Count), IpFamily: p.IPFamily,
			MaxLossPercent: uint32Ptr(p.MaxLossPercent), MaxAvgRttMs: uint32Ptr(p.MaxAvgRTTMs),
		}}
	case GRPC:
		g := s.GRPC
		if g == nil {
			return missing
		}
		j.Spec = &vantagev1.CheckJob_Grpc{Grpc: &vantagev1.GRPCSpec{
			Hostname: g.Hostname, Port: uint32(g.Port), Service: g.Service, Tls: g.TLS, VerifySsl: g.VerifySSL, Metadata: g.Metadata,
		}}
	case WebSocket:
		w := s.WebSocket
		if w == nil {
			return missing
		}
		j.Spec = &vantagev1.CheckJob_Websocket{Websocket: &vantagev1.WebSocketSpec{
			Url: w.URL, Headers: w.Headers, Message: w.Message, Expected: w.Expected, Comparison: w.Comparison, VerifySsl: w.VerifySSL,
		}}
	}
	return nil
}

// setExtensionOfJob is the inverse of extensionJob.
func (s *Spec) setExtensionOfJob(j *vantagev1.CheckJob) {
	switch spec := j.GetSpec().(type) {
	case *vantagev1.CheckJob_Ping:
		p := spec.Ping
		s.Ping = &PingSpec{Hostname: p.Hostname, Count: int(p.Count), IPFamily: p.IpFamily,
			MaxLossPercent: intPtr(p.MaxLossPercent), MaxAvgRTTMs: intPtr(p.MaxAvgRttMs)}
	case *vantagev1.CheckJob_Grpc:
		g := spec.Grpc
		s.GRPC = &GRPCSpec{Hostname: g.Hostname, Port: int(g.Port), Service: g.Service, TLS: g.Tls, VerifySSL: g.VerifySsl, Metadata: g.Metadata}
	case *vantagev1.CheckJob_Websocket:
		w := spec.Websocket
		s.WebSocket = &WebSocketSpec{URL: w.Url, Headers: w.Headers, Message: w.Message, Expected: w.Expected,
			Comparison: w.Comparison, VerifySSL: w.VerifySsl}
	}
}

func uint32Ptr(p *int) *uint32 {
	if p == nil {
		return nil
	}
	return ptr(uint32(*p))
}

func intPtr(p *uint32) *int {
	if p == nil {
		return nil
	}
	return ptr(int(*p))
}
