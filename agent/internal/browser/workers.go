package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
)

// workerProc is a script worker process (scriptworker): started ahead of the run that will use
// it, under its memory cap, connected to the browser and waiting for its run on stdin.
type workerProc struct {
	b       *Browser
	inst    *instance // the browser launch it is connected to
	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *capped
	stderr  *capped
	exited  chan struct{} // closed once the process has been reaped; then waitErr is set
	waitErr error
}

// spawn starts a worker for inst: limited before it reads anything, then told the browser's
// address, which it connects to while it waits for a run.
func (b *Browser) spawn(inst *instance) (*workerProc, error) {
	cmd := exec.Command(b.cfg.WorkerCommand[0], b.cfg.WorkerCommand[1:]...) //nolint:gosec // the agent's own worker command, from its configuration
	// Nothing of the agent's environment (tokens, credentials) reaches the worker. No soft
	// memory limit either: near one, the Go runtime collects garbage ever harder and a runaway
	// script crawls to its deadline instead of hitting the cap at once.
	cmd.Env = []string{"GOTRACEBACK=none"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	w := &workerProc{b: b, inst: inst, cmd: cmd, stdout: &capped{max: maxReport}, stderr: &capped{max: 16 << 10},
		exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.stdout, w.stderr
	// The limits must hold before the worker reads anything: it waits on its standard input,
	// which gets its first byte only once the limits are set.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pr.Close()
	w.stdin = pw
	go func() {
		w.waitErr = cmd.Wait()
		close(w.exited)
	}()
	if err := b.limit(cmd.Process.Pid); err != nil {
		w.kill()
		return nil, err
	}
	hello, _ := json.Marshal(scriptworker.Hello{WSURL: inst.proc.wsURL})
	if _, err := pw.Write(append(hello, '\n')); err != nil {
		w.kill()
		return nil, fmt.Errorf("greet the worker: %w", err)
	}
	return w, nil
}

// limit caps the worker's memory (RLIMIT_DATA: its heap and every private writable mapping)
// and forbids it to write files or dump core.
func (b *Browser) limit(pid int) error {
	for _, l := range []struct {
		resource int
		value    uint64
	}{
		{unix.RLIMIT_DATA, uint64(b.cfg.WorkerMemory)},
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_CORE, 0},
	} {
		if err := unix.Prlimit(pid, l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}, nil); err != nil {
			return fmt.Errorf("limit the script worker (resource %d): %w", l.resource, err)
		}
	}
	return nil
}

// takeWorker returns a ready worker of inst, or starts one; either way another is made ready
// for the next run.
func (b *Browser) takeWorker(inst *instance) (*workerProc, error) {
	defer b.want(warmWorker)
	for {
		select {
		case w := <-b.workers:
			if w.inst != inst || !w.alive() {
				w.kill()
				continue
			}
			return w, nil
		default:
			return b.spawn(inst)
		}
	}
}

func (w *workerProc) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return !w.inst.gone()
	}
}

// kill ends the worker and waits for it.
func (w *workerProc) kill() {
	syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // it may be gone already
	w.stdin.Close()
	<-w.exited
}

// run hands the worker its run and waits for the report, killing the worker when ctx ends (the
// check's deadline). timeout is the check's, for messages and the CPU-time backstop.
func (w *workerProc) run(ctx context.Context, in scriptworker.Input, timeout time.Duration) *ScriptRun {
	b := w.b
	// The deadline is the limit; CPU time a few seconds past it is a backstop should the
	// agent fail to kill the worker.
	cpu := uint64(timeout.Seconds()) + 5
	if err := unix.Prlimit(w.cmd.Process.Pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: cpu, Max: cpu}, nil); err != nil {
		w.kill()
		b.m.workers.WithLabelValues("crashed").Inc()
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot limit the script's worker: " + err.Error()}
	}
	input, err := json.Marshal(in)
	if err != nil {
		w.kill()
		return &ScriptRun{Problem: ProblemCrash, Message: "cannot hand the script to its worker: " + err.Error()}
	}
	go func() {
		w.stdin.Write(append(input, '\n')) //nolint:errcheck // a worker that died early shows in its exit
		w.stdin.Close()
	}()
	killed := false
	select {
	case <-w.exited:
	case <-ctx.Done():
		w.kill()
		killed = true
	}
	if rep := decodeReport(w.stdout.Bytes()); rep != nil {
		b.m.workers.WithLabelValues("reported").Inc()
		return &ScriptRun{Report: rep}
	}
	errText := w.stderr.String()
	switch {
	case killed || signaled(w.waitErr, syscall.SIGXCPU):
		b.m.workers.WithLabelValues("killed_at_deadline").Inc()
		return &ScriptRun{Problem: ProblemTimeout, Message: fmt.Sprintf(
			"the script did not finish within the check's timeout of %s and was stopped", timeout.Round(time.Millisecond))}
	case strings.Contains(errText, "out of memory") || strings.Contains(errText, "cannot allocate memory"):
		b.m.workers.WithLabelValues("out_of_memory").Inc()
		return &ScriptRun{Problem: ProblemMemory, Message: fmt.Sprintf(
			"the script used more than the %d MiB of memory a script may use, and was stopped", b.cfg.WorkerMemory>>20)}
	}
	b.m.workers.WithLabelValues("crashed").Inc()
	line := lastLine(errText)
	for _, sec := range in.Secrets {
		if sec != "" {
			line = strings.ReplaceAll(line, sec, "[REDACTED]")
		}
	}
	b.log.Warn("script worker failed", "err", fmt.Sprint(w.waitErr), "stderr", line)
	return &ScriptRun{Problem: ProblemCrash, Message: "the script's worker failed: " + fmt.Sprint(w.waitErr)}
}
