package browser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// executables are the names FindExecutable looks for, cheapest first: Debian's
// chromium-headless-shell costs a third to a fifth of the full browser per check.
var executables = []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindExecutable returns path when it names an executable file, or, when path is empty, the
// first of the known Chromium executables on $PATH or in /usr/bin, /usr/lib/chromium and
// /opt/google/chrome; a launcher script is replaced by the browser it starts (unwrap). It
// fails when there is none: the agent then runs without a browser.
func FindExecutable(path string) (string, error) {
	if path != "" {
		if err := executable(path); err != nil {
			return "", fmt.Errorf("VANTAGE_BROWSER_PATH %s: %w", path, err)
		}
		return unwrap(path), nil
	}
	dirs := []string{"/usr/bin", "/usr/lib/chromium", "/opt/google/chrome"}
	for _, name := range executables {
		if p, err := exec.LookPath(name); err == nil {
			return unwrap(p), nil
		}
		for _, d := range dirs {
			if p := filepath.Join(d, name); executable(p) == nil {
				return unwrap(p), nil
			}
		}
	}
	return "", fmt.Errorf("no Chromium found (looked for %s); install chromium-headless-shell or set VANTAGE_BROWSER_PATH",
		strings.Join(executables, ", "))
}

// launcherLine is a launcher script's line that starts the browser: an absolute path and the
// script's arguments, as Debian's /usr/bin/chromium-headless-shell has.
var launcherLine = regexp.MustCompile(`^\s*(?:exec\s+)?(/[^\s"'$;&|]+)\s+"\$@"\s*$`)

// unwrap returns the browser that the launcher script at path starts, or path itself when it is
// not such a script. The browser is started with the agent's death signal (launch), so that a
// killed agent leaves no browser behind; a launcher that forks the browser instead of
// exec'ing it passes the signal to itself only, and the browser would outlive the agent.
func unwrap(path string) string {
	f, err := os.Open(path) //nolint:gosec // the browser the operator pointed at, or one found on the machine
	if err != nil {
		return path
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if !bytes.HasPrefix(head[:n], []byte("#!")) {
		return path
	}
	lines := strings.Split(string(head[:n]), "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if m := launcherLine.FindStringSubmatch(lines[i]); m != nil && executable(m[1]) == nil {
			return m[1]
		}
	}
	return path
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// flags are Chromium's switches for a shared, headless, quiet browser. Each check gets its own
// browser context, so nothing here is per check.
// launchOptions are the settings a launch turns into flags.
type launchOptions struct {
	blockPrivate bool // every check goes through the egress proxy: keep WebRTC's UDP off too
	sandbox      bool // Chromium's own sandbox
}

func flags(dataDir string, o launchOptions) []string {
	f := []string{
		"--headless",
		"--disable-gpu",
		// No traffic of Chromium's own: no updates, no sync, no field trials, no safe-browsing
		// downloads. Only the checks talk to the network.
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-breakpad",
		"--no-first-run",
		"--no-default-browser-check",
		"--metrics-recording-only",
		"--mute-audio",
		"--hide-scrollbars",
		// Every check's page renders at full speed, whether or not other tabs are in front.
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		// Shared memory in /tmp, not /dev/shm, which containers often make tiny.
		"--disable-dev-shm-usage",
		"--window-size=1280,720",
		"--user-data-dir=" + dataDir,
		"--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0",
	}
	if !o.sandbox {
		// Without Chromium's sandbox (as root, or in a container without user namespaces) the
		// agent's own limits still hold: a fresh browser context per check, the worker process
		// for scripts, the egress policy, and the container around it all.
		f = append(f, "--no-sandbox")
	}
	if o.blockPrivate {
		// WebRTC could otherwise send UDP past the egress proxy.
		f = append(f, "--force-webrtc-ip-handling-policy=disable_non_proxied_udp")
	}
	return append(f, "about:blank")
}

// process is one running Chromium.
type process struct {
	cmd     *exec.Cmd
	wsURL   string // the browser's DevTools websocket
	dataDir string
	exited  chan struct{} // closed when the process has exited
	exitErr error         // valid once exited is closed
	tail    *tail         // its last lines of output, for crash reports
	// unconfined says why the browser runs with the agent's whole file view (no Landlock);
	// nil when it is confined.
	unconfined error
}

var devToolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// noise matches the lines headless Chromium prints on every start in a container (no D-Bus, no
// GPU), which would hide the lines that tell why it failed.
var noise = regexp.MustCompile(`dbus|bluez|Floss|vaapi|InitializeSandbox|^\s*$`)

// launch starts Chromium at path in its own process group with a fresh user data directory,
// confined to its file view (confine.go) when the kernel can, and waits (up to timeout) for its
// DevTools websocket.
func launch(path string, o launchOptions, timeout time.Duration) (*process, error) {
	dataDir, err := os.MkdirTemp("", "vantage-chromium-")
	if err != nil {
		return nil, fmt.Errorf("browser user data directory: %w", err)
	}
	cmd := exec.Command(path, flags(dataDir, o)...) //nolint:gosec // the operator's configured browser binary, flags built here
	cmd.Env = browserEnv(dataDir)
	// Its own process group, so that killing it takes its renderers along; and killed with the
	// agent, so that no browser outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = os.RemoveAll(dataDir)
		return nil, err
	}
	cmd.Stdout = io.Discard
	p := &process{cmd: cmd, dataDir: dataDir, exited: make(chan struct{}), tail: &tail{}}
	if err := p.start([]string{dataDir}, []string{programDir(path)}); err != nil {
		_ = os.RemoveAll(dataDir)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			line := sc.Text()
			if m := devToolsLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
				continue
			}
			if !noise.MatchString(line) {
				p.tail.add(line)
			}
		}
		io.Copy(io.Discard, stderr) //nolint:errcheck // drain so the browser never blocks on a full pipe
	}()
	select {
	case p.wsURL = <-found:
		return p, nil
	case <-p.exited:
		p.cleanup()
		return nil, fmt.Errorf("%s exited at start (%v): %s", path, p.exitErr, p.tail.String())
	case <-time.After(timeout):
		p.kill()
		return nil, fmt.Errorf("%s did not open its DevTools port within %s: %s", path, timeout, p.tail.String())
	}
}

