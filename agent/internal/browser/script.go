package browser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
	"github.com/vantagehq/vantage/pkg/browserscript"
)

// ScriptRequest is a scripted check.
type ScriptRequest struct {
	// Filename names the script in locations ("login.spec.ts"). Default
	// browserscript.DefaultFilename.
	Filename string
	Source   string
	Env      map[string]string // process.env
	Secrets  []string          // redacted from everything reported
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
	prog, err := b.programs.get(req.Filename, req.Source)
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
		WSURL: s.inst.proc.wsURL, BrowserContextID: string(s.id), TargetID: string(s.targetID),
		Program: scriptworker.Program{Filename: prog.Filename, Code: prog.Code, Imports: prog.Imports},
		Env:     req.Env, Secrets: req.Secrets, DeadlineUnixMs: deadline.UnixMilli(),
	}
	run := b.work(ctx, in, time.Until(deadline))
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
	if run.Report != nil && len(run.Report.Screenshot) > 0 {
		run.Screenshot = Shrink(run.Report.Screenshot)
	}
	return run, nil
}

// work runs one worker process for in and waits for its report, killing it at ctx's end.
func (b *Browser) work(ctx context.Context, in scriptworker.Input, timeout time.Duration) *ScriptRun {
	input, err := json.Marshal(in)
	if err != nil {
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot hand the script to its worker: " + err.Error()}
	}
	cmd := exec.Command(b.cfg.WorkerCommand[0], b.cfg.WorkerCommand[1:]...)
	// Nothing of the agent's environment (tokens, credentials) reaches the worker. No soft
	// memory limit either: near one, the Go runtime collects garbage ever harder and a runaway
	// script crawls to its deadline instead of hitting the cap at once.
	cmd.Env = []string{"GOTRACEBACK=none"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout := &capped{max: maxReport}
	stderr := &capped{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The limits must hold before the worker runs any of the script: it waits for the script
	// on its standard input, which gets it only once the limits are set (limit, below).
	pr, pw, err := os.Pipe()
	if err != nil {
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot start the script worker: " + err.Error()}
	}
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		b.m.workers.WithLabelValues("crashed").Inc()
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot start the script worker: " + err.Error()}
	}
	pr.Close()
	pid := cmd.Process.Pid
	limitErr := b.limit(pid, timeout)
	if limitErr == nil {
		go func() {
			pw.Write(input) //nolint:errcheck // a worker that died early shows in its exit
			pw.Close()
		}()
	} else {
		pw.Close()
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	killed := false
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // it may have exited meanwhile
		waitErr = <-exited
		killed = true
	}
	if limitErr != nil {
		b.m.workers.WithLabelValues("crashed").Inc()
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot limit the script worker: " + limitErr.Error()}
	}
	if rep := decodeReport(stdout.Bytes()); rep != nil {
		b.m.workers.WithLabelValues("reported").Inc()
		return &ScriptRun{Report: rep}
	}
	errText := stderr.String()
	switch {
	case killed || signaled(waitErr, syscall.SIGXCPU):
		b.m.workers.WithLabelValues("killed_at_deadline").Inc()
		return &ScriptRun{Problem: ProblemTimeout, Message: fmt.Sprintf(
			"the script did not finish within the check's timeout of %s and was stopped", timeout.Round(time.Millisecond))}
	case strings.Contains(errText, "out of memory") || strings.Contains(errText, "cannot allocate memory"):
		b.m.workers.WithLabelValues("out_of_memory").Inc()
		return &ScriptRun{Problem: ProblemMemory, Message: fmt.Sprintf(
			"the script used more than the %d MiB of memory a script may use, and was stopped", b.cfg.WorkerMemory>>20)}
	}
	b.m.workers.WithLabelValues("crashed").Inc()
	b.log.Warn("script worker failed", "err", fmt.Sprint(waitErr), "stderr", lastLine(errText))
	return &ScriptRun{Problem: ProblemCrash, Message: "the script's worker failed: " + fmt.Sprint(waitErr)}
}

// limit caps the worker's memory (RLIMIT_DATA: its heap and every private writable mapping),
// its CPU time (a backstop for the deadline), and forbids it to write files or dump core.
func (b *Browser) limit(pid int, timeout time.Duration) error {
	cpu := uint64(timeout.Seconds()) + 5
	for _, l := range []struct {
		resource int
		value    uint64
	}{
		{unix.RLIMIT_DATA, uint64(b.cfg.WorkerMemory)},
		{unix.RLIMIT_CPU, cpu},
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_CORE, 0},
	} {
		if err := unix.Prlimit(pid, l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}, nil); err != nil {
			syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // never run it unlimited
			return fmt.Errorf("prlimit %d: %w", l.resource, err)
		}
	}
	return nil
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

// programCache keeps transformed scripts, so a check's script is compiled once per agent, not
// once per run.
type programCache struct {
	mu    sync.Mutex
	byKey map[[32]byte]*browserscript.Program
	order [][32]byte
}

// programCacheSize bounds the cache (a program is about the size of its script).
const programCacheSize = 512

func (c *programCache) get(filename, source string) (*browserscript.Program, error) {
	if filename == "" {
		filename = browserscript.DefaultFilename
	}
	key := sha256.Sum256([]byte(filename + "\x00" + source))
	c.mu.Lock()
	p, ok := c.byKey[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := browserscript.Transform(filename, source)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[[32]byte]*browserscript.Program{}
	}
	if _, ok := c.byKey[key]; !ok {
		c.byKey[key] = p
		c.order = append(c.order, key)
		if len(c.order) > programCacheSize {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
	}
	return p, nil
}
