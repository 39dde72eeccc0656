// Package browser runs the agent's browser checks in real Chromium: one browser process per
// agent, launched once and reused, with a fresh, isolated browser context for every check.
//
//	Browser  ── keeps one Chromium alive (Start, Run): restarts it when it exits or stops
//	   │        answering, and fails the checks it had as the agent's failure (ErrBrowserLost)
//	   ├─ Visit      a URL check, in this process, over chromedp (visit.go)
//	   └─ RunScript  a Playwright script, in a worker subprocess with a memory cap and a hard
//	                 deadline that connects to the same Chromium (script.go, scriptworker/)
//
// Isolation: each check gets its own browser context (Target.createBrowserContext: cookies,
// storage, cache and service workers of its own, never shared with another check or customer),
// disposed when the check ends, which also closes every page the check opened. At most
// Concurrency checks run at once; more tabs than cores only add latency to every timing.
//
// The agent's host: no page of a check loads anything but the web (http:, https:, data:,
// about:blank); file:, view-source:, chrome: and every other scheme are refused by the browser
// itself, for every browser context, and the check fails saying so (guard.go).
//
// Private targets: with BlockPrivateTargets, each check's browser context sends everything
// through its own egress proxy (package egress), which applies the agent's private-target
// policy after name resolution. The context's proxy bypass list is "<-loopback>", which
// removes Chromium's implicit bypass of loopback, so 127.0.0.1 and localhost go through the
// policy as well.
//
// This package observes; prober/browser.go judges what it observed.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// Config configures a Browser. Zero values take the documented defaults.
type Config struct {
	// Path is the Chromium executable (VANTAGE_BROWSER_PATH). Default: found by FindExecutable.
	Path string
	// Concurrency is how many checks use the browser at once (VANTAGE_BROWSER_CONCURRENCY).
	// Default: the number of CPUs.
	Concurrency int
	// BlockPrivateTargets routes every check through an egress proxy that refuses private
	// addresses (VANTAGE_ALLOW_PRIVATE_TARGETS=false). Default false: no proxy.
	BlockPrivateTargets bool
	// Sandbox runs Chromium's own sandbox (it cannot run as root, and needs user namespaces).
	Sandbox bool
	// Resolver resolves target names for the egress proxy. Default net.DefaultResolver.
	Resolver *net.Resolver
	// WorkerCommand is the command line of the script worker, which must run
	// scriptworker.Main. Default: this executable with the argument "browser-worker".
	WorkerCommand []string
	// WorkerMemory caps a script worker's memory in bytes (VANTAGE_BROWSER_WORKER_MEMORY).
	// Default DefaultWorkerMemory.
	WorkerMemory int64
	// StartTimeout bounds a launch of Chromium. Default 30s.
	StartTimeout time.Duration
	// HealthInterval is how often the browser is asked whether it still answers. Default 5s.
	HealthInterval time.Duration
	// HealthTimeout is how long an answer may take; HealthFailures unanswered questions in a
	// row mean the browser hangs, and it is restarted. Defaults 5s and 2.
	HealthTimeout  time.Duration
	HealthFailures int
}

// DefaultWorkerMemory is the default memory cap of a script worker.
const DefaultWorkerMemory = 512 << 20

func (c *Config) setDefaults() error {
	if c.Concurrency <= 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if len(c.WorkerCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("the script worker is this executable, which cannot be found: %w", err)
		}
		c.WorkerCommand = []string{self, "browser-worker"}
	}
	if c.WorkerMemory <= 0 {
		c.WorkerMemory = DefaultWorkerMemory
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.StartTimeout, 30*time.Second)
	def(&c.HealthInterval, 5*time.Second)
	def(&c.HealthTimeout, 5*time.Second)
	if c.HealthFailures <= 0 {
		c.HealthFailures = 2
	}
	return nil
}

// Deps are a Browser's collaborators.
type Deps struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// ErrBrowserLost means the agent's browser could not serve the check: it crashed, hung or was
// restarting, or no slot of it came free in time. The agent failed, not the target.
var ErrBrowserLost = errors.New("the agent's browser could not run the check")