// start starts the process on a thread of its own, confined to rw and ro beside the browser's
// file view (p.unconfined says why not when the kernel cannot confine it), and reaps it there.
// The thread is never handed back to other goroutines: the confinement cannot be lifted, and
// the browser's death signal fires when the thread that started it ends, so the thread lives
// as long as the browser.
func (p *process) start(rw, ro []string) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		err := confine(rw, ro)
		switch {
		case errors.Is(err, errNoLandlock):
			p.unconfined = err
		case err != nil:
			started <- err
			return
		}
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return <-started
}

// pid is the browser process's id (and its process group's).
func (p *process) pid() int { return p.cmd.Process.Pid }

// kill ends the browser and every process of its group, waits for it and removes its data.
func (p *process) kill() {
	syscall.Kill(-p.pid(), syscall.SIGKILL) //nolint:errcheck // it may be gone already
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
	p.cleanup()
}

func (p *process) cleanup() {
	os.RemoveAll(p.dataDir) //nolint:errcheck // a temporary directory; nothing to do about it
}

// alive reports whether the process has not exited.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// memory is the proportional set size (PSS) of the browser's process group: its share of the
// machine's memory, counting pages its processes share once.
func (p *process) memory() (int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != p.pid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/smaps_rollup")
		if err != nil {
			continue // it exited meanwhile
		}
		total += pssOf(b)
	}
	return total, nil
}

// pssOf reads the Pss line (in kB) of a smaps_rollup file, in bytes.
func pssOf(smaps []byte) int64 {
	for _, line := range bytes.Split(smaps, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			f := strings.Fields(string(rest))
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// tail keeps the last lines of a process's output.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 20

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		t.lines = t.lines[1:]
	}
	t.lines = append(t.lines, line)
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}
