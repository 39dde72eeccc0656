package jobopen

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vantagehq/vantage/agent/internal/probe"
	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

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
	pr, err := probe.New(probe.Deps{Prober: prober.New(prober.WithPrivateTargets(true))})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Deps{Next: pr})
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