// Browser is the agent's Chromium; see the package documentation.
type Browser struct {
	cfg      Config
	log      *slog.Logger
	m        *metrics
	slots    chan struct{}
	warm     [2]chan *session // sessions made ahead of the checks, by tabMode (session.go)
	workers  chan *workerProc // script workers started ahead of the runs (workers.go)
	demand   chan warmKind    // what keepWarm is to make ahead
	programs browserscript.Cache

	sessionsMu sync.Mutex
	sessions   map[cdp.BrowserContextID]*session // every open session, by browser context (guard.go)

	mu      sync.Mutex
	inst    *instance     // nil while the browser is (re)starting
	changed chan struct{} // closed and replaced whenever inst changes
}

// instance is one launch of Chromium and the agent's connection to it.
type instance struct {
	proc   *process
	root   context.Context // chromedp, on the browser's websocket, without a tab of its own
	cancel context.CancelFunc
	lost   chan struct{} // closed when this launch is going away
	once   sync.Once
}

func (i *instance) markLost() { i.once.Do(func() { close(i.lost) }) }

// gone reports whether this launch has ended or is ending.
func (i *instance) gone() bool {
	select {
	case <-i.lost:
		return true
	default:
		return !i.proc.alive()
	}
}

// New returns the agent's browser; it is launched by Start. It fails when no Chromium can be
// found, and the agent then runs without browser checks.
func New(cfg Config, deps Deps) (*Browser, error) {
	path, err := FindExecutable(cfg.Path)
	if err != nil {
		return nil, err
	}
	cfg.Path = path
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := deps.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	b := &Browser{
		cfg:     cfg,
		log:     log.With("component", "browser"),
		slots:   make(chan struct{}, cfg.Concurrency),
		warm:    [2]chan *session{make(chan *session, cfg.Concurrency), make(chan *session, cfg.Concurrency)},
		workers: make(chan *workerProc, cfg.Concurrency),
		demand:  make(chan warmKind, 3*cfg.Concurrency+3),
		changed: make(chan struct{}),

		sessions: map[cdp.BrowserContextID]*session{},
	}
	b.m = newMetrics(reg, b.Memory)
	return b, nil
}

// Path is the Chromium executable in use.
func (b *Browser) Path() string { return b.cfg.Path }

// Concurrency is how many checks may use the browser at once.
func (b *Browser) Concurrency() int { return b.cfg.Concurrency }

// Start launches the browser and connects to it; an error means this agent cannot run browser
// checks. Run keeps it alive afterwards.
func (b *Browser) Start(ctx context.Context) error {
	// The browser and the script workers run as the agent's user. Non-dumpable, the agent's
	// /proc entries — its environment (the agent token, the NATS password), memory and open
	// files — belong to root, out of their reach.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("close the agent's /proc entries to its browser: %w", err)
	}
	inst, err := b.launch(ctx)
	if err != nil {
		return err
	}
	b.set(inst)
	return nil
}

// Ready reports whether the browser is up.
func (b *Browser) Ready() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inst != nil && !b.inst.gone()
}

// Memory is the browser's share of the machine's memory (PSS of its process group).
func (b *Browser) Memory() (int64, error) {
	b.mu.Lock()
	inst := b.inst
	b.mu.Unlock()
	if inst == nil {
		return 0, errors.New("the browser is not running")
	}
	return inst.proc.memory()
}

// Run watches the browser started by Start until ctx ends, then stops it. A browser that
// exits or stops answering is killed (with every process of its group) and launched again;
// the checks that were using it end with ErrBrowserLost.
func (b *Browser) Run(ctx context.Context) error {
	warmCtx, stopWarm := context.WithCancel(ctx)
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		b.keepWarm(warmCtx)
	}()
	defer func() {
		stopWarm()
		<-warmed
	}()
	failures := 0
	for {
		b.mu.Lock()
		inst := b.inst
		b.mu.Unlock()
		if inst == nil {
			next, err := b.launch(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				failures++
				d := min(time.Second<<min(failures-1, 5), 30*time.Second)
				b.log.Error("cannot launch the browser; browser checks fail as the agent's until it runs", "err", err, "retry_in", d)
				sleep(ctx, d)
				continue
			}
			b.set(next)
			inst = next
		}
		reason := b.watch(ctx, inst)
		b.set(nil)
		inst.markLost()
		inst.cancel()
		inst.proc.kill()
		if ctx.Err() != nil {
			return nil
		}
		failures = 0
		b.m.restarts.WithLabelValues(reason).Inc()
		b.log.Error("browser "+reason+"; restarting it (its checks are reported as the agent's failure)",
			"pid", inst.proc.pid(), "exit", fmt.Sprint(inst.proc.exitErr), "output", inst.proc.tail.String())
	}
}

