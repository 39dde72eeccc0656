package prober

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/netpolicy"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// ICMP socket modes (ICMPMode).
const (
	// ICMPUnprivileged: datagram ICMP sockets, which Linux allows to the groups of
	// net.ipv4.ping_group_range without any capability; the kernel fills in the echo id.
	ICMPUnprivileged = "unprivileged"
	// ICMPRaw: raw ICMP sockets, which need CAP_NET_RAW.
	ICMPRaw = "raw"
	// ICMPUnavailable: neither; ping checks fail with NOT_SUPPORTED.
	ICMPUnavailable = "unavailable"
)

// DetectICMPMode says which ICMP sockets this process may open, preferring the unprivileged
// kind: the agent calls it once at start-up, logs it and exports it as a metric label.
func DetectICMPMode() string {
	for _, mode := range []string{ICMPUnprivileged, ICMPRaw} {
		if c, err := icmp.ListenPacket(icmpNetwork(mode, false), "0.0.0.0"); err == nil {
			_ = c.Close()
			return mode
		}
	}
	return ICMPUnavailable
}

// WithICMPMode sets the ICMP sockets ping probes open (ICMPUnprivileged, ICMPRaw or
// ICMPUnavailable). Default: DetectICMPMode's answer when the prober is made.
func WithICMPMode(mode string) Option { return func(o *options) { o.icmpMode = mode } }

func icmpNetwork(mode string, v6 bool) string {
	switch {
	case mode == ICMPUnprivileged && v6:
		return "udp6"
	case mode == ICMPUnprivileged:
		return "udp4"
	case v6:
		return "ip6:ipv6-icmp"
	}
	return "ip4:icmp"
}

// pingInterval is the gap between echo requests, and pingLinger how long replies are awaited
// after the last request (within the deadline): ping -i 0.2 -W 2.
const (
	pingInterval = 200 * time.Millisecond
	pingLinger   = 2 * time.Second
)

// Ping probes ping checks: ping_count ICMP echo requests to the first address of the host in
// the check's family (Any: the first address the resolver gives), pingInterval apart, replies
// awaited until pingLinger after the last request or the deadline. The outbound address
// policy applies to the resolved address.
//
// Verdict: no reply at all is a TRANSPORT failure (TIMEOUT); a loss above
// ping_max_loss_percent is ASSERTION / PACKET_LOSS; an average round trip above
// ping_max_avg_rtt_ms is ASSERTION / SLOW_RESPONSE. The response time is the average round
// trip.
type Ping struct {
	opts options
	// nextID numbers the attempts: a raw socket sees every echo reply of the host, so each
	// attempt matches its own by id (and by source address).
	nextID atomic.Uint32
}

var _ Prober = (*Ping)(nil)

// NewPing returns the ping prober.
func NewPing(opts ...Option) *Ping {
	o := newOptions(opts)
	if o.icmpMode == "" {
		o.icmpMode = DetectICMPMode()
	}
	p := &Ping{opts: o}
	p.nextID.Store(uint32(os.Getpid()))
	return p
}

// Probe runs one ping attempt; see Ping.
func (p *Ping) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.Ping}
	spec := job.GetPing()
	if p.opts.icmpMode == ICMPUnavailable || p.opts.icmpMode == "" {
		res.failTransport(NotSupported, "this agent can open no ICMP socket: allow its group in net.ipv4.ping_group_range or grant it CAP_NET_RAW")
		res.finish(job, nil)
		return res, nil
	}
	lookup, err := pingFamily(spec)
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}
	start := time.Now()
	addrs, looked, err := resolveFamily(ctx, p.opts.resolver, spec.GetHostname(), lookup)
	if looked {
		res.Timings.DNS = time.Since(start)
	}
	if err == nil && !p.opts.allowPrivate {
		err = netpolicy.Check(addrs[0])
	}
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		ft := classify(ctx, err)
		if errors.Is(err, errFamily) {
			ft = InvalidRequest
		} else if ft != Timeout && ft != ForbiddenTarget {
			ft = DNSError
		}
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		res.failTransport(ft, describe(ft, err))
		res.finish(job, nil)
		return res, nil
	}
	target := addrs[0].Unmap()
	stats, err := p.echo(ctx, target, int(spec.GetCount()))
	res.Timings.Total = time.Since(start)
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	if err != nil {
		ft := classify(ctx, err)
		res.failTransport(ft, describe(ft, err))
		res.finish(job, nil)
		return res, nil
	}
	res.Ping = &stats
	res.ResponseTime = stats.Avg
	p.judge(&res, spec, target)
	res.finish(job, nil)
	return res, nil
}

