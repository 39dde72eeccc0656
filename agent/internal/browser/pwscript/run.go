package pwscript

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// Options configures a run. The zero value means every documented default.
type Options struct {
	// Env is process.env: the check's resolved variables. Nothing else of the agent's
	// environment is visible to the script.
	Env map[string]string
	// Secrets are values redacted (as "[REDACTED]") from every message, step title, console
	// line and summary of the report.
	Secrets []string
	// Timeout bounds the run. Zero: until ctx's deadline, or 30s when ctx has none. The run
	// keeps the last tenth of it (between 1s and 2s) to take the failure screenshot and
	// write the report, so tests time out a little before.
	Timeout time.Duration
	// ExpectTimeout bounds each web-first assertion (expect(locator).toBeVisible()…) that sets
	// no timeout of its own. Default 5s, as Playwright's.
	ExpectTimeout time.Duration
	// ActionTimeout bounds each action and navigation that sets no timeout of its own.
	// Default 0: until the test's deadline, as Playwright's.
	ActionTimeout time.Duration
	// ScreenshotMaxBytes caps the failure screenshot (a JPEG, scaled down until it fits).
	// Default 256 KiB.
	ScreenshotMaxBytes int
	// ViewportWidth and ViewportHeight size the page. Default 1280×720, as Playwright's.
	ViewportWidth, ViewportHeight int
	// TestIDAttribute is the attribute getByTestId matches. Default "data-testid".
	TestIDAttribute string
	// UserAgent replaces the browser's User-Agent in every test's page, unless the script's
	// test.use({ userAgent }) does. Default "": the browser's own.
	UserAgent string
	// ContextProxy is the proxy server of the browser contexts the run creates (one per test
	// after the first, which runs in the context the caller gave): the agent's egress proxy,
	// so that every test reaches the network under the outbound address policy. Default "":
	// no proxy.
	ContextProxy string
	// BaseURL is the baseURL fixture: page.goto resolves a relative URL against it, as
	// Playwright's does. Default "": none (the fixture is undefined).
	BaseURL string
	// TestTimeout is the timeout messages name ("Test timeout of 20000ms exceeded.") for a
	// test that sets none of its own: the check's configured timeout. The tests themselves
	// end a little earlier (see Timeout), but a message must name what the user configured,
	// not the run's internal deadline. Default: Timeout.
	TestTimeout time.Duration
	// ArtifactMaxBytes caps the total size of the run's artifacts (screenshots taken with a
	// path, testInfo.attach()); ArtifactMaxCount caps their number. An artifact over a cap is
	// dropped with a line in Report.ArtifactsDropped. Defaults DefaultArtifactMaxBytes and
	// DefaultArtifactMaxCount.
	ArtifactMaxBytes, ArtifactMaxCount int
	// HeapLimit, when set, interrupts the script once the process's Go heap exceeds it, so
	// that a runaway allocation ends with a clear message. The heap is the whole process's:
	// set it only where the process runs one script at a time (the agent's script worker,
	// whose address-space rlimit remains the hard cap). Default 0: no limit.
	HeapLimit uint64

	// Set per test from test.use (use.go): the page's scale factor and mobile emulation.
	deviceScaleFactor float64
	mobile            bool
	// Request configures the request fixture and page.request (request.go).
	Request RequestOptions
	// RequestOnly runs the script without a browser (a multistep check): ctx need not be a
	// tab, and the page, context and browser fixtures fail with a message naming them.
	// Default false.
	RequestOnly bool
}

func (o *Options) applyDefaults(ctx context.Context, now time.Time) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
		if d, ok := ctx.Deadline(); ok {
			o.Timeout = d.Sub(now)
		}
	}
	if o.TestTimeout <= 0 {
		o.TestTimeout = o.Timeout
	}
	if o.ArtifactMaxBytes <= 0 {
		o.ArtifactMaxBytes = DefaultArtifactMaxBytes
	}
	if o.ArtifactMaxCount <= 0 {
		o.ArtifactMaxCount = DefaultArtifactMaxCount
	}
	if o.ExpectTimeout <= 0 {
		o.ExpectTimeout = 5 * time.Second
	}
	if o.ScreenshotMaxBytes <= 0 {
		o.ScreenshotMaxBytes = 256 << 10
	}
	if o.ViewportWidth <= 0 || o.ViewportHeight <= 0 {
		o.ViewportWidth, o.ViewportHeight = 1280, 720
	}
	if o.TestIDAttribute == "" {
		o.TestIDAttribute = "data-testid"
	}
}

