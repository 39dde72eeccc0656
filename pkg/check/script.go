package check

import "regexp"

// BrowserTestModule is the browser test library module a browser check's script must import.
const BrowserTestModule = "@playwright/test"

// A browser script is accepted when it (1) imports BrowserTestModule, as an ES module import
// (`import { test, expect } from '@playwright/test'`, `import '@playwright/test'`) or a
// CommonJS require (`require('@playwright/test')`), and (2) declares at least one test block:
// a call of `test(...)` or one of its modifiers `test.only`, `test.skip`, `test.fixme`,
// `test.fail`, `test.slow` — not a method named test such as `/x/.test(s)`.
//
// This is a syntactic check that catches scripts written for another runner or pasted
// without their test; the agent's runner is the judge of everything else.
var (
	scriptImport = regexp.MustCompile(`(?s)(?:\bimport\b[^;]*?\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]` +
		regexp.QuoteMeta(BrowserTestModule) + `['"]`)
	scriptTest = regexp.MustCompile(`(?m)(?:^|[^.\w$])test(?:\.(?:only|skip|fixme|fail|slow))?\s*\(`)
)

// ScriptProblem returns why script is not an acceptable browser check script, or "".
func ScriptProblem(script string) string {
	switch {
	case !scriptImport.MatchString(script):
		return "must import the browser test library module " + BrowserTestModule
	case !scriptTest.MatchString(script):
		return "must contain at least one test() block"
	}
	return ""
}