func (p *Ping) judge(res *Result, spec *vantagev1.PingSpec, target netip.Addr) {
	s := res.Ping
	summary := fmt.Sprintf("%s: %d/%d replies, %.0f%% loss", target, s.Received, s.Sent, s.LossPercent())
	if s.Received > 0 {
		summary += fmt.Sprintf(", rtt min/avg/max %.1f/%.1f/%.1f ms", msf(s.Min), msf(s.Avg), msf(s.Max))
	}
	switch {
	case s.Received == 0:
		res.failTransport(Timeout, summary)
	case spec.MaxLossPercent != nil && s.LossPercent() > float64(spec.GetMaxLossPercent()):
		res.failAssertion(PacketLoss, fmt.Sprintf("%s, above the %d%% allowed", summary, spec.GetMaxLossPercent()))
	case spec.MaxAvgRttMs != nil && msf(s.Avg) > float64(spec.GetMaxAvgRttMs()):
		res.failAssertion(SlowResponse, fmt.Sprintf("%s, average above the %d ms allowed", summary, spec.GetMaxAvgRttMs()))
	default:
		res.pass(summary)
	}
}

// pingFamily validates spec and returns the lookup network.
func pingFamily(spec *vantagev1.PingSpec) (string, error) {
	if strings.TrimSpace(spec.GetHostname()) == "" {
		return "", errors.New("no hostname")
	}
	if spec.GetCount() < 1 || spec.GetCount() > check.MaxPingCount {
		return "", fmt.Errorf("count %d is not in 1..%d", spec.GetCount(), check.MaxPingCount)
	}
	switch spec.GetIpFamily() {
	case "IPv4":
		return "ip4", nil
	case "IPv6":
		return "ip6", nil
	case "", check.IPFamilyAny:
		return "ip", nil
	}
	return "", fmt.Errorf("IP family %q is not IPv4, IPv6 or Any", spec.GetIpFamily())
}

// PingStats are the outcome of one attempt's echo requests.
type PingStats struct {
	Sent, Received        int
	Min, Avg, Max, StdDev time.Duration // of the replies; zero when none came back
}

// LossPercent is the share of requests that got no reply.
func (s PingStats) LossPercent() float64 {
	if s.Sent == 0 {
		return 0
	}
	return 100 * float64(s.Sent-s.Received) / float64(s.Sent)
}

