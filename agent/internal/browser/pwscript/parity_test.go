package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// parityDirEnv names the directory where `make test-playwright-parity` installed
// @playwright/test (parity/package-lock.json); TestPlaywrightParity runs only with it.
const parityDirEnv = "PWSCRIPT_PARITY_DIR"

// TestPlaywrightParity runs the corpus under real Playwright Test (Node.js, the pinned
// @playwright/test, the same Chromium and the same pages) and under this runtime, and fails
// for every script on which the two disagree about pass or fail.
func TestPlaywrightParity(t *testing.T) {
	dir := os.Getenv(parityDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: run `make test-playwright-parity`, which installs @playwright/test and runs this test", parityDirEnv)
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("%s is set but npx is not installed: %v", parityDirEnv, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@playwright", "test")); err != nil {
		t.Fatalf("@playwright/test is not installed in %s: %v", dir, err)
	}
	srv := site(t)
	env := corpusEnv(t, srv.URL)
	var cases []corpusCase
	for _, c := range loadCorpus(t) {
		if c.paritySkip == "" {
			cases = append(cases, c)
		}
	}

	// This runtime, all scripts at once.
	ours := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, c := range cases {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rep := runScript(t, c.name, c.source, Options{Env: env, Secrets: []string{"hunter2-secret"}, Timeout: c.timeout,
				Request: RequestOptions{AllowPrivate: true}})
			mu.Lock()
			ours[c.name] = rep.Passed
			mu.Unlock()
		})
	}

	// Playwright: scripts with test.only in their own run, since .only focuses a whole run.
	var shared []corpusCase
	var runs [][]corpusCase
	for _, c := range cases {
		if strings.Contains(c.source, ".only(") {
			runs = append(runs, []corpusCase{c})
		} else {
			shared = append(shared, c)
		}
	}
	runs = append(runs, shared)
	theirs := map[string]bool{}
	for i, run := range runs {
		for name, ok := range runPlaywright(t, npx, dir, fmt.Sprintf("run%d", i), run, env) {
			theirs[name] = ok
		}
	}
	wg.Wait()

	agree := 0
	var disagreements []string
	for _, c := range cases {
		p, ok := theirs[c.name]
		switch {
		case !ok:
			disagreements = append(disagreements, fmt.Sprintf("%s: Playwright reported no result", c.name))
		case c.pending != "":
			// Compared once the feature lands; Playwright's verdict is pinned meanwhile.
		case p != ours[c.name]:
			disagreements = append(disagreements, fmt.Sprintf("%s: Playwright passed=%v, this runtime passed=%v (expected %v)", c.name, p, ours[c.name], c.pass))
		default:
			agree++
		}
	}
	pending := 0
	for _, c := range cases {
		if c.pending != "" {
			pending++
		}
	}
	t.Logf("Playwright parity: %d of %d scripts agree on pass/fail, %d of them pending features of the runtime (%d more scripts are runtime-only: sandbox and unsupported-API cases)", agree, len(cases), pending, len(loadCorpus(t))-len(cases))
	if err := writeVerdicts(theirs); err != nil {
		t.Errorf("pin the verdicts: %v", err)
	}
	for _, d := range disagreements {
		t.Error(d)
	}
}

// runPlaywright runs cases with `npx playwright test` in dir/name and returns, per script,
// whether all its tests had the expected outcome.
func runPlaywright(t *testing.T, npx, dir, name string, cases []corpusCase, env map[string]string) map[string]bool {
	t.Helper()
	work := filepath.Join(dir, name)
	tests := filepath.Join(work, "tests")
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(tests, c.name), []byte(c.source), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	results := filepath.Join(work, "results.json")
	config := fmt.Sprintf(`module.exports = {
  testDir: %q,
  timeout: 15000,
  workers: 2,
  retries: 0,
  reporter: [['json', { outputFile: %q }]],
  use: {
    headless: true,
    launchOptions: {
      executablePath: %q,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
};
`, tests, results, chromiumPath)
	configPath := filepath.Join(work, "playwright.config.js")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// Node resolves @playwright/test from the scripts' directory upwards: link the install.
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "--no-install", "playwright", "test", "--config", configPath)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	raw, rerr := os.ReadFile(results)
	if rerr != nil {
		t.Fatalf("playwright produced no results (%v): %v\n%s", err, rerr, out)
	}
	var rep pwReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("decode %s: %v", results, err)
	}
	for _, e := range rep.Errors {
		t.Logf("playwright error: %s", e.Message)
	}
	got := map[string]bool{}
	for _, s := range rep.Suites {
		ok, n := s.outcome()
		got[filepath.Base(s.File)] = ok && n > 0
	}
	for _, c := range cases {
		if _, ran := got[c.name]; !ran && slices.ContainsFunc(rep.Errors, func(e pwError) bool { return strings.Contains(e.Message, c.name) }) {
			got[c.name] = false // the file did not load
		}
	}
	return got
}

// pwReport is the part of Playwright's JSON report the comparison needs.
type pwReport struct {
	Suites []pwSuite `json:"suites"`
	Errors []pwError `json:"errors"`
}

type pwError struct {
	Message string `json:"message"`
}

type pwSuite struct {
	File   string    `json:"file"`
	Specs  []pwSpec  `json:"specs"`
	Suites []pwSuite `json:"suites"`
}

type pwSpec struct {
	Title string `json:"title"`
	OK    bool   `json:"ok"`
}

// outcome tells whether every spec of the suite had its expected outcome, and how many ran.
func (s pwSuite) outcome() (bool, int) {
	ok, n := true, len(s.Specs)
	for _, sp := range s.Specs {
		ok = ok && sp.OK
	}
	for _, c := range s.Suites {
		cok, cn := c.outcome()
		ok, n = ok && cok, n+cn
	}
	return ok, n
}

// verdictsFile pins what real Playwright decided on each corpus script, with its version:
// TestCorpus (make test) holds this runtime to it without Node.js; TestPlaywrightParity
// (make test-playwright-parity) rewrites it.
const verdictsFile = "testdata/playwright-verdicts.json"

type verdicts struct {
	Playwright string          `json:"playwright"` // the @playwright/test version of parity/package.json
	Verdicts   map[string]bool `json:"verdicts"`   // by script: every test had its expected outcome
}

func loadVerdicts(t testing.TB) verdicts {
	t.Helper()
	var v verdicts
	raw, err := os.ReadFile(verdictsFile)
	if err != nil {
		t.Fatalf("read the pinned Playwright verdicts: %v", err)
	}
	if err := json.Unmarshal(raw, &v); err != nil || len(v.Verdicts) == 0 || v.Playwright == "" {
		t.Fatalf("%s: no verdicts or no version (%v)", verdictsFile, err)
	}
	return v
}

func writeVerdicts(theirs map[string]bool) error {
	raw, err := os.ReadFile("parity/package.json")
	if err != nil {
		return err
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return err
	}
	out, err := json.MarshalIndent(verdicts{Playwright: pkg.DevDependencies["@playwright/test"], Verdicts: theirs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(verdictsFile, append(out, '\n'), 0o644)
}
