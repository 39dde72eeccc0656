package canary

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/prober"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestParseTargets: every kind of target, and the errors name the target.
func TestParseTargets(t *testing.T) {
	t.Parallel()
	ts, err := ParseTargets(" https://example.com/health, tcp://1.1.1.1:53,dns://example.com@8.8.8.8 ,dns://example.org,tcp://[::1]:80")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{KindHTTP, KindTCP, KindDNS, KindDNS, KindTCP}
	if len(ts) != len(want) {
		t.Fatalf("got %d targets, want %d", len(ts), len(want))
	}
	for i, k := range want {
		if ts[i].Kind != k {
			t.Errorf("target %d (%s): kind %s, want %s", i, ts[i].Raw, ts[i].Kind, k)
		}
	}
	if got := ts[2].job.GetDns().GetResolver(); got != "8.8.8.8:53" {
		t.Errorf("dns resolver = %q, want 8.8.8.8:53", got)
	}
	if ts[3].job.GetDns().Resolver != nil {
		t.Errorf("dns without @ has resolver %q, want the system's", ts[3].job.GetDns().GetResolver())
	}
	if ts[4].job.GetTcp().GetIpFamily() != "IPv6" || ts[4].job.GetTcp().GetHostname() != "::1" {
		t.Errorf("tcp v6 = %v", ts[4].job.GetTcp())
	}
	for _, bad := range []string{"example.com", "ftp://x", "tcp://host", "tcp://host:0", "dns://", "dns://a/b", "https://"} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("ParseTargets(%q) = nil error", bad)
		}
	}
}

// TestHealth: the agent's verdict on itself, row by row.
func TestHealth(t *testing.T) {
	t.Parallel()
	pass := func(kind string) *vantagev1.CanaryResult { return &vantagev1.CanaryResult{Kind: kind, Passing: true} }
	fail := func(kind string) *vantagev1.CanaryResult { return &vantagev1.CanaryResult{Kind: kind} }
	d := func(x time.Duration) *time.Duration { return &x }
	for _, tc := range []struct {
		name    string
		results []*vantagev1.CanaryResult
		offset  *time.Duration
		healthy bool
		reason  string
	}{
		{"all pass", []*vantagev1.CanaryResult{pass(KindHTTP), pass(KindDNS)}, d(time.Second), true, ""},
		{"no canaries, clock unknown", nil, nil, true, ""},
		{"one target down is the target's", []*vantagev1.CanaryResult{fail(KindHTTP), pass(KindTCP)}, nil, true, ""},
		{"every canary fails: no route", []*vantagev1.CanaryResult{fail(KindHTTP), fail(KindTCP)}, nil, false, ReasonRoute},
		{"every DNS canary fails: no names", []*vantagev1.CanaryResult{pass(KindTCP), fail(KindDNS)}, nil, false, ReasonDNS},
		{"clock ahead beyond the bound", []*vantagev1.CanaryResult{pass(KindHTTP)}, d(11 * time.Second), false, ReasonClock},
		{"clock behind beyond the bound", []*vantagev1.CanaryResult{pass(KindHTTP)}, d(-11 * time.Second), false, ReasonClock},
		{"clock at the bound", []*vantagev1.CanaryResult{pass(KindHTTP)}, d(10 * time.Second), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			healthy, reason := Health(tc.results, tc.offset, 10*time.Second)
			if healthy != tc.healthy || reason != tc.reason {
				t.Errorf("Health = %v %q, want %v %q", healthy, reason, tc.healthy, tc.reason)
			}
		})
	}
}

// TestRound probes real local targets: the control plane's URL and an operator's TCP target
// pass; with private targets denied (the outbound policy of checks), every canary fails and
// the agent calls itself unhealthy (no route); a skewed clock makes it unhealthy too.
func TestRound(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError) // an answer: the location reached it
	}))
	t.Cleanup(srv.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	targets, err := ParseTargets("tcp://" + lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		allowPrivate bool
		skew         time.Duration
		healthy      bool
		reason       string
		passing      int
	}{
		{"reachable", true, 0, true, "", 2},
		{"private targets denied", false, 0, false, ReasonRoute, 0},
		{"skewed clock", true, 20 * time.Second, false, ReasonClock, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := New(Config{Targets: targets, Timeout: 2 * time.Second, ClockSkew: tc.skew},
				Deps{Prober: prober.New(prober.WithPrivateTargets(tc.allowPrivate)), Send: func(*vantagev1.CanaryReport) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			r.Registered(&vantagev1.Registered{CanaryUrl: srv.URL + "/healthz"})
			now := time.Now()
			r.ServerTime(now, now)
			rep := r.Round(context.Background())
			if len(rep.GetResults()) != 2 || !rep.GetResults()[0].GetControlPlane() {
				t.Fatalf("results %v, want the control plane's first, then the TCP target", rep.GetResults())
			}
			passing := 0
			for _, res := range rep.GetResults() {
				if res.GetPassing() {
					passing++
				}
			}
			if passing != tc.passing || rep.GetAgentHealthy() != tc.healthy || rep.GetAgentUnhealthyReason() != tc.reason {
				t.Errorf("passing %d healthy %v %q, want %d %v %q (results %v)", passing, rep.GetAgentHealthy(),
					rep.GetAgentUnhealthyReason(), tc.passing, tc.healthy, tc.reason, rep.GetResults())
			}
			if tc.skew != 0 && rep.GetClockOffsetMs() < tc.skew.Milliseconds()-1000 {
				t.Errorf("clock offset %d ms, want about %d", rep.GetClockOffsetMs(), tc.skew.Milliseconds())
			}
		})
	}
}
