//go:build cluster

package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one run of a program, inside a host's namespace (ip netns exec) or on the test host.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // Wait's error, once done is closed

	mu       sync.Mutex
	expected bool // the test stopped it on purpose
}

// procs are every process the test started, for the end-of-test check that nothing exited
// on its own.
type procs struct {
	mu  sync.Mutex
	all []*proc
}

// start runs argv in namespace ns ("" for the test host) with env (and no VANTAGE_* variable
// of the test's own), appending its output to <logDir>/<name>.log. The kernel kills it with
// SIGKILL when the test process dies (Pdeathsig), and the test's cleanup kills it otherwise.
func (ps *procs) start(t *testing.T, logDir, name, ns string, env map[string]string, cred *syscall.Credential, argv ...string) *proc {
	t.Helper()
	if ns != "" {
		argv = append([]string{"ip", "netns", "exec", ns}, argv...)
	}
	path := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VANTAGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: start %v: %v", name, argv, err)
	}
	p := &proc{name: name, cmd: cmd, log: path, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.all = append(ps.all, p)
	ps.mu.Unlock()
	t.Cleanup(func() { p.stop(syscall.SIGKILL, 10*time.Second) })
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig, marks the exit as intended and waits up to within for the end.
func (p *proc) stop(sig syscall.Signal, within time.Duration) error {
	p.mu.Lock()
	p.expected = true
	p.mu.Unlock()
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: %s: %w", p.name, sig, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s: still running %s after %s", p.name, within, sig)
	}
}

// unexpectedExits names the processes that ended without the test stopping them.
func (ps *procs) unexpectedExits() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []string
	for _, p := range ps.all {
		p.mu.Lock()
		expected := p.expected
		p.mu.Unlock()
		if !expected && p.exited() {
			out = append(out, fmt.Sprintf("%s (%v, log %s)", p.name, p.err, p.log))
		}
	}
	return out
}

// tail is the end of a log file, for failure messages.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// waitFor calls f every interval until it returns nil and returns how long that took, or
// f's last error when within passes.
func waitFor(within, interval time.Duration, f func() error) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(within)
	for {
		err := f()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return time.Since(start), fmt.Errorf("not within %s: %w", within, err)
		}
		time.Sleep(interval)
	}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

func httpOK(u string) error {
	resp, err := httpClient.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}