// echo sends count echo requests to dst and collects the replies.
func (p *Ping) echo(ctx context.Context, dst netip.Addr, count int) (PingStats, error) {
	v6 := dst.Is6()
	conn, err := icmp.ListenPacket(icmpNetwork(p.opts.icmpMode, v6), "")
	if err != nil {
		return PingStats{}, fmt.Errorf("open ICMP socket (%s): %w", p.opts.icmpMode, err)
	}
	defer func() { _ = conn.Close() }()
	if p.opts.icmpMode == ICMPRaw {
		onlyEchoReplies(conn, v6)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	var peer net.Addr = &net.IPAddr{IP: dst.AsSlice()}
	if p.opts.icmpMode == ICMPUnprivileged {
		peer = &net.UDPAddr{IP: dst.AsSlice()}
	}
	id := int(p.nextID.Add(1) & 0xffff)
	var reqType, replyType icmp.Type = ipv4.ICMPTypeEcho, ipv4.ICMPTypeEchoReply
	proto := 1 // ICMP
	if v6 {
		reqType, replyType, proto = ipv6.ICMPTypeEchoRequest, ipv6.ICMPTypeEchoReply, 58
	}

	sent := make([]atomic.Int64, count) // unix nanoseconds each request went out
	rtts := make([]time.Duration, 0, count)
	seen := make([]bool, count)
	errs := make(chan error, 1)
	go func() { // the sender; the caller reads
		for i := range count {
			msg := icmp.Message{Type: reqType, Body: &icmp.Echo{ID: id, Seq: i, Data: []byte("vantage-ping")}}
			b, _ := msg.Marshal(nil)
			sent[i].Store(time.Now().UnixNano())
			if _, err := conn.WriteTo(b, peer); err != nil {
				errs <- err
				return
			}
			if i < count-1 {
				select {
				case <-time.After(pingInterval):
				case <-ctx.Done():
					errs <- nil
					return
				}
			}
		}
		linger := time.Now().Add(pingLinger)
		if d, ok := ctx.Deadline(); ok && d.Before(linger) {
			linger = d
		}
		_ = conn.SetReadDeadline(linger)
		errs <- nil
	}()
	buf := make([]byte, 1500)
	var sendErr error
	senderDone := false
	for len(rtts) < count {
		n, from, err := conn.ReadFrom(buf)
		now := time.Now()
		if err != nil {
			if !senderDone {
				sendErr, senderDone = <-errs, true
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			return PingStats{}, err
		}
		msg, err := icmp.ParseMessage(proto, buf[:n])
		if err != nil || msg.Type != replyType {
			continue
		}
		echo, ok := msg.Body.(*icmp.Echo)
		// Unprivileged sockets get only their own replies, with the id the kernel chose.
		if !ok || echo.Seq < 0 || echo.Seq >= count || seen[echo.Seq] || (p.opts.icmpMode == ICMPRaw && (echo.ID != id || !sameHost(from, dst))) {
			continue
		}
		seen[echo.Seq] = true
		rtts = append(rtts, now.Sub(time.Unix(0, sent[echo.Seq].Load())))
	}
	if !senderDone {
		sendErr = <-errs
	}
	stats := PingStats{Sent: count, Received: len(rtts)}
	if sendErr != nil {
		return stats, fmt.Errorf("send echo request: %w", sendErr)
	}
	if len(rtts) > 0 {
		var sum, sq float64
		stats.Min = rtts[0]
		for _, r := range rtts {
			stats.Min, stats.Max = min(stats.Min, r), max(stats.Max, r)
			sum += float64(r)
		}
		mean := sum / float64(len(rtts))
		for _, r := range rtts {
			sq += (float64(r) - mean) * (float64(r) - mean)
		}
		stats.Avg = time.Duration(mean)
		stats.StdDev = time.Duration(math.Sqrt(sq / float64(len(rtts))))
	}
	return stats, nil
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sameHost reports whether a packet from addr came from dst.
func sameHost(addr net.Addr, dst netip.Addr) bool {
	var ip net.IP
	switch a := addr.(type) {
	case *net.IPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	}
	got, ok := netip.AddrFromSlice(ip)
	return ok && got.Unmap() == dst
}

// onlyEchoReplies has the kernel drop every ICMP message but echo replies before they reach a
// raw socket, which otherwise gets a copy of every ICMP message of the host (the requests of
// other attempts among them) and may overflow under load. Best effort: without the filter the
// reader skips them.
func onlyEchoReplies(conn *icmp.PacketConn, v6 bool) {
	if v6 {
		var f ipv6.ICMPFilter
		f.SetAll(true)
		f.Accept(ipv6.ICMPTypeEchoReply)
		if pc := conn.IPv6PacketConn(); pc != nil {
			_ = pc.SetICMPFilter(&f)
		}
		return
	}
	var f ipv4.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv4.ICMPTypeEchoReply)
	if pc := conn.IPv4PacketConn(); pc != nil {
		_ = pc.SetICMPFilter(&f)
	}
}
