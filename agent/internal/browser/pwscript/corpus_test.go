package pwscript

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// corpusCase is a script of testdata/scripts and what it must do, read from its header:
//
//	// expect: pass | fail
//	// message: a fragment of the failure message (repeatable)
//	// absent: a text that must appear nowhere in the report (repeatable)
//	// step: the failure's title path
//
// and the line that fails ends with the comment "// fails here".
//
//	// timeout: the run's time in milliseconds (default 15000)
//	// parity: skip — why real Playwright cannot run it the same way
//	// pending: the feature (and branch) it waits for; until then it must fail with
//	//          "not supported", and its pinned Playwright verdict is not compared
type corpusCase struct {
	name, path, source string
	pass               bool
	messages, absent   []string
	step               string
	line               int
	timeout            time.Duration
	paritySkip         string
	pending            string
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/scripts/*.spec.ts")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusCase
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := corpusCase{name: filepath.Base(p), path: p, source: string(src), timeout: 15 * time.Second}
		for i, l := range strings.Split(c.source, "\n") {
			if strings.HasSuffix(l, "// fails here") {
				c.line = i + 1
			}
		}
		expect := ""
		sc := bufio.NewScanner(strings.NewReader(c.source))
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "// ") {
				break
			}
			key, val, ok := strings.Cut(strings.TrimPrefix(line, "// "), ": ")
			if !ok {
				continue
			}
			switch key {
			case "expect":
				expect = val
			case "message":
				c.messages = append(c.messages, val)
			case "absent":
				c.absent = append(c.absent, val)
			case "step":
				c.step = val
			case "timeout":
				ms, _ := strconv.Atoi(val)
				c.timeout = time.Duration(ms) * time.Millisecond
			case "parity":
				c.paritySkip = val
			case "pending":
				c.pending = val
			}
		}
		if expect != "pass" && expect != "fail" {
			t.Fatalf("%s: header lacks // expect: pass|fail", p)
		}
		c.pass = expect == "pass"
		out = append(out, c)
	}
	return out
}

// corpusEnv is process.env of every corpus script: the site, a URL where nothing listens,
// and SHOP_PASSWORD, which is also a secret.
func corpusEnv(t testing.TB, baseURL string) map[string]string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/"
	l.Close()
	return map[string]string{"BASE_URL": baseURL, "DOWN_URL": down, "SHOP_PASSWORD": "hunter2-secret"}
}

// TestCorpus runs every script of testdata/scripts in real Chromium against the pages of
// testdata/site and checks its outcome, message, failing step and location.
func TestCorpus(t *testing.T) {
	srv := site(t)
	env := corpusEnv(t, srv.URL)
	cases := loadCorpus(t)
	if len(cases) < 30 {
		t.Fatalf("the corpus has %d scripts, want at least 30", len(cases))
	}
	pinned := loadVerdicts(t)
	for _, c := range cases {
		if _, ok := pinned.Verdicts[c.name]; !ok && c.paritySkip == "" {
			t.Logf("%s has no pinned verdict of real Playwright: run `make test-playwright-parity`", c.name)
		}
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.name, ".spec.ts"), func(t *testing.T) {
			t.Parallel()
			opts := Options{
				Env: env, Secrets: []string{"hunter2-secret"}, Timeout: c.timeout,
				Request: RequestOptions{AllowPrivate: true}, // the site is on 127.0.0.1
			}
			rep := runScript(t, c.name, c.source, opts)
			if f := rep.Failure; f != nil && strings.Contains(f.Message, "ERR_NETWORK_CHANGED") {
				// Chromium aborts loads in flight when any interface on the host changes (another
				// test's veth pair, a container network): a fact of the machine, not of the
				// script, so the run is made again once.
				t.Logf("the host's network changed during the run; running it again: %s", f.Message)
				rep = runScript(t, c.name, c.source, opts)
			}
			if c.pending != "" {
				// Until the feature lands, the script must fail saying what is missing.
				if rep.Passed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "not supported") {
					t.Fatalf("a script pending %s: want a 'not supported' failure (or remove its pending header):\n%s", c.pending, describeReport(rep))
				}
				return
			}
			if v, ok := pinned.Verdicts[c.name]; ok && v != rep.Passed {
				t.Errorf("real Playwright %s passed=%v (pinned in %s); this runtime passed=%v", pinned.Playwright, v, verdictsFile, rep.Passed)
			}
			if rep.Passed != c.pass {
				t.Fatalf("passed = %v, want %v\n%s", rep.Passed, c.pass, describeReport(rep))
			}
			if c.pass {
				if rep.Failure != nil || rep.Screenshot != nil {
					t.Errorf("a passing run has a failure or a screenshot:\n%s", describeReport(rep))
				}
				return
			}
			f := rep.Failure
			if f == nil {
				t.Fatalf("a failed run without a failure:\n%s", describeReport(rep))
			}
			for _, m := range c.messages {
				if !strings.Contains(f.Message, m) {
					t.Errorf("message lacks %q:\n%s", m, f.Message)
				}
			}
			if c.line > 0 {
				if want := fmt.Sprintf("%s:%d:", c.name, c.line); !strings.HasPrefix(f.Location, want) {
					t.Errorf("location = %q, want %s…", f.Location, want)
				}
			}
			if c.step != "" && f.Step != c.step {
				t.Errorf("step = %q, want %q", f.Step, c.step)
			}
			if !strings.Contains(rep.Summary, strings.SplitN(f.Message, "\n", 2)[0]) {
				t.Errorf("summary %q lacks the message's first line", rep.Summary)
			}
			if f.Cause != CauseScript && len(rep.Screenshot) == 0 {
				t.Errorf("no failure screenshot")
			}
			for _, a := range c.absent {
				if strings.Contains(describeReport(rep), a) {
					t.Errorf("the report contains %q:\n%s", a, describeReport(rep))
				}
			}
		})
	}
}

// describeReport prints a report's texts for failure messages.
func describeReport(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "summary: %s\n", rep.Summary)
	if f := rep.Failure; f != nil {
		fmt.Fprintf(&b, "failure (%s) at %s in %q:\n%s\n", f.Cause, f.Location, f.Step, f.Message)
	}
	for _, tr := range rep.Tests {
		fmt.Fprintf(&b, "test %q: %s %s %s\n", tr.Title, tr.Status, tr.Duration.Round(time.Millisecond), tr.Error)
		var steps func([]StepReport, string)
		steps = func(ss []StepReport, indent string) {
			for _, s := range ss {
				fmt.Fprintf(&b, "%s- %s [%s] %s %s %s\n", indent, s.Title, s.Category, s.Location, s.Duration.Round(time.Millisecond), s.Error)
				steps(s.Steps, indent+"  ")
			}
		}
		steps(tr.Steps, "  ")
	}
	for _, l := range rep.Console {
		fmt.Fprintf(&b, "console %s\n", l)
	}
	return b.String()
}