// run is the state of one run of a script. Everything in it but the browser operations in
// flight belongs to the goroutine that runs the loop.
type run struct {
	vm     *goja.Runtime
	loop   *loop
	prog   *browserscript.Program
	opts   Options // base, with the running test's test.use options applied
	base   Options // as the caller gave them, defaults applied
	redact func(string) string

	tab          context.Context // the chromedp tab, bounded by the run's deadline
	start        time.Time
	testDeadline time.Time // the run's deadline less the reserve

	errs     map[*goja.Object]*scriptError // errors the runtime threw, by their JS object
	locators map[*goja.Object]*locator
	skips    map[*goja.Object]string // test.skip() signals, by their JS object: the reason

	root        *suite
	declaring   *suite           // the suite test() adds to, while the file and describe callbacks run
	cur         *testRun         // the test or hook running
	browser     *browserPage     // the running test's page (context.go)
	pageTab     context.Context  // its chromedp tab
	useOpts     *contextOptions  // its test.use options
	nextContext *preparedContext // the next test's, being opened
	contextObj  *goja.Object     // the context fixture of the running test

	fixtureNames map[string]bool // the names test.extend declared (fixtures.go)
	fixtureRT    *goja.Object    // fixtures.js, once evaluated
	expectObj    *goja.Object    // the script's expect (expectapi.go)
	pageObj      *goja.Object
	net          *pageEvents // the running test's page.on, routes, frames (events.go)
	console      []string
	unhandled    []*goja.Promise
	timerSeq     int64
	jsonParse    goja.Callable

	artifacts artifactSet                 // screenshots with a path, testInfo.attach()
	infos     map[*testRun]*testInfoState // the testInfo of the tests that asked for it
	req       *requestState               // the request fixture's machinery, made on first use
}

// Run runs the tests of prog on the page of ctx, a chromedp context for a tab of its own (in
// a browser context of its own): ctx ends the run, and its deadline (or opts.Timeout) bounds
// it. The goja runtime, its event loop and all state are the run's own and gone when Run
// returns; Run holds nothing of its caller but the tab. A script that loops forever is
// interrupted at the deadline; a script that allocates without bound is not stopped here —
// run scripts in a process with a memory limit. Run never panics and always returns a report.
func Run(ctx context.Context, prog *browserscript.Program, opts Options) (rep *Report) {
	start := time.Now()
	opts.applyDefaults(ctx, start)
	redact := redactor(opts.Secrets)
	rep = &Report{}
	defer func() {
		if p := recover(); p != nil {
			rep.Passed = false
			rep.Failure = &Failure{Message: fmt.Sprintf("internal error in the script runtime: %v\n%s", p, debug.Stack()), Cause: CauseBrowser}
		}
		rep.Duration = time.Since(start)
		rep.Summary = summarize(rep)
		redactReport(rep, redact)
	}()

	deadline := start.Add(opts.Timeout)
	tab, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	reserve := min(max(opts.Timeout/10, time.Second), 2*time.Second)

	vm := goja.New()
	vm.SetMaxCallStackSize(4096)
	r := &run{
		vm: vm, loop: newLoop(vm), prog: prog, opts: opts, base: opts, redact: redact,
		tab: tab, start: start, testDeadline: deadline.Add(-reserve),
		errs: map[*goja.Object]*scriptError{}, fixtureNames: map[string]bool{}, locators: map[*goja.Object]*locator{}, skips: map[*goja.Object]string{},
		artifacts: artifactSet{maxBytes: opts.ArtifactMaxBytes, maxCount: opts.ArtifactMaxCount},
	}
	defer func() { rep.Artifacts, rep.ArtifactsDropped = r.artifacts.kept, r.artifacts.dropped }()
	// A script stuck in JavaScript (while (true) {}) never yields to the loop: interrupt it
	// once the tests' time is up, or when the caller ends the run.
	stopWatch := context.AfterFunc(tab, func() { vm.Interrupt(errInterrupted) })
	defer stopWatch()
	watchdog := time.AfterFunc(time.Until(r.testDeadline.Add(graceAfterDeadline)), func() { vm.Interrupt(errInterrupted) })
	defer watchdog.Stop()
	if opts.HeapLimit > 0 {
		stopHeap := watchHeap(tab, opts.HeapLimit, func() { vm.Interrupt(errHeapLimit) })
		defer stopHeap()
	}

	defer func() {
		if r.req != nil {
			r.req.close()
		}
	}()
	r.install()
	if f := r.load(); f != nil {
		rep.Failure = f
		return rep
	}
	r.runTests(rep)
	rep.Console = r.console
	return rep
}

