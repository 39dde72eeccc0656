package prober

import (
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestEveryKindHasAProber: the table of New has a row for every kind of pkg/check, so a kind
// added there without a prober fails here rather than as INVALID_REQUEST on an agent.
func TestEveryKindHasAProber(t *testing.T) {
	t.Parallel()
	table := New().probers
	for _, k := range check.Kinds {
		if table[k] == nil {
			t.Errorf("no prober for kind %s", k)
		}
	}
	if len(table) != len(check.Kinds) {
		t.Errorf("%d probers for %d kinds", len(table), len(check.Kinds))
	}
}

func TestRunnerDispatch(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	r := New()
	wantPass(t, run(t, r, uptime(ts.URL+"/status/200"), 5*time.Second))
	res := run(t, r, &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_BROWSER,
		Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{Url: ptr(ts.URL)}}}, 5*time.Second)
	wantFail(t, res, SourceTransport, NotSupported)
	if res.ResultSummary != NoBrowser || res.Kind != check.Browser {
		t.Errorf("got %+v", res)
	}
	wantFail(t, run(t, r, &vantagev1.CheckJob{Kind: 99}, time.Second), SourceTransport, InvalidRequest)
}

// With the agent's browser, browser jobs run in it (real Chromium) and the other kinds still
// go to their own probers.
func TestDispatchWithBrowser(t *testing.T) {
	t.Parallel()
	r := New(WithBrowser(testBrowser(t, false)), WithVersion("v1.4.0"))
	srv := pages(t)
	res := run(t, r, browserURLJob(srv.URL+"/ok", 10*time.Second, func(j *vantagev1.CheckJob) {
		j.GetBrowser().TextToSearchFor = ptr("42 EUR") // only in the DOM the page's script rendered
	}), 10*time.Second)
	wantPass(t, res)
	if res.Kind != check.Browser || res.ResultSummary == NoBrowser {
		t.Errorf("browser job: %+v", res)
	}
	ts := newHTTPServer(t)
	if res := run(t, r, uptime(ts.URL+"/status/200"), 5*time.Second); !res.Passing || res.Kind != check.Uptime {
		t.Errorf("uptime job beside a browser: %+v", res)
	}
}