// watch returns when inst must go: "exited", "hung", or "" when ctx ended.
func (b *Browser) watch(ctx context.Context, inst *instance) string {
	t := time.NewTicker(b.cfg.HealthInterval)
	defer t.Stop()
	unanswered := 0
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-inst.proc.exited:
			return "exited"
		case <-inst.lost:
			// A crash drops the connection a moment before the process is seen to exit.
			select {
			case <-inst.proc.exited:
				return "exited"
			case <-time.After(time.Second):
				return "lost its connection"
			}
		case <-t.C:
			hctx, cancel := context.WithTimeout(inst.root, b.cfg.HealthTimeout)
			_, err := chromedp.CallBrowser(hctx, browser.GetVersion, cdp.Empty{})
			cancel()
			if err == nil {
				unanswered = 0
				continue
			}
			if !inst.proc.alive() {
				return "exited"
			}
			unanswered++
			b.log.Warn("the browser did not answer", "err", err, "unanswered", unanswered)
			if unanswered >= b.cfg.HealthFailures {
				return "hung"
			}
		}
	}
}

// launch starts Chromium and connects the agent to it.
func (b *Browser) launch(ctx context.Context) (*instance, error) {
	proc, err := launch(b.cfg.Path, launchOptions{blockPrivate: b.cfg.BlockPrivateTargets, sandbox: b.cfg.Sandbox}, b.cfg.StartTimeout)
	if err != nil {
		return nil, err
	}
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), proc.wsURL, remote.NoModifyURL)
	root, cancelRoot := chromedp.NewContext(alloc)
	inst := &instance{proc: proc, root: root, lost: make(chan struct{})}
	inst.cancel = func() { cancelRoot(); cancelAlloc() }
	// The first call opens the websocket, which lives as long as the context of that call: it
	// must be root itself, so the start's deadline is kept here instead.
	answered := make(chan error, 1)
	go func() {
		_, err := chromedp.CallBrowser(root, browser.GetVersion, cdp.Empty{})
		answered <- err
	}()
	select {
	case err = <-answered:
	case <-time.After(b.cfg.StartTimeout):
		err = fmt.Errorf("no answer within %s", b.cfg.StartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		inst.cancel()
		proc.kill()
		return nil, fmt.Errorf("connect to the browser: %w", err)
	}
	if err := b.guard(root); err != nil {
		inst.cancel()
		proc.kill()
		return nil, fmt.Errorf("refuse the loads no check may make: %w", err)
	}
	go func() {
		// The agent's connection dropped without the process exiting: the launch is unusable.
		<-chromedp.FromContext(root).Browser.LostConnection
		inst.markLost()
	}()
	b.m.confined.Set(map[bool]float64{true: 1, false: 0}[proc.unconfined == nil])
	if proc.unconfined != nil {
		b.log.Warn("the browser can read every file the agent can: only the scheme guard keeps checks off them", "err", proc.unconfined)
	}
	b.log.Info("browser started", "path", b.cfg.Path, "pid", proc.pid(), "concurrency", b.cfg.Concurrency,
		"block_private_targets", b.cfg.BlockPrivateTargets, "file_view_confined", proc.unconfined == nil)
	return inst, nil
}

// set publishes inst (nil: restarting) and wakes whoever waits for a browser.
func (b *Browser) set(inst *instance) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inst = inst
	close(b.changed)
	b.changed = make(chan struct{})
	b.m.up.Set(map[bool]float64{true: 1, false: 0}[inst != nil])
}

// current waits for a running browser until ctx ends.
func (b *Browser) current(ctx context.Context) (*instance, error) {
	for {
		b.mu.Lock()
		inst, changed := b.inst, b.changed
		b.mu.Unlock()
		if inst != nil && !inst.gone() {
			return inst, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: it was restarting until the deadline", ErrBrowserLost)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
