package scheduler

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/jobseal"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestPublishedJobsAreSignedAndSealed runs a scheduler with a job guard and reads the jobs
// as NATS carries them: no secret value in any payload, each job signed for its region, and
// its secrets open only with its region's key.
func TestPublishedJobsAreSignedAndSealed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	project := e.addProject(t)
	e.addVar(t, &project, "TOKEN", "secret", "tok-s3cr3t")
	e.addVar(t, &project, "USER", "config", "alice")
	e.addVar(t, &project, "PAGE_PASSWORD", "secret", "page-s3cr3t")
	e.addVar(t, &project, "UNUSED", "secret", "unused-s3cr3t")
	uptime := e.addCheck(t, testCheck{Kind: check.Uptime, Project: &project, Regions: []string{"cloud:us-east-1", "cloud:eu-west-2"},
		URL: ptr("https://example.test/"), Method: ptr("GET"),
		Headers:  map[string]string{"Authorization": "Bearer {{TOKEN}}", "X-Plain": "v"},
		AuthUser: ptr("{{USER}}"), AuthPass: ptr("pw-{{TOKEN}}")})
	browser := e.addCheck(t, testCheck{Kind: check.Browser, Project: &project, Regions: []string{"cloud:eu-west-2"},
		Script: ptr("import { test } from '@playwright/test';\ntest('login', async ({ page }) => { await page.fill('#p', process.env.PAGE_PASSWORD); })")})
	dns := e.addCheck(t, testCheck{Kind: check.DNS, Regions: []string{"cloud:us-east-1"}, DNSDomain: ptr("example.test"), DNSType: ptr("A")})

	guard, err := jobguard.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	raw := consumeRaw(t, e)
	s, err := New(Config{}, Deps{Store: e.st, NATS: e.nc, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	testwait.Eventually(t, 15*time.Second, func() error {
		return atLeast(4, "jobs", len(raw.snapshot()))
	})
	cancel()
	<-done

	keyring := func(regions ...string) *jobseal.Keyring {
		keys, err := guard.RegionKeys(regions)
		if err != nil {
			t.Fatal(err)
		}
		var ks []jobseal.Key
		for _, k := range keys {
			ks = append(ks, jobseal.Key{Region: k.Region, ID: k.KeyId, Secret: k.Key})
		}
		kr := jobseal.NewKeyring()
		if err := kr.Set(ks); err != nil {
			t.Fatal(err)
		}
		return kr
	}
	seen := map[string]bool{}
	for _, data := range raw.snapshot() {
		for _, secret := range []string{"s3cr3t", "alice", "Authorization"} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("a job payload on NATS carries %q in clear", secret)
			}
		}
		j, err := wire.DecodeJob(data)
		if err != nil {
			t.Fatal(err)
		}
		res := &vantagev1.CheckResult{JobId: j.JobId, CheckId: j.CheckId, OrgId: j.OrgId, Region: j.Region,
			ScheduledAtUnixMs: j.ScheduledAtUnixMs, Kind: j.Kind, JobSignature: j.Signature}
		if _, err := guard.VerifyResult(res); err != nil {
			t.Errorf("job %s of %s: its result would be refused: %v", j.JobId, j.Region, err)
		}
		other := "cloud:eu-west-2"
		if j.Region == other {
			other = "cloud:us-east-1"
		}
		if len(j.Sealed) > 0 {
			if err := keyring(other).Open(proto.CloneOf(j)); err == nil {
				t.Errorf("an agent of %s opened the secrets of a %s job", other, j.Region)
			}
		}
		if err := keyring(j.Region).Open(j); err != nil {
			t.Fatalf("the region's agent cannot open job %s: %v", j.JobId, err)
		}
		switch j.CheckId {
		case uptime.String():
			h := j.GetHttp()
			if h.GetHeaders()["Authorization"] != "Bearer tok-s3cr3t" || h.GetHeaders()["X-Plain"] != "v" ||
				h.GetAuthUsername() != "alice" || h.GetAuthPassword() != "pw-tok-s3cr3t" || h.GetUrl() != "https://example.test/" {
				t.Errorf("opened uptime job: %v", h)
			}
			if !slices.Equal(j.Redact, []string{"tok-s3cr3t"}) {
				t.Errorf("opened uptime job redacts %q", j.Redact)
			}
		case browser.String():
			if j.Env["PAGE_PASSWORD"] != "page-s3cr3t" || len(j.Env) != 1 || !slices.Equal(j.Redact, []string{"page-s3cr3t"}) {
				t.Errorf("opened browser job: env %v redact %q, want the one variable its script reads", j.Env, j.Redact)
			}
		case dns.String():
			if len(j.Sealed) != 0 || j.GetDns().GetDomain() != "example.test" {
				t.Errorf("dns job: %v", j)
			}
		}
		seen[j.CheckId] = true
	}
	for _, id := range []string{uptime.String(), browser.String(), dns.String()} {
		if !seen[id] {
			t.Errorf("no job of check %s", id)
		}
	}
}

// rawJobs are job payloads exactly as NATS delivered them.
type rawJobs struct {
	mu  sync.Mutex
	all [][]byte
}

func (r *rawJobs) snapshot() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

func consumeRaw(t *testing.T, e *env) *rawJobs {
	t.Helper()
	got := &rawJobs{}
	for _, r := range check.Regions {
		for _, name := range []string{wire.ConsumerName(r), wire.BrowserConsumerName(r)} {
			cons, err := e.js.Consumer(context.Background(), wire.JobStream, name)
			if err != nil {
				t.Fatal(err)
			}
			cc, err := cons.Consume(func(m jetstream.Msg) {
				got.mu.Lock()
				got.all = append(got.all, slices.Clone(m.Data()))
				got.mu.Unlock()
				_ = m.Ack()
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cc.Stop)
		}
	}
	return got
}
