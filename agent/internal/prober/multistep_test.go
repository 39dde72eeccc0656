package prober

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func multistepJob(script string, mod func(*vantagev1.CheckJob)) *vantagev1.CheckJob {
	j := &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_MULTISTEP, TimeoutMs: 10000, Region: "cloud:eu-west-2",
		Spec: &vantagev1.CheckJob_Multistep{Multistep: &vantagev1.MultistepSpec{Script: script}}}
	if mod != nil {
		mod(j)
	}
	return j
}

// loginAPI answers a login with a token and lists items for the bearer of it.
func loginAPI(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Password string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.Password != "s3cret-pass" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"token":"t-1"}`))
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":1},{"id":2}]`))
	})
	mux.HandleFunc("GET /ua", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(r.UserAgent())) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

const loginScript = scriptHead + `test('login then list', async ({ request }) => {
  const token = await test.step('login', async () => {
    const r = await request.post(process.env.API + '/login', { data: { password: process.env.PASSWORD } });
    await expect(r).toBeOK();
    return (await r.json()).token;
  });
  await test.step('list', async () => {
    const items = await request.get(process.env.API + '/items', { headers: { Authorization: 'Bearer ' + token } });
    expect(await items.json()).toHaveLength(2);
  });
});
`

// TestMultistepMemoryCap: a script that allocates without bound is stopped by the heap watch
// with a message saying so. It runs alone (the watch sees the whole process), and waits for its
// garbage to be collected before the next test starts.
func TestMultistepMemoryCap(t *testing.T) {
	job := multistepJob(scriptHead+"test('t', async () => { const a = []; while (true) a.push(new Uint8Array(1 << 20)); });", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(job.TimeoutMs)*time.Millisecond)
	defer cancel()
	res, err := NewMultistep(WithScriptHeapLimit(256<<20)).Probe(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passing || res.FailureSource != SourceAssertion || res.FailureType != ScriptError || !strings.Contains(res.ResultSummary, "MiB of memory") {
		t.Errorf("got passing=%v %s/%s %q, want a script error naming the memory cap", res.Passing, res.FailureSource, res.FailureType, res.ResultSummary)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for range 100 {
		runtime.GC()
		if metrics.Read(sample); sample[0].Value.Uint64() < 128<<20 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the hog's heap (%d MiB) was not freed", sample[0].Value.Uint64()>>20)
}

// TestMultistep runs multistep jobs without a browser and checks the verdict, the failure
// classification, the summary and the steps.
func TestMultistep(t *testing.T) {
	// Not parallel with the package's other tests: the heap watch sees the whole process, so
	// another test's allocations would stop these scripts (and the hog below would stop
	// theirs). Sequential tests run while parallel ones wait.
	runtime.GC()
	api := loginAPI(t)
	closed := closedURL(t)
	env := func(pass string) func(*vantagev1.CheckJob) {
		return func(j *vantagev1.CheckJob) {
			j.Env = map[string]string{"API": api.URL, "PASSWORD": pass}
			j.Redact = []string{"s3cret-pass", "wrong-pass"}
		}
	}
	cases := []struct {
		name          string
		job           *vantagev1.CheckJob
		opts          []Option
		source, ftype string
		summary       []string
		absent        string
		steps         int
	}{
		{name: "passes", job: multistepJob(loginScript, env("s3cret-pass")), steps: 3},
		{name: "assertion", job: multistepJob(loginScript, env("wrong-pass")), source: SourceAssertion, ftype: AssertionFailed,
			summary: []string{"login", "expect(response).toBeOK()", "check.spec.ts:5:"}, absent: "wrong-pass", steps: 2},
		{name: "unreachable", job: multistepJob(scriptHead+"test('t', async ({ request }) => { await request.get('"+closed+"'); });", nil),
			source: SourceTransport, ftype: ConnectionRefused, summary: []string{"connection refused"}},
		{name: "private refused", job: multistepJob(loginScript, env("s3cret-pass")), opts: []Option{WithPrivateTargets(false)},
			source: SourceTransport, ftype: ForbiddenTarget, summary: []string{"refused by policy"}},
		{name: "page fixture", job: multistepJob(scriptHead+"test('t', async ({ page }) => {});", nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"not supported: the page fixture"}},
		{name: "syntax", job: multistepJob(scriptHead+"test('t', async () => {", nil),
			source: SourceAssertion, ftype: ScriptError, summary: []string{"does not compile"}},
		{name: "endless loop", job: multistepJob(scriptHead+"test('t', async () => { while (true) {} });", func(j *vantagev1.CheckJob) { j.TimeoutMs = 2000 }),
			source: SourceTransport, ftype: Timeout, summary: []string{"Test timeout"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(tc.job.TimeoutMs)*time.Millisecond)
			defer cancel()
			start := time.Now()
			res, err := NewMultistep(tc.opts...).Probe(ctx, tc.job)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > time.Duration(tc.job.TimeoutMs)*time.Millisecond+time.Second {
				t.Errorf("took %s", d)
			}
			if tc.ftype == "" {
				if !res.Passing {
					t.Fatalf("failed: %s %s %s", res.FailureSource, res.FailureType, res.ResultSummary)
				}
			} else if res.Passing || res.FailureSource != tc.source || res.FailureType != tc.ftype {
				t.Fatalf("got passing=%v %s/%s %q, want %s/%s", res.Passing, res.FailureSource, res.FailureType, res.ResultSummary, tc.source, tc.ftype)
			}
			for _, s := range tc.summary {
				if !strings.Contains(res.ResultSummary, s) {
					t.Errorf("summary %q lacks %q", res.ResultSummary, s)
				}
			}
			if tc.absent != "" && strings.Contains(res.ResultSummary+stepsText(res.Steps), tc.absent) {
				t.Errorf("a secret is reported: %q", res.ResultSummary)
			}
			if len(res.Steps) < tc.steps {
				t.Errorf("%d steps, want at least %d: %+v", len(res.Steps), tc.steps, res.Steps)
			}
		})
	}
}

// TestMultistepUserAgent: calls carry the probes' User-Agent unless the script sets one.
func TestMultistepUserAgent(t *testing.T) {
	t.Parallel()
	api := loginAPI(t)
	script := scriptHead + `test('t', async ({ request }) => {
  expect(await (await request.get(process.env.API + '/ua')).text()).toBe('Vantage/1.4.0 (+region cloud:eu-west-2)');
  expect(await (await request.get(process.env.API + '/ua', { headers: { 'User-Agent': 'mine' } })).text()).toBe('mine');
});`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := NewMultistep(WithVersion("v1.4.0"), WithScriptHeapLimit(0)).Probe(ctx, multistepJob(script, func(j *vantagev1.CheckJob) { j.Env = map[string]string{"API": api.URL} }))
	if err != nil || !res.Passing {
		t.Fatalf("err %v, %s", err, res.ResultSummary)
	}
}

func stepsText(ss []Step) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Title + " " + s.Error + "\n")
	}
	return b.String()
}
