package prober

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// netnsPeer is a network namespace joined to this one by a veth pair: Addr answers pings
// from here unless the test breaks the link.
type netnsPeer struct {
	Name, HostDev, Addr string
}

// ipCmd runs `ip` (or `tc`) and fails the test with its output on error.
func ipCmd(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// startNetns makes namespace n of this test process (named by the pid, so parallel runs do
// not collide) with a veth pair on 10.<pid-derived>.<n*4>/30, deleted when the test ends.
func startNetns(t *testing.T, n int) netnsPeer {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed: the ping tests need network namespaces")
	}
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		t.Skipf("ip netns is unavailable here: %v: %s", err, out)
	}
	pid := os.Getpid()
	p := netnsPeer{Name: fmt.Sprintf("vping%d-%d", pid, n), HostDev: fmt.Sprintf("vph%d-%d", pid%100000, n)}
	nsDev := fmt.Sprintf("vpn%d-%d", pid%100000, n)
	base := fmt.Sprintf("10.%d.%d", 100+pid%100, 100+(pid/100)%100)
	hostAddr, peerAddr := fmt.Sprintf("%s.%d", base, n*4+1), fmt.Sprintf("%s.%d", base, n*4+2)
	p.Addr = peerAddr
	ipCmd(t, "ip", "netns", "add", p.Name)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", p.HostDev).Run()
		_ = exec.Command("ip", "netns", "del", p.Name).Run()
	})
	ipCmd(t, "ip", "link", "add", p.HostDev, "type", "veth", "peer", "name", nsDev)
	ipCmd(t, "ip", "link", "set", nsDev, "netns", p.Name)
	ipCmd(t, "ip", "addr", "add", hostAddr+"/30", "dev", p.HostDev)
	ipCmd(t, "ip", "link", "set", p.HostDev, "up")
	ipCmd(t, "ip", "-n", p.Name, "addr", "add", peerAddr+"/30", "dev", nsDev)
	ipCmd(t, "ip", "-n", p.Name, "link", "set", nsDev, "up")
	ipCmd(t, "ip", "-n", p.Name, "link", "set", "lo", "up")
	return p
}

func pingJob(host string, count uint32, maxLoss, maxRTT *uint32) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_PING, Spec: &vantagev1.CheckJob_Ping{Ping: &vantagev1.PingSpec{
		Hostname: host, Count: count, IpFamily: "Any", MaxLossPercent: maxLoss, MaxAvgRttMs: maxRTT}}}
}

func TestDetectICMPMode(t *testing.T) {
	t.Parallel()
	mode := DetectICMPMode()
	if mode == ICMPUnavailable {
		t.Fatalf("this test process (uid %d) can open no ICMP socket; the ping tests need root or ping_group_range", os.Getuid())
	}
	if mode != ICMPRaw && mode != ICMPUnprivileged {
		t.Fatalf("mode %q", mode)
	}
}

