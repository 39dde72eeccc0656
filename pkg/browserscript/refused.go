package browserscript

import "fmt"

// Refusal is a part of Playwright Test that a browser check cannot use. The list below is the
// one definition of what is refused: the control plane refuses a script that uses any of them
// when it is created or patched (Check), and the agent's runtime throws the same message when
// a script reaches one anyway (through an alias the check could not follow).
type Refusal struct {
	// Object is what the member belongs to, as a script names it: a fixture ("browser",
	// "page", "context"), an export of TestModule ("chromium"), or "expect(…)" for matchers.
	Object string
	// Member is the refused member; empty refuses the object itself.
	Member string
	// Why says what to do instead, or why it cannot be done.
	Why string
}

// API names the refused API the way messages show it: "browser.newContext()".
func (r Refusal) API() string {
	switch {
	case r.Member == "":
		return r.Object
	case r.Object == "expect(…)":
		return "expect(…)." + r.Member + "()"
	}
	return r.Object + "." + r.Member + "()"
}

// Message is the text of the refusal, without its place.
func (r Refusal) Message() string {
	if r.Why == "" {
		return "not supported: " + r.API()
	}
	return fmt.Sprintf("not supported: %s — %s", r.API(), r.Why)
}

// Objects a script may not hold at all: any use of one of them is refused, naming the member
// used ("browser.newContext()") or, when none is, the object ("the browser fixture").
var refusedObjects = map[string]string{
	// Fixtures.
	"browser":     "a check runs in one browser, which gives each test a fresh context and page; use the context and page fixtures",
	"playwright":  "a check runs in one browser; use the context and page fixtures",
	"browserType": "a check runs in one browser; use the context and page fixtures",
	// Exports of TestModule.
	"chromium":  "a check runs in the agent's Chromium; use the page fixture",
	"firefox":   "a check runs in the agent's Chromium only",
	"webkit":    "a check runs in the agent's Chromium only",
	"_android":  "a check runs in the agent's Chromium only",
	"_electron": "a check runs in the agent's Chromium only",
	"electron":  "a check runs in the agent's Chromium only",
}

// refusedMembers are members of objects a script may hold.
var refusedMembers = []Refusal{
	{Object: "page", Member: "video", Why: "checks record no video"},
	{Object: "page", Member: "pdf", Why: "checks have no file system; use page.screenshot()"},
	{Object: "page", Member: "coverage", Why: "checks collect no coverage"},
	{Object: "context", Member: "tracing", Why: "checks record no trace; every step's timing comes with the result"},
	{Object: "context", Member: "browser", Why: "a check runs in one browser, which gives each test a fresh context"},
	{Object: "expect(…)", Member: "toHaveScreenshot", Why: "visual comparison is not built; take page.screenshot() and assert on the page instead"},
	{Object: "expect(…)", Member: "toMatchSnapshot", Why: "checks keep no snapshot files"},
}

// RefusedMember returns the refusal of object.member, if that member is refused.
func RefusedMember(object, member string) (Refusal, bool) {
	if why, ok := refusedObjects[object]; ok && why != "" {
		return Refusal{Object: object, Member: member, Why: why}, true
	}
	for _, r := range refusedMembers {
		if r.Object == object && r.Member == member {
			return r, true
		}
	}
	return Refusal{}, false
}

// RefusedObject returns the refusal of holding object at all (a fixture or an export).
func RefusedObject(object string) (Refusal, bool) {
	why, ok := refusedObjects[object]
	if !ok || why == "" {
		return Refusal{}, false
	}
	name := object
	switch object {
	case "browser", "playwright", "browserType":
		name = "the " + object + " fixture"
	}
	return Refusal{Object: name, Why: why}, true
}

// RefusedModule is the refusal of importing any module but TestModule.
func RefusedModule(module string) Refusal {
	return Refusal{Object: fmt.Sprintf("require('%s')", module), Why: "a browser check script can import only " + TestModule + " (there is no file system, network or process access)"}
}
