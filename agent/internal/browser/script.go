package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
	"github.com/vantagehq/vantage/pkg/browserscript"
	"github.com/vantagehq/vantage/pkg/redact"
)

// ScriptRequest is a scripted check.
type ScriptRequest struct {
	// Filename names the script in locations ("login.spec.ts"). Default
	// browserscript.DefaultFilename.
	Filename string
	Source   string
	Env      map[string]string // process.env
	Secrets  []string          // redacted from everything reported
	// UserAgent replaces the browser's on every page of the run (the probes' User-Agent, or
	// the check's own); empty keeps the browser's.
	UserAgent string
	// BaseURL is the script's baseURL (pwscript.Options.BaseURL); "" for none.
	BaseURL string
	// Timeout is the check's configured timeout, which "Test timeout of …ms exceeded." names;
	// ctx's deadline, a little shorter once the job has waited, is what bounds the run.
	// Zero: the time to ctx's deadline.
	Timeout time.Duration
}

// ScriptRun is how a scripted check went.
type ScriptRun struct {
	// Report is the script runtime's report; nil when the worker produced none, and then
	// Problem and Message say why.
	Report  *pwscript.Report
	Problem string // one of the Problem values when Report is nil
	Message string
	// Blocked names what the egress proxy refused (private targets), or "".
	Blocked string
	// Screenshot is the page at the failure (JPEG or PNG, at most wire.MaxScreenshotBytes).
	Screenshot []byte
	// Duration is the wall-clock time of the run, worker start to exit.
	Duration time.Duration
}

// Why a script run has no report.
const (
	ProblemSyntax  = "syntax"  // the script does not compile
	ProblemTimeout = "timeout" // the worker did not finish by the deadline and was killed
	ProblemMemory  = "memory"  // the worker hit its memory cap
	ProblemCrash   = "crash"   // the worker failed otherwise
)

// maxReport bounds what is read of a worker's report (it carries a screenshot).
const maxReport = 8 << 20

// RunScript runs req's script in a worker process (scriptworker) on a fresh browser context of
// the shared browser. ctx's deadline is the check's timeout: it bounds the whole run, and the
// worker is killed when it passes. The worker's memory is capped at Config.WorkerMemory.
//
// A script that fails, loops, runs out of memory or never finishes is a ScriptRun, not an
// error. The error is ErrBrowserLost when the browser went away during the run, or ctx's error
// when ctx was cancelled.
func (b *Browser) RunScript(ctx context.Context, req ScriptRequest) (*ScriptRun, error) {
	start := time.Now()
	prog, err := b.programs.Get(req.Filename, req.Source)
	if err != nil {
		var se *browserscript.SyntaxError
		if errors.As(err, &se) {
			return &ScriptRun{Problem: ProblemSyntax, Message: "the script does not compile: " + se.Error()}, nil
		}
		return nil, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil, errors.New("RunScript needs a deadline")
	}
	s, err := b.newSession(ctx, detached)
	if err != nil {
		return nil, err
	}
	defer s.close()
	in := scriptworker.Input{
		BrowserContextID: string(s.id), TargetID: string(s.targetID),
		Program: scriptworker.Program{Filename: prog.Filename, Code: prog.Code, Imports: prog.Imports},
		Env:     req.Env, Secrets: req.Secrets, DeadlineUnixMs: deadline.UnixMilli(), UserAgent: req.UserAgent,
		TestTimeoutMs: req.Timeout.Milliseconds(), BaseURL: req.BaseURL,
		// Well below the cap: the cap counts all of the worker, whose Go runtime maps about twice
		// the live heap, and the heap is sampled, not checked on every allocation.
		HeapLimit:            uint64(b.cfg.WorkerMemory) / 4,
		AllowPrivateRequests: !b.cfg.BlockPrivateTargets,
	}
	if s.proxy != nil {
		// The script's later tests open browser contexts of their own: behind the same proxy.
		in.ProxyServer = s.proxy.URL()
	}
	var run *ScriptRun
	if w, err := b.takeWorker(s.inst); err != nil {
		b.m.workers.WithLabelValues("crashed").Inc()
		run = &ScriptRun{Problem: ProblemCrash, Message: "cannot start the script's worker: " + err.Error()}
	} else {
		run = w.run(ctx, in, time.Until(deadline))
	}
	run.Duration = time.Since(start)
	run.Blocked = s.blocked()
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, ctx.Err()
	}
	if s.inst.gone() || (run.Report != nil && run.Report.Failure != nil && run.Report.Failure.Cause == pwscript.CauseBrowser) {
		if err := s.lostOr(ctx, errors.New("the script's browser connection failed")); errors.Is(err, ErrBrowserLost) {
			return nil, err
		}
	}
	// Refusals are recorded before the request is failed: none of the run's can be missing.
	if r := s.refused(); r != "" {
		run.refuse(r, req.Secrets)
	}
	if run.Report != nil && len(run.Report.Screenshot) > 0 {
		run.Screenshot = Shrink(run.Report.Screenshot)
	}
	return run, nil
}

// refuse fails the run because its pages tried to load what no check may (the scheme guard):
// the script's fault, reported in place of what the run itself made of the refusal.
func (run *ScriptRun) refuse(message string, secrets []string) {
	message = redact.New(secrets).String(message)
	if run.Report == nil {
		// The run did not finish (timeout, memory, crash); the refusal is what to fix first.
		run.Report, run.Problem, run.Message = &pwscript.Report{}, "", ""
	}
	run.Report.Refuse(message)
}

func decodeReport(b []byte) *pwscript.Report {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	var rep pwscript.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil
	}
	return &rep
}

func signaled(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// capped is a buffer that keeps at most max bytes (the first ones) and drops the rest.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

func (c *capped) String() string { return string(c.Bytes()) }
