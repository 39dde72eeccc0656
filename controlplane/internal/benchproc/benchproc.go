// Package benchproc holds what the load commands (vantage-benchload, vantage-benchscale) do to
// the processes they measure: start a binary with its log to a file and stop it, read its CPU
// time from /proc, pick free ports, make a secret key, and save a profile. Linux only, as the
// commands are.
package benchproc

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a started process.
type Proc struct{ Cmd *exec.Cmd }

// Start starts bin with this process's environment (GOGC and GOMEMLIMIT among it) and envs,
// its output going to logPath.
func Start(bin string, args []string, envs map[string]string, logPath string) (*Proc, error) {
	cmd := exec.Command(bin, args...) //nolint:gosec // the benchmark runs the binaries it was pointed at
	cmd.Env = os.Environ()
	for k, v := range envs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	f, err := os.Create(logPath) //nolint:gosec // a fixed log path of the benchmark
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return &Proc{Cmd: cmd}, nil
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Stop asks the process to stop (SIGTERM) and kills it if it has not within 20s.
func (p *Proc) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.Cmd.Process.Kill()
	}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on Linux.
const clockTicks = 100

// CPUSeconds is pid's user and system time (/proc/<pid>/stat, fields 14 and 15); 0 when it
// cannot be read.
func CPUSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, field 2, may hold spaces; the fields after it are counted from ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// FreeAddr is a 127.0.0.1 address with a port free at the time of the call.
func FreeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer l.Close()
	return l.Addr().String()
}

// RandKey is a random 32-byte key, base64: a VANTAGE_SECRET_KEY of the run's own.
func RandKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// FetchTo saves the body of GET url (a local process's profiler) at path.
func FetchTo(url, path string) error {
	resp, err := http.Get(url) //nolint:noctx,gosec // the local processes' profiler
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path) //nolint:gosec // the path the benchmark was given
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
