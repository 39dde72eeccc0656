package check

import (
	"errors"
	"slices"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// BrowserTestModule is the browser test library module a browser check's script must import.
const BrowserTestModule = browserscript.TestModule

// A browser script is accepted when it (1) compiles (browserscript.Transform: TypeScript or
// JavaScript), (2) imports BrowserTestModule — an ES module import, a re-export, a dynamic
// import or a CommonJS require, as the compiler resolves them, so an import in a comment or a
// string does not count — (3) declares at least one test, found in the compiled program's
// syntax tree (browserscript.Analyze): a call of the module's test function however it is
// bound (test, `import { test as it }`, `const { test: base } = require(…)`, the result of
// test.extend) — not a method named test such as `/x/.test(s)` — and (4) uses none of the
// APIs the runtime refuses (browserscript's refusal list), named with their line:
// "not supported: browser.newContext() at line 7".
//
// This catches scripts that cannot run, written for another runner or pasted without their
// test; the agent's runner is the judge of everything else.

// ScriptProblem returns why script is not an acceptable browser check script, or "". A syntax
// error reads "line 12, column 5: <compiler message>".
func ScriptProblem(script string) string {
	prog, err := browserscript.Transform("", script)
	var syntax *browserscript.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return syntax.Error()
	case err != nil:
		return err.Error()
	case !slices.Contains(prog.Imports, BrowserTestModule):
		return "must import the browser test library module " + BrowserTestModule
	}
	a, err := browserscript.Analyze(prog)
	switch {
	case err != nil:
		return err.Error()
	case len(a.Refused) > 0:
		return a.Refused[0].Message()
	case !a.DeclaresTest:
		return "must contain at least one test() block"
	}
	return ""
}

// EnvRefs lists the variables a browser check's script reads from process.env, in order of
// first use (browserscript.EnvRefs, keeping the names a variable can have): the control plane
// resolves them in the check's variable scope, like {{NAME}} references, and the job carries
// them as the script's process.env. A name without a variable is simply unset, as in Node.
func (s Spec) EnvRefs() []string {
	var script string
	switch {
	case s.Kind == Browser && s.HTTP != nil && s.HTTP.Script != nil:
		script = *s.HTTP.Script
	case s.Kind == Multistep && s.Multistep != nil:
		script = s.Multistep.Script
	default:
		return nil
	}
	return slices.DeleteFunc(browserscript.EnvRefs(script), func(n string) bool { return !VarNamePattern.MatchString(n) })
}
