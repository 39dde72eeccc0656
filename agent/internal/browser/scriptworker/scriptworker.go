// Package scriptworker is the worker process that runs one browser check's script: the agent
// starts `vantage-agent browser-worker` for each scripted run (see browser.RunScript), writes an
// Input on its standard input and reads the pwscript.Report it writes on its standard output.
//
// The worker connects to the agent's Chromium over its DevTools websocket and opens its tab in
// the browser context the agent created for the check, so it shares nothing with other checks.
// It holds no secrets of the agent: its environment is empty but for the Go runtime's memory
// limit, and the agent caps its memory (RLIMIT_DATA), its CPU time, its files, and kills it at
// the check's deadline. A script that loops forever, allocates without bound or never
// resolves so ends in this process, never in the agent.
package scriptworker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/pkg/browserscript"
)

// Command is the agent's subcommand that runs Main.
const Command = "browser-worker"

// Hello is the first line the agent sends a worker it starts, ahead of any run: the browser to
// connect to while it waits.
type Hello struct {
	WSURL string `json:"ws_url"` // the browser's DevTools websocket
}

// Input is the second line: the run.
type Input struct {
	BrowserContextID string            `json:"browser_context_id"` // the check's browser context
	TargetID         string            `json:"target_id"`          // the check's tab in it, opened by the agent
	Program          Program           `json:"program"`            // the transformed script
	Env              map[string]string `json:"env"`                // process.env
	Secrets          []string          `json:"secrets"`            // redacted from the report
	DeadlineUnixMs   int64             `json:"deadline_unix_ms"`   // the agent kills the worker then
	// HeapLimit interrupts the script once the worker's Go heap exceeds it, ahead of the
	// agent's hard memory cap, so that a runaway allocation ends with a message and the place
	// in the script. 0: none.
	HeapLimit uint64 `json:"heap_limit"`
	// UserAgent replaces the browser's User-Agent in the check's tab; empty keeps it.
	UserAgent string `json:"user_agent"`
	// ProxyServer is the egress proxy of the check's browser context, for the browser contexts
	// the run opens for its later tests (each test gets a fresh one); empty: none.
	ProxyServer string `json:"proxy_server"`
	// TestTimeoutMs is the check's configured timeout, named by timeout messages
	// (pwscript.Options.TestTimeout). 0: the time left to the deadline.
	TestTimeoutMs int64 `json:"test_timeout_ms"`
	// BaseURL is the script's baseURL (pwscript.Options.BaseURL); "" for none.
	BaseURL string `json:"base_url"`
	// AllowPrivateRequests lets the script's request fixture and page.request reach private
	// addresses; the worker otherwise refuses them as the agent's egress proxy does the page's.
	AllowPrivateRequests bool `json:"allow_private_requests"`
}

// Program is a browserscript.Program on the wire.
type Program struct {
	Filename string   `json:"filename"`
	Code     string   `json:"code"`
	Imports  []string `json:"imports"`
}

// reportMargin is kept between the end of the run and the agent's deadline, for the report to
// be written and read.
const reportMargin = 50 * time.Millisecond

// Main runs the worker: it reads a Hello from stdin and connects to the browser, then reads one
// Input, runs the script and writes the report as JSON to stdout. It returns the process's exit
// code: 0 when a report was written.
func Main(stdin io.Reader, stdout, stderr io.Writer) int {
	dec := json.NewDecoder(io.LimitReader(stdin, 16<<20))
	var hello Hello
	if err := dec.Decode(&hello); err != nil {
		fmt.Fprintln(stderr, "browser-worker: read the greeting:", err)
		return 2
	}
	alloc, cancelAlloc := remote.NewAllocator(context.Background(), hello.WSURL, remote.NoModifyURL)
	defer cancelAlloc()
	conn, cancelConn := chromedp.NewContext(alloc)
	defer cancelConn()
	// Connect now, while the run is not there yet; a failure shows in the run.
	_, _ = chromedp.CallBrowser(conn, browser.GetVersion, cdp.Empty{})
	var in Input
	if err := dec.Decode(&in); err != nil {
		fmt.Fprintln(stderr, "browser-worker: read the run:", err)
		return 2
	}
	deadline := time.UnixMilli(in.DeadlineUnixMs).Add(-reportMargin)
	tab, cancelTab := chromedp.NewContext(conn, chromedp.WithTargetID(target.ID(in.TargetID)))
	defer cancelTab()
	// Any page the script's tab opens belongs to the check's browser context too.
	chromedp.FromContext(tab).BrowserContextID = cdp.BrowserContextID(in.BrowserContextID)
	ctx, cancel := context.WithDeadline(tab, deadline)
	defer cancel()
	prog := &browserscript.Program{Filename: in.Program.Filename, Code: in.Program.Code, Imports: in.Program.Imports}
	rep := pwscript.Run(ctx, prog, pwscript.Options{Env: in.Env, Secrets: in.Secrets, Timeout: time.Until(deadline),
		HeapLimit: in.HeapLimit, UserAgent: in.UserAgent, ContextProxy: in.ProxyServer,
		TestTimeout: time.Duration(in.TestTimeoutMs) * time.Millisecond, BaseURL: in.BaseURL,
		Request: pwscript.RequestOptions{AllowPrivate: in.AllowPrivateRequests, UserAgent: in.UserAgent}})
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		fmt.Fprintln(stderr, "browser-worker: write the report:", err)
		return 2
	}
	return 0
}
