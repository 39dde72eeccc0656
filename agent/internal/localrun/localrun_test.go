package localrun

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// agentBinary is vantage-agent, built once by TestMain: the runner is tested as the process
// script authors run.
var agentBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "localrun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	agentBinary = filepath.Join(dir, "vantage-agent")
	_, file, _, _ := runtime.Caller(0)
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "the go command is needed to build vantage-agent:", err)
		return 1
	}
	build := exec.Command(goBin, "build", "-o", agentBinary, "./cmd/vantage-agent")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build vantage-agent: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// shop is the site the scripts test.
func shop(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1>Welcome</h1><button>Buy</button>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// runTest runs `vantage-agent test args…` in dir and returns its exit code and output.
func runTest(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(agentBinary, append([]string{"test"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run vantage-agent test: %v", err)
	return 0, "", ""
}

func writeScript(t *testing.T, dir, name, source string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRunnerPasses(t *testing.T) {
	t.Parallel()
	srv := shop(t)
	dir := t.TempDir()
	writeScript(t, dir, "shop.spec.ts", `import { test, expect } from '@playwright/test';

test('home', async ({ page }, testInfo) => {
  await page.goto('/');
  await expect(page.getByRole('heading')).toHaveText('Welcome');
  await page.screenshot({ path: 'shots/home.png' });
  await testInfo.attach('who.txt', { body: process.env.WHO });
});
`)
	code, out, errOut := runTest(t, dir, "shop.spec.ts", "--url", srv.URL, "--env", "WHO=me", "--out", "results")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Running 1 test using 1 worker", "✓  1 home (", "✓ page.goto('/') (",
		"results/shots-home.png", "results/who.txt", "1 passed ("} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	shot, err := os.ReadFile(filepath.Join(dir, "results", "shots-home.png"))
	if err != nil || !bytes.HasPrefix(shot, []byte("\x89PNG")) {
		t.Errorf("shots-home.png: %v, %d bytes", err, len(shot))
	}
	if who, err := os.ReadFile(filepath.Join(dir, "results", "who.txt")); err != nil || string(who) != "me" {
		t.Errorf("who.txt = %q, %v", who, err)
	}
}

func TestRunnerFails(t *testing.T) {
	t.Parallel()
	srv := shop(t)
	dir := t.TempDir()
	writeScript(t, dir, "cart.spec.ts", `import { test, expect } from '@playwright/test';

test('add to cart', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('button', { name: 'Add to cart' }).click({ timeout: 500 });
});
`)
	code, out, errOut := runTest(t, dir, "--url", srv.URL, "cart.spec.ts") // flags before the file too
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"✘  1 add to cart (",
		"1) add to cart",
		"locator.click: Timeout 500ms exceeded.\n    Call log:\n      - waiting for getByRole('button', { name: 'Add to cart' })",
		"    > 5 |   await page.getByRole('button', { name: 'Add to cart' }).click({ timeout: 500 });\n",
		"at cart.spec.ts:5:",
		"vantage-results/failure.jpg",
		"1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "vantage-results", "failure.jpg")); err != nil {
		t.Errorf("the failure screenshot: %v", err)
	}
}

func TestRunnerUsageAndCompileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeScript(t, dir, "broken.spec.ts", "import { test } from '@playwright/test';\ntest('x', async () => { await ; });\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "want exactly one script file"},
		{"two files", []string{"a.spec.ts", "b.spec.ts"}, "want exactly one script file"},
		{"bad env", []string{"broken.spec.ts", "--env", "NOVALUE"}, "want NAME=VALUE"},
		{"missing file", []string{"missing.spec.ts"}, "missing.spec.ts: no such file"},
		{"compile error", []string{"broken.spec.ts"}, "the script does not compile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runTest(t, dir, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q (stdout %q)", code, errOut, tc.want, out)
			}
		})
	}
	code, _, help := runTest(t, dir, "-h")
	if code != 0 || !strings.Contains(help, "Local runs may reach private addresses") || !strings.Contains(help, "-block-private") {
		t.Errorf("-h exits %d:\n%s", code, help)
	}
}
