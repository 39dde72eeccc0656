package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logSink receives a process's stdout and stderr: it writes them to a file and keeps the
// lines, so tests can wait for a log message (the binaries log JSON lines).
type logSink struct {
	path string

	mu      sync.Mutex
	f       *os.File
	partial []byte
	lines   []string
}

func newLogSink(path string) (*logSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &logSink{path: path, f: f}, nil
}

func (l *logSink) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b); err != nil {
		return 0, err
	}
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(b), nil
}

func (l *logSink) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.f.Close()
}

// find returns the first JSON log line whose msg is msg.
func (l *logSink) find(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if !strings.Contains(line, msg) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			return m, true
		}
	}
	return nil, false
}

// contains reports whether any line contains s.
func (l *logSink) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// tail is the last n lines, and how many were left out.
func (l *logSink) tail(n int) ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.lines
	if len(l.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(l.partial))
	}
	if len(lines) <= n {
		return lines, 0
	}
	return lines[len(lines)-n:], len(lines) - n
}

// proc is one run of a binary.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *logSink
	done chan struct{}
	err  error // Wait's error, once done is closed
}

// startProc starts bin with env (and no other VANTAGE_* variable), logging to
// <logDir>/<name>.log. The process is killed when the test ends, and its log's tail is printed
// if the test failed.
func startProc(t *testing.T, name, bin, logDir string, env map[string]string) *proc {
	t.Helper()
	sink, err := newLogSink(filepath.Join(logDir, name+".log"))
	if err != nil {
		t.Fatalf("%s: log file: %v", name, err)
	}
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VANTAGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = sink, sink
	p := &proc{name: name, cmd: cmd, log: sink, done: make(chan struct{})}
	// Registered before the kill below, so it runs after it: the log is complete by then.
	t.Cleanup(func() {
		if t.Failed() {
			lines, skipped := sink.tail(2000)
			var b strings.Builder
			fmt.Fprintf(&b, "=== %s log (%s", name, sink.path)
			if skipped > 0 {
				fmt.Fprintf(&b, ", %d earlier lines left out", skipped)
			}
			b.WriteString(") ===\n")
			for _, l := range lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
			t.Log(b.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		sink.close()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	if p.exited() {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("%s: kill: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s: still running 10s after SIGKILL", p.name)
	}
}

// terminate sends SIGTERM and waits up to within for the process to end; it fails the test if
// the process does not end in time (it is then killed) or does not exit cleanly.
func (p *proc) terminate(t testing.TB, within time.Duration) {
	t.Helper()
	if p.exited() {
		t.Fatalf("%s: exited before SIGTERM: %v", p.name, p.err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("%s: SIGTERM: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(within):
		p.kill(t)
		t.Fatalf("%s: still running %s after SIGTERM", p.name, within)
	}
	if p.err != nil {
		t.Fatalf("%s: exit after SIGTERM: %v (want a clean exit)", p.name, p.err)
	}
}

// waitLog waits for a JSON log line with msg and returns it; it fails the test when the
// process exits first or within passes.
func (p *proc) waitLog(t testing.TB, msg string, within time.Duration) map[string]any {
	t.Helper()
	line, err := p.awaitLog(msg, within)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// awaitLog waits for a JSON log line with msg; it returns an error when the process exits
// first or within passes.
func (p *proc) awaitLog(msg string, within time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(within)
	for {
		if line, ok := p.log.find(msg); ok {
			return line, nil
		}
		if p.exited() {
			if line, ok := p.log.find(msg); ok {
				return line, nil
			}
			return nil, fmt.Errorf("%s exited (%v) before logging %q", p.name, p.err, msg)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s did not log %q within %s", p.name, msg, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