// graceAfterDeadline is how long after the tests' deadline operations get to report their
// own timeout before the loop gives up on them.
const graceAfterDeadline = 150 * time.Millisecond

var (
	errInterrupted = errors.New("interrupted")
	errHeapLimit   = errors.New("heap limit")
)

// watchHeap calls over once the Go heap exceeds limit, checking every 20ms until stopped.
func watchHeap(ctx context.Context, limit uint64, over func()) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
				over()
				return
			}
		}
	}()
	return cancel
}

// load compiles the program and runs its top level, which declares the tests.
func (r *run) load() *Failure {
	ast, err := goja.Parse(r.prog.Filename, r.prog.Code, parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are inline")
	}))
	if err != nil {
		return &Failure{Message: "the script does not compile: " + err.Error(), Cause: CauseScript}
	}
	p, err := goja.CompileAST(ast, false)
	if err != nil {
		return &Failure{Message: "the script does not compile: " + err.Error(), Cause: CauseScript}
	}
	r.root = &suite{}
	r.declaring = r.root
	_, err = r.vm.RunProgram(p)
	r.declaring = nil
	if err != nil {
		f := r.failureOf(err, nil)
		f.Message = "Error while loading the script: " + f.Message
		return f
	}
	if len(r.root.allTests()) == 0 {
		return &Failure{Message: "No tests found: the script declares no test()", Cause: CauseScript, Location: r.prog.Filename}
	}
	return nil
}

// failureOf turns what a test or hook ended with into a Failure: an error the runtime threw
// (with its cause and call site), an exception of the script, an interrupt.
func (r *run) failureOf(err error, t *testRun) *Failure {
	var intr *goja.InterruptedError
	var ex *goja.Exception
	switch {
	case errors.As(err, &intr):
		f := &Failure{Cause: CauseTimeout}
		f.Message = fmt.Sprintf("Test timeout of %dms exceeded: the script kept running JavaScript without awaiting anything (an endless loop?) and was stopped", r.budget().Milliseconds())
		if errors.Is(err, errHeapLimit) {
			f.Cause = CauseScript
			f.Message = fmt.Sprintf("the script used more than %d MiB of memory and was stopped", r.opts.HeapLimit>>20)
		}
		for _, fr := range intr.Stack() {
			if pos := fr.Position(); pos.Filename == r.prog.Filename && pos.Line > 0 {
				f.Location = fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
				break
			}
		}
		return f
	case errors.As(err, &ex):
		f := r.failureOfValue(ex.Value())
		if f.Location == "" {
			for _, fr := range ex.Stack() {
				if pos := fr.Position(); pos.Filename == r.prog.Filename && pos.Line > 0 {
					f.Location = fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
					break
				}
			}
		}
		return f
	default:
		return &Failure{Message: err.Error(), Cause: CauseScript}
	}
}

// failureOfValue describes a thrown or rejected JS value.
func (r *run) failureOfValue(v goja.Value) *Failure {
	if o, ok := v.(*goja.Object); ok {
		if e, ok := r.errs[o]; ok {
			return &Failure{Message: e.message, Location: e.where, Cause: e.cause, stepPath: e.step.path()}
		}
		f := &Failure{Cause: CauseScript}
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			f.Message = name + ": " + msg.String()
		} else {
			f.Message = r.format(v)
		}
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			f.Location = r.stackSite(st.String())
		}
		return f
	}
	return &Failure{Message: r.format(v), Cause: CauseScript}
}

// budget is the run's time, as a test timeout in messages: the configured one.
func (r *run) budget() time.Duration { return r.opts.TestTimeout.Round(time.Millisecond) }
