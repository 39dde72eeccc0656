package pwscript

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := redactor([]string{"", "abc", "abcdef"})
	if got := r("x abcdef y abc z"); got != "x [REDACTED] y [REDACTED] z" {
		t.Errorf("redact = %q", got)
	}
	if got := redactor(nil)("abc"); got != "abc" {
		t.Errorf("no secrets: %q", got)
	}
	// Messages quote values: the quoted and JSON-escaped forms of a secret go too.
	if got := redactor([]string{`pa"ss<wörd`})(`Expected: "pa\"ss<wörd" Received: "pa\"ss\u003cw\u00f6rd"`); strings.Contains(got, "ss") {
		t.Errorf("a quoted secret is left: %q", got)
	}
	rep := &Report{
		Summary: "abc", Console: []string{"log: abc"},
		Failure: &Failure{Message: "m abc", Step: "s abc"},
		Tests:   []TestReport{{Title: "t abc", Error: "e abc", Steps: []StepReport{{Title: "goto abc", Error: "x abc", Steps: []StepReport{{Title: "abc"}}}}}},
	}
	redactReport(rep, r)
	if all := describeReport(rep) + rep.Failure.Step; strings.Contains(all, "abc") {
		t.Errorf("a secret is left:\n%s", all)
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	msg := "expect(locator).toHaveText(expected) failed\n\nLocator: getByRole('heading')\nExpected: \"A\"\nReceived: \"B\"\n\nCall log:\n  - waiting for x"
	want := `expect(locator).toHaveText(expected) failed — Locator: getByRole('heading') — Expected: "A" — Received: "B"`
	if got := oneLine(msg); got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
	if got := truncate("ééé", 3); got != "é…" {
		t.Errorf("truncate cuts a rune: %q", got)
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec, key string
		mods      []string
		err       bool
	}{
		{"Enter", "Enter", nil, false},
		{"a", "a", nil, false},
		{"Control+a", "a", []string{"Control"}, false},
		{"Shift+ArrowLeft", "ArrowLeft", []string{"Shift"}, false},
		{"Control+Shift+Tab", "Tab", []string{"Control", "Shift"}, false},
		{"Shift++", "+", []string{"Shift"}, false},
		{"+", "+", nil, false},
		{"ControlOrMeta+c", "c", []string{"Control"}, false},
		{"Hyper+a", "", nil, true},
		{"NoSuchKey", "", nil, true},
	}
	for _, tc := range cases {
		mods, key, err := parseKey(tc.spec)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v", tc.spec, err)
			continue
		}
		if err != nil {
			continue
		}
		if key.Key != tc.key || strings.Join(mods, "+") != strings.Join(tc.mods, "+") {
			t.Errorf("%q: key %q mods %v, want %q %v", tc.spec, key.Key, mods, tc.key, tc.mods)
		}
	}
}

func TestGlobToRegexp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		glob, url string
		match     bool
	}{
		{"**/login", "https://example.com/app/login", true},
		{"**/login", "https://example.com/login?x=1", false},
		{"https://example.com/*", "https://example.com/a", true},
		{"https://example.com/*", "https://example.com/a/b", false},
		{"**/*.{png,jpg}", "https://x/a/b.jpg", true},
		{"**/slow?ms=300", "http://127.0.0.1:1/slow?ms=300", true},
	}
	for _, tc := range cases {
		if got := regexp.MustCompile(globToRegexp(tc.glob)).MatchString(tc.url); got != tc.match {
			t.Errorf("%q ~ %q = %v, want %v", tc.glob, tc.url, got, tc.match)
		}
	}
}

func TestTextMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m     textMatch
		text  string
		match bool
	}{
		{textMatch{S: "sign IN"}, "  Sign\n in now ", true},
		{textMatch{S: "Sign in", Exact: true}, " Sign\tin ", true},
		{textMatch{S: "sign in", Exact: true}, "Sign in", false},
		{textMatch{Re: `^sign`, Flags: "i", isRe: true}, "Sign in", true},
		{textMatch{Re: `(?<=a)b`, isRe: true}, "ab", true},
		{textMatch{Re: `^b`, isRe: true}, "ab", false},
	}
	for _, tc := range cases {
		if got := tc.m.matchesText(tc.text); got != tc.match {
			t.Errorf("%+v ~ %q = %v, want %v", tc.m, tc.text, got, tc.match)
		}
	}
	exp := textMatch{S: "Welcome"}
	if !exp.expectText(" Welcome\n", false, false) || exp.expectText("Welcome back", false, false) || !exp.expectText("Welcome back", true, false) {
		t.Error("toHaveText/toContainText comparison")
	}
	if !exp.expectText("WELCOME", false, true) {
		t.Error("ignoreCase")
	}
}

func TestJSQuoteAndDescriptions(t *testing.T) {
	t.Parallel()
	if got := jsQuote("it's a \\ \n"); got != `'it\'s a \\ \n'` {
		t.Errorf("jsQuote = %s", got)
	}
	l := (&locator{}).with("getByRole('list')").with("getByRole('listitem')").with("nth(2)")
	if l.desc != "getByRole('list').getByRole('listitem').nth(2)" {
		t.Errorf("desc = %s", l.desc)
	}
}

func TestFormatAndEquals(t *testing.T) {
	t.Parallel()
	r := &run{vm: goja.New(), locators: map[*goja.Object]*locator{}}
	v := func(src string) goja.Value {
		x, err := r.vm.RunString("(" + src + ")")
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	formats := map[string]string{
		`"a\"b"`:                    `"a\"b"`,
		`[1, "x", null, undefined]`: `[1, "x", null, undefined]`,
		`{a: 1, b: {c: [true]}}`:    `{"a": 1, "b": {"c": [true]}}`,
		`/x+/gi`:                    `/x+/gi`,
		`-0`:                        `-0`,
		`NaN`:                       `NaN`,
		`function named() {}`:       `[Function named]`,
		`new Error("boom")`:         `[Error: boom]`,
		`10n`:                       `10n`,
	}
	for src, want := range formats {
		if got := r.format(v(src)); got != want {
			t.Errorf("format(%s) = %s, want %s", src, got, want)
		}
	}
	equal := []struct {
		a, b          string
		loose, strict bool
	}{
		{`{a: 1, b: undefined}`, `{a: 1}`, true, false},
		{`[1, [2, {x: 3}]]`, `[1, [2, {x: 3}]]`, true, true},
		{`[1, 2]`, `[2, 1]`, false, false},
		{`NaN`, `NaN`, true, true},
		{`0`, `-0`, false, false},
		{`new Date(5)`, `new Date(5)`, true, true},
		{`new Map([["a", 1]])`, `new Map([["a", 2]])`, false, false},
		{`"1"`, `1`, false, false},
	}
	for _, tc := range equal {
		if got := r.equals(v(tc.a), v(tc.b), false); got != tc.loose {
			t.Errorf("toEqual(%s, %s) = %v", tc.a, tc.b, got)
		}
		if got := r.equals(v(tc.a), v(tc.b), true); got != tc.strict {
			t.Errorf("toStrictEqual(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestFunctionSourceClosesArrowBodies(t *testing.T) {
	t.Parallel()
	vm := goja.New()
	for _, src := range []string{
		"() => ({\n  a: 1,\n  b: [1].map((h) => h),\n})",
		"async (x) => ({ s: ')', t: `(${x}` })",
		"function f(a) { return (a) }",
		"(el) => el.textContent",
	} {
		fn, err := vm.RunString("(" + src + ")")
		if err != nil {
			t.Fatal(err)
		}
		got := functionSource(fn)
		if _, err := vm.RunString("(" + got + ")"); err != nil {
			t.Errorf("%q became %q, which does not compile: %v", src, got, err)
		}
	}
}