// TestPingNamespaces pings real peers over veth pairs: a healthy one, a lossy one and one
// whose link is down. The lossy peer rate-limits its echo replies to one a second
// (net.ipv4.icmp_ratemask with the echo-reply bit, icmp_ratelimit 1000, both per namespace):
// the kernels these tests run on may lack the netem qdisc, and after the limiter's burst that
// loses about half of requests sent every 200 ms.
func TestPingNamespaces(t *testing.T) {
	t.Parallel()
	healthy, lossy, down := startNetns(t, 0), startNetns(t, 1), startNetns(t, 2)
	ipCmd(t, "ip", "netns", "exec", lossy.Name, "sysctl", "-q", "-w", "net.ipv4.icmp_ratemask=6169", "net.ipv4.icmp_ratelimit=1000")
	ipCmd(t, "ip", "-n", down.Name, "link", "set", fmt.Sprintf("vpn%d-%d", os.Getpid()%100000, 2), "down")
	p := NewPing()

	t.Run("healthy", func(t *testing.T) {
		res := run(t, p, pingJob(healthy.Addr, 3, ptr(uint32(0)), ptr(uint32(500))), 5*time.Second)
		wantPass(t, res)
		s := res.Ping
		if s == nil || s.Sent != 3 || s.Received != 3 || s.LossPercent() != 0 || s.Min <= 0 || s.Min > s.Avg || s.Avg > s.Max {
			t.Fatalf("stats %+v", s)
		}
		if res.ResponseTime != s.Avg {
			t.Errorf("response time %s, want the average %s", res.ResponseTime, s.Avg)
		}
	})
	t.Run("loss above the threshold", func(t *testing.T) {
		res := run(t, p, pingJob(lossy.Addr, 20, ptr(uint32(10)), nil), 10*time.Second)
		wantFail(t, res, SourceAssertion, PacketLoss)
		if l := res.Ping.LossPercent(); l < 10 || l > 95 {
			t.Errorf("loss %.0f%% behind a reply limit of one a second", l)
		}
	})
	t.Run("same loss allowed", func(t *testing.T) {
		wantPass(t, run(t, p, pingJob(lossy.Addr, 20, ptr(uint32(100)), nil), 10*time.Second))
	})
	t.Run("down", func(t *testing.T) {
		res := run(t, p, pingJob(down.Addr, 3, nil, nil), 5*time.Second)
		if res.Passing || res.FailureSource != SourceTransport || res.Ping != nil && res.Ping.Received != 0 {
			t.Fatalf("got %v %s/%s %+v: %s", res.Passing, res.FailureSource, res.FailureType, res.Ping, res.ResultSummary)
		}
	})
	t.Run("deadline shorter than the replies", func(t *testing.T) {
		res := run(t, p, pingJob(down.Addr, 20, nil, nil), 500*time.Millisecond)
		if res.Passing || res.FailureSource != SourceTransport {
			t.Fatalf("got %v %s/%s: %s", res.Passing, res.FailureSource, res.FailureType, res.ResultSummary)
		}
		if res.Timings.Total > 2*time.Second {
			t.Errorf("attempt took %s past its 500 ms deadline", res.Timings.Total)
		}
	})
	t.Run("policy refuses the resolved address", func(t *testing.T) {
		res := run(t, NewPing(WithPrivateTargets(false)), pingJob(healthy.Addr, 1, nil, nil), 5*time.Second)
		wantFail(t, res, SourceTransport, ForbiddenTarget)
	})
}

func TestPingRefusals(t *testing.T) {
	t.Parallel()
	res := run(t, NewPing(WithICMPMode(ICMPUnavailable)), pingJob("127.0.0.1", 1, nil, nil), time.Second)
	wantFail(t, res, SourceTransport, NotSupported)
	wantSummary(t, res, "ping_group_range", "CAP_NET_RAW")
	res = run(t, NewPing(), pingJob("127.0.0.1", 0, nil, nil), time.Second)
	wantFail(t, res, SourceTransport, InvalidRequest)
	job := pingJob("::1", 1, nil, nil)
	job.GetPing().IpFamily = "IPv4"
	res = run(t, NewPing(), job, time.Second)
	wantFail(t, res, SourceTransport, InvalidRequest)
	res = run(t, NewPing(), pingJob("no-such-host.invalid", 1, nil, nil), 3*time.Second)
	wantFail(t, res, SourceTransport, DNSError)
	// Loopback answers: the plain pass, without namespaces.
	wantPass(t, run(t, NewPing(), pingJob("127.0.0.1", 2, ptr(uint32(0)), nil), 5*time.Second))
}

// TestPingJudge: the thresholds, on the statistics an attempt gathered (a veth pair answers
// too fast, and netem may be missing, to make a slow peer for real).
func TestPingJudge(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name            string
		stats           PingStats
		maxLoss, maxRTT *uint32
		source, ft      string
	}{
		{"all back", PingStats{Sent: 4, Received: 4, Min: ms, Avg: 2 * ms, Max: 3 * ms}, nil, nil, "", ""},
		{"none back", PingStats{Sent: 4}, ptr(uint32(100)), nil, SourceTransport, Timeout},
		{"loss at the threshold", PingStats{Sent: 4, Received: 3, Avg: ms}, ptr(uint32(25)), nil, "", ""},
		{"loss above", PingStats{Sent: 4, Received: 2, Avg: ms}, ptr(uint32(25)), nil, SourceAssertion, PacketLoss},
		{"slow", PingStats{Sent: 4, Received: 4, Avg: 80 * ms}, nil, ptr(uint32(50)), SourceAssertion, SlowResponse},
		{"fast enough", PingStats{Sent: 4, Received: 4, Avg: 50 * ms}, nil, ptr(uint32(50)), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stats := tc.stats
			res := Result{Ping: &stats}
			(&Ping{}).judge(&res, &vantagev1.PingSpec{MaxLossPercent: tc.maxLoss, MaxAvgRttMs: tc.maxRTT}, netip.MustParseAddr("192.0.2.1"))
			if tc.source == "" {
				wantPass(t, res)
				return
			}
			wantFail(t, res, tc.source, tc.ft)
		})
	}
}
