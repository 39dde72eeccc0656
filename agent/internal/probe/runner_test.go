package probe_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/probe"
	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// The runner with the real probers against local targets.
func TestRun(t *testing.T) {
	t.Parallel()
	r, err := probe.New(probe.Deps{Prober: prober.New()})
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello, key=s3cret")
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

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	httpRes := r.Run(ctx, &vantagev1.CheckJob{
		Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME, TimeoutMs: 5000, Redact: []string{"s3cret"},
		Assertions: []*vantagev1.Assertion{{Type: "TEXT_BODY", Comparison: "CONTAINS", Expected: "hello"}},
		Spec:       &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Url: &srv.URL, Method: "GET", VerifySsl: true}},
	}, 1)
	if httpRes == nil || !httpRes.GetPassing() || httpRes.GetResponseCode() != 200 ||
		httpRes.GetResponseBody() != "hello, key=[REDACTED]" || len(httpRes.GetAssertions()) != 1 || !httpRes.GetAssertions()[0].GetPassed() {
		t.Errorf("http result = %v", httpRes)
	}

	port := uint32(lis.Addr().(*net.TCPAddr).Port)
	tcpJob := &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_TCP, TimeoutMs: 5000,
		Spec: &vantagev1.CheckJob_Tcp{Tcp: &vantagev1.TCPSpec{Hostname: "127.0.0.1", Port: port, IpFamily: "IPv4"}}}
	if res := r.Run(ctx, tcpJob, 1); res == nil || !res.GetPassing() || res.GetTcpStatus() != "CONNECTED" {
		t.Errorf("tcp result = %v", res)
	}

	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if res := r.Run(cancelled, tcpJob, 1); res != nil {
		t.Errorf("cancelled attempt gave a result: %v", res)
	}
}

func regionKey(t *testing.T, region string) jobseal.Key {
	t.Helper()
	s := make([]byte, jobseal.KeySize)
	if _, err := rand.Read(s); err != nil {
		t.Fatal(err)
	}
	return jobseal.Key{Region: region, ID: jobseal.KeyID(s), Secret: s}
}

// TestSealedJobProbes runs sealed jobs through the real HTTP prober against a target that
// passes only with the job's secret header and Basic-auth password.
func TestSealedJobProbes(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		if r.Header.Get("X-Api-Key") != "k3y-s3cr3t" || pw != "pw-s3cr3t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("hello"))
	}))
	defer target.Close()

	eu, us := regionKey(t, "cloud:eu-west-2"), regionKey(t, "cloud:us-east-1")
	r, err := probe.New(probe.Deps{Prober: prober.New(prober.WithPrivateTargets(true))})
	if err != nil {
		t.Fatal(err)
	}
	job := func(k jobseal.Key) *vantagev1.CheckJob {
		url, user, pw := target.URL, "ops", "pw-s3cr3t"
		j := &vantagev1.CheckJob{JobId: "j1", CheckId: "c1", Region: k.Region, Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME,
			TimeoutMs: 5000, Signature: []byte{1, 2, 3}, Redact: []string{"k3y-s3cr3t", "pw-s3cr3t"},
			Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Url: &url, Method: "GET",
				Headers: map[string]string{"X-Api-Key": "k3y-s3cr3t"}, AuthUsername: &user, AuthPassword: &pw}}}
		if err := jobseal.Seal(k, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	run := func(j *vantagev1.CheckJob) *vantagev1.CheckResult {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return r.Run(ctx, j, 1)
	}

	if res := run(job(eu)); res != nil {
		t.Fatalf("probed a sealed job before any registration: %v", res)
	}
	r.Registered(&vantagev1.Registered{SessionId: "s", RegionKeys: []*vantagev1.RegionKey{
		{Region: eu.Region, KeyId: eu.ID, Key: eu.Secret}}})
	j := job(eu)
	res := run(j)
	if res == nil || !res.GetPassing() {
		t.Fatalf("the region's job: %v, want a pass with its secrets opened", res)
	}
	if string(res.GetJobSignature()) != "\x01\x02\x03" || res.GetAgentProbesRunning() != 1 {
		t.Errorf("result signature %x, probes running %d", res.GetJobSignature(), res.GetAgentProbesRunning())
	}
	if len(j.Redact) != 2 {
		t.Errorf("the worker's job did not get its redact list: %q", j.Redact)
	}
	if res := run(job(us)); res != nil {
		t.Errorf("probed a job of a region this agent has no key for: %v", res)
	}
}
