package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func TestPublishesJobsPerRegion(t *testing.T) {
	t.Parallel()
	e := setup(t)
	project := e.addProject(t)
	e.addVar(t, &project, "TOKEN", "secret", "tok-project")
	e.addVar(t, &project, "ENV", "config", "prod")
	e.addVar(t, &project, "USER", "config", "alice")
	e.addVar(t, nil, "TOKEN", "secret", "tok-org") // the org pool: not the check's scope

	assertions := []check.Assertion{{Type: check.JSONBody, Property: "$.ok", Comparison: check.Equals, Expected: "true"}}
	uptime := e.addCheck(t, testCheck{
		Kind: check.Uptime, Project: &project, Interval: 1, TimeoutMs: ptr(5000),
		Regions: []string{"cloud:us-east-1", "cloud:eu-west-2"},
		URL:     ptr("https://example.test/health"), Method: ptr("POST"), Body: ptr(`{"q":1}`),
		Headers:  map[string]string{"Authorization": "Bearer {{TOKEN}}", "X-Env": "{{ ENV }}", "X-Plain": "v"},
		AuthUser: ptr("{{USER}}"), AuthPass: ptr("pw-{{TOKEN}}"),
		Assertions: assertions, FollowRedirects: ptr(false), TLS: ptr(true),
	})
	dns := e.addCheck(t, testCheck{Kind: check.DNS, Interval: 2, Regions: []string{"cloud:ap-south-1"},
		DNSDomain: ptr("example.test"), DNSType: ptr("AAAA")})
	tcp := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, Regions: []string{"cloud:us-west-1"},
		TCPHost: ptr("db.example.test"), TCPPort: ptr(5432), TimeoutMs: ptr(2000)})
	browser := e.addCheck(t, testCheck{Kind: check.Browser, Interval: 1, Regions: []string{"cloud:eu-central-1"},
		Script: ptr("import { test } from '@playwright/test';\ntest('x', async () => {})"), Headers: map[string]string{"X-B": "b"}})
	// The API refuses references in a browser check's headers; a check stored before that rule
	// still has one, which the scheduler must pass on as written.
	e.exec(t, `UPDATE checks SET spec = jsonb_set(spec, '{headers}', '{"X-B": "{{TOKEN}}"}') WHERE id = $1`, browser)
	paused := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, Paused: true, TCPHost: ptr("x.test"), TCPPort: ptr(1)})

	got := e.consume(t)
	e.startScheduler(t, Config{}, "a")

	testwait.Eventually(t, 15*time.Second, func() error {
		for _, c := range []struct {
			id uuid.UUID
			n  int
		}{{uptime, 6}, {dns, 2}, {tcp, 3}, {browser, 3}} {
			if err := atLeast(c.n, "jobs of "+c.id.String(), len(got.of(c.id))); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("uptime job content", func(t *testing.T) {
		runs := map[int64][]gotJob{}
		for _, g := range got.of(uptime) {
			runs[g.job.ScheduledAtUnixMs] = append(runs[g.job.ScheduledAtUnixMs], g)
		}
		ph := phase(uptime, time.Second)
		for due, js := range runs {
			if (due-ph)%1000 != 0 {
				t.Errorf("run due at %d is off the check's grid (phase %dms)", due, ph)
			}
			regions := map[string]bool{}
			for _, g := range js {
				regions[g.job.Region] = true
				if g.job.JobId != js[0].job.JobId {
					t.Errorf("regions of one run have different job ids: %s, %s", g.job.JobId, js[0].job.JobId)
				}
				if g.subject != wire.SubjectOf(g.job) {
					t.Errorf("job for %s arrived on %s", g.job.Region, g.subject)
				}
			}
			if len(js) > 2 {
				t.Errorf("run due at %d was delivered %d times, want once per region", due, len(js))
			}
		}
		j := got.of(uptime)[0].job
		want := &vantagev1.HTTPSpec{
			Url: ptr("https://example.test/health"), Method: "POST", Body: ptr(`{"q":1}`),
			Headers:      map[string]string{"Authorization": "Bearer tok-project", "X-Env": "prod", "X-Plain": "v"},
			AuthUsername: ptr("alice"), AuthPassword: ptr("pw-tok-project"),
			FollowRedirects: false, VerifySsl: true,
		}
		if diff := diffHTTP(j.GetHttp(), want); diff != "" {
			t.Errorf("http spec: %s", diff)
		}
		if !slices.Equal(j.Redact, []string{"tok-project"}) {
			t.Errorf("redact %q, want only the secret value used, once", j.Redact)
		}
		if j.Kind != vantagev1.CheckKind_CHECK_KIND_UPTIME || j.OrgId != e.orgID.String() || j.TimeoutMs != 5000 ||
			j.MaxAttempts != 2 || j.Confirmation {
			t.Errorf("job kind %v org %s timeout %d attempts %d confirmation %v", j.Kind, j.OrgId, j.TimeoutMs, j.MaxAttempts, j.Confirmation)
		}
		if j.DeadlineUnixMs != j.ScheduledAtUnixMs+1000 {
			t.Errorf("deadline %+dms after due, want the 1s interval", j.DeadlineUnixMs-j.ScheduledAtUnixMs)
		}
		if len(j.Assertions) != 1 || j.Assertions[0].Property != "$.ok" || j.Assertions[0].Expected != "true" {
			t.Errorf("assertions %v", j.Assertions)
		}
		id, err := uuid.Parse(j.JobId)
		if err != nil || id.Version() != 7 {
			t.Errorf("job id %q is not a UUIDv7: %v", j.JobId, err)
		}
	})

	t.Run("other kinds", func(t *testing.T) {
		d := got.of(dns)[0]
		if d.subject != "vantage.jobs.ap-south-1" || d.job.GetDns().GetDomain() != "example.test" ||
			d.job.GetDns().GetRecordType() != "AAAA" || d.job.GetDns().GetProtocol() != "UDP" || d.job.TimeoutMs != 10000 {
			t.Errorf("dns job on %s: %v timeout %d", d.subject, d.job.GetDns(), d.job.TimeoutMs)
		}
		tj := got.of(tcp)[0].job
		if tj.GetTcp().GetHostname() != "db.example.test" || tj.GetTcp().GetPort() != 5432 || tj.GetTcp().GetIpFamily() != "IPv4" {
			t.Errorf("tcp job %v", tj.GetTcp())
		}
		b := got.of(browser)[0].job
		if b.Kind != vantagev1.CheckKind_CHECK_KIND_BROWSER || b.MaxAttempts != 1 || b.GetBrowser().GetScript() == "" ||
			b.GetBrowser().GetHeaders()["X-B"] != "{{TOKEN}}" || len(b.Redact) != 0 || b.TimeoutMs != 60000 {
			t.Errorf("browser job: attempts %d, timeout %d, spec %v, redact %q (browser headers take no references)",
				b.MaxAttempts, b.TimeoutMs, b.GetBrowser(), b.Redact)
		}
	})

	t.Run("paused check not published", func(t *testing.T) {
		if n := len(got.of(paused)); n != 0 {
			t.Errorf("paused check published %d jobs", n)
		}
	})

	t.Run("progress, not a write per run", func(t *testing.T) {
		testwait.Eventually(t, 5*time.Second, func() error {
			progress, err := e.st.ShardProgress(context.Background(), []int{shard.Of(uptime)})
			through, ok := progress[shard.Of(uptime)]
			if err != nil || !ok || time.Since(through) > 3*time.Second {
				return fmt.Errorf("the progress of the check's shard %v (%v, %v), want within the last seconds", through, ok, err)
			}
			return nil
		})
		var lq *time.Time
		if err := e.st.Pool().QueryRow(context.Background(), `SELECT last_queued FROM checks WHERE id = $1`, uptime).Scan(&lq); err != nil || lq != nil {
			t.Errorf("last_queued column %v (%v): written per run, want NULL", lq, err)
		}
	})
}

func diffHTTP(got, want *vantagev1.HTTPSpec) string {
	if got == nil {
		return "no http spec"
	}
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	switch {
	case s(got.Url) != s(want.Url), got.Method != want.Method, s(got.Body) != s(want.Body):
		return fmt.Sprintf("url/method/body %q %q %q", s(got.Url), got.Method, s(got.Body))
	case fmt.Sprint(got.Headers) != fmt.Sprint(want.Headers):
		return fmt.Sprintf("headers %v, want %v", got.Headers, want.Headers)
	case s(got.AuthUsername) != s(want.AuthUsername), s(got.AuthPassword) != s(want.AuthPassword):
		return fmt.Sprintf("basic auth %q:%q", s(got.AuthUsername), s(got.AuthPassword))
	case got.FollowRedirects != want.FollowRedirects, got.VerifySsl != want.VerifySsl:
		return fmt.Sprintf("follow_redirects %v verify_ssl %v", got.FollowRedirects, got.VerifySsl)
	}
	return ""
}

func TestChangeFeed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	slow := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 3600, TCPHost: ptr("a.test"), TCPPort: ptr(1)})
	gone := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, TCPHost: ptr("b.test"), TCPPort: ptr(1)})
	pausing := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, TCPHost: ptr("c.test"), TCPPort: ptr(1)})
	failing := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 3600, ConfirmationPeriod: 3, TCPHost: ptr("d.test"), TCPPort: ptr(1)})
	got := e.consume(t)
	s, _, _ := e.startScheduler(t, Config{MinConfirmationCadence: time.Second}, "a")
	testwait.Eventually(t, 15*time.Second, func() error {
		if owned := s.Owned(); owned.Len() != shard.Count {
			return fmt.Errorf("%d shards owned, want all", owned.Len())
		}
		return atLeast(2, "jobs of the 1s check", len(got.of(gone)))
	})

	notify := func(id uuid.UUID) time.Time {
		t.Helper()
		if err := Notify(e.nc, id); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}

	t.Run("interval change reschedules within a second", func(t *testing.T) {
		before := len(got.of(slow))
		e.exec(t, `UPDATE checks SET test_interval = 1 WHERE id = $1`, slow)
		at := notify(slow)
		testwait.Eventually(t, 5*time.Second, func() error {
			return atLeast(before+1, "jobs of the check made 1s", len(got.of(slow)))
		})
		first := got.of(slow)[before]
		// A 1s grid point comes within a second of the reload; allow a little for delivery.
		if d := first.stored.Sub(at); d > 2*time.Second {
			t.Errorf("first job after the change stored %v after the notification, want within about a second", d)
		}
	})

	t.Run("region change", func(t *testing.T) {
		e.exec(t, `UPDATE checks SET test_regions = '{cloud:eu-central-1,cloud:ap-northeast-1}' WHERE id = $1`, slow)
		at := notify(slow)
		testwait.Eventually(t, 5*time.Second, func() error {
			n := 0
			for _, g := range got.of(slow) {
				if g.stored.After(at) && (g.subject == "vantage.jobs.eu-central-1" || g.subject == "vantage.jobs.ap-northeast-1") {
					n++
				}
			}
			return atLeast(2, "jobs on the new regions' subjects", n)
		})
	})

	t.Run("state VERIFYING runs confirmation runs sooner", func(t *testing.T) {
		e.exec(t, `UPDATE checks SET state = 'VERIFYING', state_changed_at = now() WHERE id = $1`, failing)
		at := notify(failing)
		testwait.Eventually(t, 5*time.Second, func() error {
			n := 0
			for _, g := range got.of(failing) {
				if g.job.Confirmation {
					n++
				}
			}
			return atLeast(2, "confirmation runs of a check with a 1h interval", n)
		})
		var js []gotJob
		for _, g := range got.of(failing) {
			if g.job.Confirmation {
				js = append(js, g)
			}
		}
		if d := js[0].stored.Sub(at); d > 2500*time.Millisecond {
			t.Errorf("first confirmation run %v after the state change, want about the 1s cadence", d)
		}
		if gap := js[1].job.ScheduledAtUnixMs - js[0].job.ScheduledAtUnixMs; gap != 1000 {
			t.Errorf("confirmation runs %dms apart, want the cadence min(interval, max(3s/3, 1s)) = 1s", gap)
		}
		e.exec(t, `UPDATE checks SET state = 'DOWN', state_changed_at = now() WHERE id = $1`, failing)
		notify(failing)
		time.Sleep(1500 * time.Millisecond)
		n := len(got.of(failing))
		time.Sleep(2 * time.Second)
		if m := len(got.of(failing)); m != n {
			t.Errorf("DOWN on a 1h interval still ran %d more times", m-n)
		}
	})

	t.Run("delete and pause stop publishing", func(t *testing.T) {
		e.exec(t, `DELETE FROM checks WHERE id = $1`, gone)
		e.exec(t, `UPDATE checks SET paused = true WHERE id = $1`, pausing)
		notify(gone)
		notify(pausing)
		time.Sleep(1500 * time.Millisecond) // the reload, and jobs already in flight
		a, b := len(got.of(gone)), len(got.of(pausing))
		time.Sleep(2 * time.Second)
		if n := len(got.of(gone)); n != a {
			t.Errorf("deleted check published %d more jobs", n-a)
		}
		if n := len(got.of(pausing)); n != b {
			t.Errorf("paused check published %d more jobs", n-b)
		}
		e.exec(t, `UPDATE checks SET paused = false WHERE id = $1`, pausing)
		notify(pausing)
		testwait.Eventually(t, 5*time.Second, func() error {
			return atLeast(b+1, "jobs of the resumed check", len(got.of(pausing)))
		})
	})
}

func TestResyncRepairsAMissedNotification(t *testing.T) {
	t.Parallel()
	e := setup(t)
	got := e.consume(t)
	e.startScheduler(t, Config{ResyncInterval: time.Second}, "a")
	id := e.addCheck(t, testCheck{Kind: check.TCP, Interval: 1, TCPHost: ptr("a.test"), TCPPort: ptr(1)}) // no Notify
	testwait.Eventually(t, 10*time.Second, func() error {
		return atLeast(1, "jobs of a check created without a notification", len(got.of(id)))
	})
}
