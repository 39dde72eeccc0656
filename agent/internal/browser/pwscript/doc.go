// Package pwscript runs a browser check's script — a Playwright Test file — without Node.js:
// the program browserscript.Transform made runs in a fresh goja runtime with its own event
// loop, and test, expect, page and locators are implemented in Go over chromedp on the tab it
// is given, and on a fresh browser context and page for each later test (context.go).
// SUBSET.md (beside this file) lists what of Playwright Test is refused — when the check is
// saved (browserscript.Analyze, from the list in pkg/browserscript) or when it runs, with
// "not supported: …" — and where the runtime differs from Playwright.
//
// # Entry point
//
//	rep := pwscript.Run(tabCtx, prog, pwscript.Options{Env: vars, Secrets: secrets})
//
// tabCtx is a chromedp context for a tab of its own, in a browser context of its own (the
// caller creates and closes both); its deadline, or Options.Timeout, bounds the run. Run
// always returns a Report: Passed, the tests with their steps and timings, the first Failure
// (a Playwright-style message, the location in the user's file, the title path of the test
// and step, and a Cause that says whether the target, the script or the browser is at fault),
// a JPEG screenshot of the page at that failure, and a one-line Summary for result_summary.
// Secret values are redacted from every text of the report.
//
// # Isolation
//
// Everything a run creates — the goja runtime, its loop, timers, the event listeners on the
// tab — is its own and ends with Run; nothing is shared between runs but the browser. A
// script has no file system, network or process access (require resolves only
// @playwright/test; process.env holds Options.Env only). A script stuck in JavaScript is
// interrupted at its deadline. Memory cannot be capped inside goja: run scripts in a process
// of their own with an address-space limit, and set Options.HeapLimit there so that a runaway
// allocation ends with a message before the limit kills the process.
//
// # How it works
//
// The script's top level declares tests (declare.go); execute.go runs them in order with
// their hooks, each call of the page API starting an operation on its own goroutine whose
// result the loop (loop.go) delivers back as a settled promise. Locators are immutable
// descriptions resolved anew by every operation: in one evaluation of engine.js in the page,
// after getByRole and getByLabel were answered from Chromium's accessibility tree
// (resolve.go). Actions wait for the element to be unique, visible, stable, enabled and not
// covered, then send trusted input events (actions.go, input.go); web-first assertions poll
// until they hold or time out (expect.go).
package pwscript
