// Package localrun is `vantage-agent test`: it runs a browser check's script on the author's
// machine with exactly the runtime an agent uses — the same compile (browserscript), the same
// script worker process and pwscript runtime, the same Chromium launch and address policy
// (browser.Browser) — and prints the outcome as Playwright's list reporter does, writing the
// run's screenshots and artifacts to a directory.
package localrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/agent/internal/browser"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Command is the agent's subcommand that runs Main.
const Command = "test"

// Exit codes of Main.
const (
	ExitPassed = 0 // every test passed
	ExitFailed = 1 // a test failed (or the run timed out, or its worker crashed)
	ExitUsage  = 2 // bad arguments, a script that does not compile, no browser
)

const usage = `usage: vantage-agent test FILE [--url BASE] [--env NAME=VALUE ...] [--out DIR] [--timeout DURATION]

Runs a browser check's script (a Playwright Test file) locally with the runtime the agent
uses: the same compile, script worker, Chromium launch and sandbox. It prints each test and
step with its duration, the failure with its location and line, and writes the run's
screenshots and artifacts to --out.

Local runs may reach private addresses (localhost, 10.0.0.0/8, ...), so that a site under
development can be tested; agents refuse them unless VANTAGE_ALLOW_PRIVATE_TARGETS is set.
Pass --block-private to test as an agent would.

Exit status: 0 when every test passed, 1 when a test failed, 2 for usage or compile errors.

Options:
`

// envFlags collects repeated --env NAME=VALUE.
type envFlags map[string]string

func (e envFlags) String() string { return "" }

func (e envFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	e[name] = value
	return nil
}

// options are Main's parsed arguments.
type options struct {
	file, baseURL, out string
	env                envFlags
	timeout            time.Duration
	blockPrivate       bool
	browserPath        string
}

// parse reads args (after the subcommand); flags may come before or after the file.
func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{env: envFlags{}}
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.baseURL, "url", "", "the baseURL: page.goto('/path') resolves against it")
	fs.Var(o.env, "env", "a variable of process.env, NAME=VALUE (repeatable)")
	fs.StringVar(&o.out, "out", "vantage-results", "the directory the screenshots and artifacts are written to")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "the check's timeout: the whole run's time")
	fs.BoolVar(&o.blockPrivate, "block-private", false, "refuse private addresses, as an agent does by default")
	fs.StringVar(&o.browserPath, "browser", os.Getenv("VANTAGE_BROWSER_PATH"), "the Chromium executable (default $VANTAGE_BROWSER_PATH, else found)")
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) != 1:
		fs.Usage()
		return nil, errors.New("want exactly one script file")
	case o.timeout <= 0:
		return nil, errors.New("--timeout must be positive")
	}
	o.file = files[0]
	return o, nil
}

// Main runs the subcommand with args (those after "test") and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitPassed
	}
	if err != nil {
		fmt.Fprintln(stderr, "vantage-agent test:", err)
		return ExitUsage
	}
	source, err := os.ReadFile(o.file)
	if err != nil {
		fmt.Fprintln(stderr, "vantage-agent test:", err)
		return ExitUsage
	}
	b, stop, err := startBrowser(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "vantage-agent test: start the browser:", err)
		return ExitUsage
	}
	defer stop()

	runCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	run, err := b.RunScript(runCtx, browser.ScriptRequest{
		Filename: filepath.Base(o.file), Source: string(source), Env: o.env, BaseURL: o.baseURL, Timeout: o.timeout,
	})
	if err != nil {
		fmt.Fprintln(stderr, "vantage-agent test:", err)
		return ExitFailed
	}
	if run.Problem == browser.ProblemSyntax {
		fmt.Fprintln(stderr, run.Message)
		return ExitUsage
	}
	written, werr := writeFiles(o.out, run)
	report(stdout, string(source), run, written)
	if werr != nil {
		fmt.Fprintln(stderr, "vantage-agent test: write the results:", werr)
	}
	if run.Report == nil || !run.Report.Passed {
		return ExitFailed
	}
	return ExitPassed
}

// startBrowser starts the agent's browser as the agent does (browser.New, Start, Run) and
// returns a function that stops it.
func startBrowser(ctx context.Context, o *options, stderr io.Writer) (*browser.Browser, func(), error) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := browser.New(browser.Config{
		Path: o.browserPath, Concurrency: 1, BlockPrivateTargets: o.blockPrivate,
		// Chromium's sandbox refuses to run as root, as the agent's default says.
		Sandbox: os.Geteuid() != 0,
	}, browser.Deps{Logger: log, Registerer: prometheus.NewRegistry()})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	if err := b.Start(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx) // it ends when ctx does, stopping the browser
	}()
	return b, func() { cancel(); <-done }, nil
}

// writeFiles writes the run's failure screenshot and artifacts to dir and returns their
// paths. Artifact names are one path segment (pwscript flattens them), so none leaves dir.
func writeFiles(dir string, run *browser.ScriptRun) ([]string, error) {
	type file struct {
		name string
		body []byte
	}
	var files []file
	if len(run.Screenshot) > 0 {
		ext := ".png"
		if wire.ScreenshotType(run.Screenshot) == "image/jpeg" {
			ext = ".jpg"
		}
		files = append(files, file{"failure" + ext, run.Screenshot})
	}
	if run.Report != nil {
		for _, a := range run.Report.Artifacts {
			files = append(files, file{a.Name, a.Body})
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		if f.name != filepath.Base(f.name) || f.name == "." || f.name == ".." {
			return written, fmt.Errorf("artifact name %q is not a file name", f.name)
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.body, 0o600); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}
