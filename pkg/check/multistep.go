package check

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MultistepSpec is what a multistep check runs: a Playwright Test file that calls HTTP APIs
// with the request fixture and asserts on their answers (expect, test.step, process.env), run
// by the agents without a browser. An extension: the contract has no such kind.
type MultistepSpec struct {
	Script string `json:"script" api:"required"`
}

// defaultMultistep has no script: a create body must give one.
func defaultMultistep() *MultistepSpec { return &MultistepSpec{} }

// exampleMultistep is a multistep check's configuration for Example.
func exampleMultistep() *MultistepSpec {
	return &MultistepSpec{Script: "import { test, expect } from '@playwright/test'\n" +
		"test('login then list', async ({ request }) => {\n" +
		"  const login = await request.post('https://api.example.com/login', { data: { user: 'ann' } })\n" +
		"  await expect(login).toBeOK()\n" +
		"  const { token } = await login.json()\n" +
		"  const items = await request.get('https://api.example.com/items', { headers: { Authorization: `Bearer ${token}` } })\n" +
		"  expect((await items.json()).length).toBeGreaterThan(0)\n" +
		"})\n"}
}

// browserFixtures are the fixtures a multistep script cannot have: it runs without a browser.
var browserFixtures = []string{"page", "context", "browser"}

// fixtureParams finds the destructured first parameter of test bodies and hooks —
// `test('t', async ({ request, page }) =>`, `test.beforeEach(async function ({ page }) {` — the
// place a script asks for its fixtures.
var fixtureParams = regexp.MustCompile(`(?:test(?:\.\w+)*)\s*\(\s*(?:(?:'[^']*'|"[^"]*"|` + "`[^`]*`" + `)\s*,\s*)?(?:\{[^{}]*\}\s*,\s*)?(?:async\s+)?(?:function\s*\w*\s*)?\(\s*\{([^{}]*)\}`)

// browserFixtureUse returns the first browser fixture a multistep script asks for and the line
// it is on, or "" when it asks for none.
func browserFixtureUse(script string) (string, int) {
	for _, m := range fixtureParams.FindAllStringSubmatchIndex(script, -1) {
		params := script[m[2]:m[3]]
		for _, p := range strings.Split(params, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(p), ":")
			name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "..."))
			for _, f := range browserFixtures {
				if name == f {
					off := m[2] + strings.Index(params, p)
					return f, strings.Count(script[:off], "\n") + 1
				}
			}
		}
	}
	return "", 0
}

func (s Spec) validateMultistep(fe *FieldErrors) {
	m := s.Multistep
	if m == nil || s.HTTP != nil || s.DNS != nil || s.TCP != nil {
		fe.add("check_type", "a MULTISTEP check must have multistep settings only")
		return
	}
	switch {
	case strings.TrimSpace(m.Script) == "":
		fe.add("script", "must not be empty")
	case utf8.RuneCountInString(m.Script) > MaxScriptLength:
		fe.add("script", "must be at most %d characters", MaxScriptLength)
	default:
		// The browser fixtures first: a multistep check has no browser at all, which says more
		// than the browser checks' refusal of the browser fixture.
		if f, line := browserFixtureUse(m.Script); f != "" {
			fe.add("script", "%s", fmt.Sprintf("line %d: uses the %s fixture, but a multistep check runs without a browser: its tests get { request }", line, f))
		} else if msg := ScriptProblem(m.Script); msg != "" {
			fe.add("script", "%s", msg)
		}
	}
}
