package check

import (
	"strings"
	"testing"
)

func TestDefaultsAreValid(t *testing.T) {
	t.Parallel()
	for _, k := range Kinds {
		s := Defaults(k)
		s.Name = "n"
		switch k {
		case Uptime:
			u := "https://example.com"
			s.HTTP.URL = &u
		case Browser:
			sc := "import { test } from '@playwright/test'\ntest('x', async () => {})"
			s.HTTP.Script = &sc
		case DNS:
			s.DNS.Domain, s.DNS.RecordType = "example.com", "A"
		case TCP:
			s.TCP.Hostname, s.TCP.Port = "example.com", 443
		case Ping:
			s.Ping.Hostname = "example.com"
		case GRPC:
			s.GRPC.Hostname, s.GRPC.Port = "example.com", 443
		case WebSocket:
			s.WebSocket.URL = "wss://example.com/socket"
		case Multistep:
			s.Multistep.Script = "import { test } from '@playwright/test'\ntest('x', async ({ request }) => {})"
		}
		if fe := s.Validate(); len(fe) != 0 {
			t.Errorf("%s defaults: %v", k, fe)
		}
	}
	if Defaults(TCP).AlertPriority != PriorityLow || Defaults(DNS).AlertPriority != PriorityHigh {
		t.Error("alert_priority defaults: TCP LOW, others HIGH")
	}
	if Defaults(Uptime).Version != nil || *Defaults(DNS).Version != VersionDNS || *Defaults(TCP).Version != VersionTCP || *Defaults(Browser).Version != VersionBrowser {
		t.Error("version defaults")
	}
}

func TestScriptProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		script string
		want   string // "" = accepted
	}{
		{"import { test, expect } from '@playwright/test'\ntest('a', async () => {})", ""},
		{"import {\n  test,\n  expect,\n} from \"@playwright/test\";\ntest.describe('s', () => { test('a', async () => {}) })", ""},
		{"const { test } = require('@playwright/test')\ntest.skip('a', () => {})", ""},
		// test is no global in Playwright: a side-effect import leaves it undefined.
		{"import '@playwright/test'\n  test ('a', () => {})", "test() block"},
		{"import { test as it } from '@playwright/test'\nit('a', async () => {})", ""},
		{"const { test: base } = require('@playwright/test')\nconst test = base.extend({})\ntest('a', async () => {})", ""},
		{"import { test } from '@playwright/test'\ntest('a', async ({ browser }) => {\n  await browser.newContext()\n})", "not supported: browser.newContext() at line 3"},
		{"import { test } from 'vitest'\ntest('a', () => {})", "must import"},
		{"import { test } from '@playwright/test-utils'\ntest('a', () => {})", "must import"},
		{"test('a', () => {})", "must import"},
		{"import { test } from '@playwright/test'", "test() block"},
		{"import { test } from '@playwright/test'\n/x/.test('a')\nmytest('a')", "test() block"},
	}
	for _, tc := range cases {
		got := ScriptProblem(tc.script)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestAddressRules(t *testing.T) {
	t.Parallel()
	resolvers := map[string]bool{
		"1.1.1.1:53": true, "[2606:4700:4700::1111]:53": true, "dns.google:853": true, "localhost:5353": true,
		"1.1.1.1": true, "2606:4700:4700::1111": true, "::1": true, // bare addresses mean port 53
		"dns.google": false, "fe80::1%eth0": false, "[::1]": false, ":53": false, "1.1.1.1:0": false,
		"1.1.1.1:053": false, "1.1.1.1:dns": false, "[fe80::1%eth0]:53": false, "bad host:53": false,
	}
	for in, ok := range resolvers {
		if got := resolverProblem(in); (got == "") != ok {
			t.Errorf("resolver %q: %q", in, got)
		}
	}
	hosts := map[string]bool{
		"example.com": true, "example.com.": true, "_dmarc.example.com": true, "xn--bcher-kva.de": true, "a": true,
		"": false, ".": false, "a..b": false, "-a.com": false, "a-.com": false, "bücher.de": false, "a b": false,
		strings.Repeat("a", 64) + ".com": false, strings.Repeat("abcdefghi.", 25) + "abc": true, strings.Repeat("abcdefghi.", 25) + "abcd": false,
	}
	for in, ok := range hosts {
		if got := hostnameProblem(in, false); (got == "") != ok {
			t.Errorf("domain %q: %q", in, got)
		}
	}
	for in, ok := range map[string]bool{"192.0.2.1": true, "2001:db8::1": true, "[2001:db8::1]": false, "db:5432": false} {
		if got := hostnameProblem(in, true); (got == "") != ok {
			t.Errorf("host %q: %q", in, got)
		}
	}
	urls := map[string]bool{
		"https://example.com": true, "HTTP://example.com:8080/a?b=c": true, "https://user:pw@example.com/": true,
		"example.com": false, "ftp://example.com": false, "https://": false, "https:///path": false, " https://example.com": false,
		// What a browser check's page must never load (the agent refuses them too).
		"file:///etc/passwd": false, "file://localhost/etc/passwd": false, "view-source:https://example.com": false,
		"chrome://version": false, "data:text/html,x": false, "about:blank": false,
	}
	for in, ok := range urls {
		if got := urlProblem(in); (got == "") != ok {
			t.Errorf("url %q: %q", in, got)
		}
	}
}

func TestSetHTTPKindAndVarRefs(t *testing.T) {
	t.Parallel()
	s := Defaults(Uptime)
	pw, user := "{{PASS}}", "plain"
	s.HTTP.Headers = map[string]string{"B": "{{TOKEN}} {{OTHER}}", "A": "x{{TOKEN}}"}
	s.HTTP.AuthPassword, s.HTTP.AuthUsername = &pw, &user
	got := s.VarRefs()
	want := []VarRef{{"headers.A", "TOKEN"}, {"headers.B", "TOKEN"}, {"headers.B", "OTHER"}, {"auth_password", "PASS"}}
	if len(got) != len(want) {
		t.Fatalf("VarRefs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("VarRefs %v, want %v", got, want)
		}
	}
	s.SetHTTPKind(Browser)
	if s.Kind != Browser || *s.Version != VersionBrowser {
		t.Fatalf("to browser: %+v", s)
	}
	if refs := s.VarRefs(); len(refs) != 1 || refs[0].Field != "auth_password" {
		t.Fatalf("browser refs %v: headers take none", refs)
	}
	sc := "x"
	s.HTTP.Script = &sc
	s.SetHTTPKind(Uptime)
	if s.Kind != Uptime || s.Version != nil || s.HTTP.Script != nil {
		t.Fatalf("to uptime: %+v", s)
	}
}

func TestScriptProblemSyntaxError(t *testing.T) {
	t.Parallel()
	got := ScriptProblem("import { test } from '@playwright/test'\ntest('a', async () => {\n  await page.goto(\n})\n")
	if want := "line 4, column 1: "; !strings.HasPrefix(got, want) {
		t.Errorf("ScriptProblem = %q, want prefix %q", got, want)
	}
	// An import named only in a comment or a string is no import.
	if got := ScriptProblem("// import '@playwright/test'\nconst s = \"require('@playwright/test')\"\ntest('a', () => {})"); !strings.Contains(got, "must import") {
		t.Errorf("ScriptProblem = %q, want the import problem", got)
	}
}
