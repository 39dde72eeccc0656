package browserscript

import (
	"strings"
	"testing"
)

func analyze(t *testing.T, src string) *Analysis {
	t.Helper()
	prog, err := Transform("a.spec.ts", src)
	if err != nil {
		t.Fatalf("transform: %v", err)
	}
	a, err := Analyze(prog)
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	return a
}

func TestAnalyzeFindsTestsThroughAliases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		declares  bool
	}{
		{"named import", "import { test } from '@playwright/test'\ntest('a', async () => {})", true},
		{"import alias", "import { test as it, expect } from '@playwright/test'\nit('a', async ({ page }) => {})", true},
		{"require destructured alias", "const { test: base } = require('@playwright/test')\nbase('a', async () => {})", true},
		{"extend result", "const { test: base } = require('@playwright/test')\nconst test = base.extend({ user: async ({}, use) => { await use('u') } })\ntest('a', async ({ user }) => {})", true},
		{"extend of extend", "import { test as base } from '@playwright/test'\nconst t1 = base.extend({})\nexport const t2 = t1.extend({})\nt2.only('a', async () => {})", true},
		{"namespace import", "import * as pw from '@playwright/test'\npw.test('a', async () => {})", true},
		{"default import", "import pwt from '@playwright/test'\npwt('a', async () => {})", true},
		{"require object", "const pw = require('@playwright/test')\npw.test.skip('a', async () => {})", true},
		{"test in describe", "import { test } from '@playwright/test'\ntest.describe('s', () => { test('a', async () => {}) })", true},
		{"modifier only", "import { test } from '@playwright/test'\ntest.skip()\ntest.describe('s', () => {})", false},
		{"a method named test", "import '@playwright/test'\n/x/.test('x')", false},
		{"a local function named test", "import { expect } from '@playwright/test'\nfunction test(a: string, f: () => void) {}\ntest('a', () => {})", false},
		{"test in a comment", "import { test } from '@playwright/test'\n// test('a', async () => {})", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := analyze(t, tc.src).DeclaresTest; got != tc.declares {
				t.Errorf("DeclaresTest = %v, want %v", got, tc.declares)
			}
		})
	}
}

func TestAnalyzeRefusesWithLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"browser.newContext", "import { test } from '@playwright/test'\n\ntest('a', async ({ browser }) => {\n  // a comment\n  const c = await browser.newContext()\n})", "browser.newContext() at line 5"},
		{"browser fixture unused", "import { test } from '@playwright/test'\ntest('a', async ({ page, browser: b }) => {\n})", "the browser fixture at line 2"},
		{"chromium.launch", "import { test, chromium } from '@playwright/test'\ntest('a', async () => {\n  await chromium.launch()\n})", "chromium.launch() at line 3"},
		{"pw.firefox", "import * as pw from '@playwright/test'\npw.test('a', async () => {\n  await pw.firefox.launch()\n})", "firefox.launch() at line 3"},
		{"pw.webkit held", "import * as pw from '@playwright/test'\nconsole.log(pw.webkit)\npw.test('a', async () => {})", "webkit at line 2"},
		{"held export", "import { test, webkit as wk } from '@playwright/test'\ntest('a', async () => {\n  const b = await wk.launch()\n})", "webkit.launch() at line 3"},
		{"require fs", "import { test } from '@playwright/test'\nimport fs from 'fs'\ntest('a', async () => { fs.readFileSync('x') })", "require('fs') at line 2"},
		{"require child_process", "const { test } = require('@playwright/test')\ntest('a', async () => {\n  require('child_process').exec('x')\n})", "require('child_process') at line 3"},
		{"toHaveScreenshot", "import { test, expect } from '@playwright/test'\ntest('a', async ({ page }) => {\n  await expect(page).toHaveScreenshot('x.png')\n})", "expect(…).toHaveScreenshot() at line 3"},
		{"not.toMatchSnapshot", "import { test, expect } from '@playwright/test'\ntest('a', async ({ page }) => {\n  expect(await page.title()).not.toMatchSnapshot()\n})", "expect(…).toMatchSnapshot() at line 3"},
		{"page.pdf", "import { test } from '@playwright/test'\ntest('a', async ({ page }) => {\n  await page.pdf()\n})", "page.pdf() at line 3"},
		{"page.video", "import { test } from '@playwright/test'\ntest('a', async ({ page }) => {\n  page.video()\n})", "page.video() at line 3"},
		{"context.tracing", "import { test } from '@playwright/test'\ntest('a', async ({ context }) => {\n  await context.tracing.start()\n})", "context.tracing() at line 3"},
		{"page.context().tracing", "import { test } from '@playwright/test'\ntest('a', async ({ page }) => {\n  await page.context().tracing.start()\n})", "context.tracing() at line 3"},
		{"test.use httpCredentials", "import { test } from '@playwright/test'\ntest.describe('s', () => {\n  test.use({ locale: 'de-DE', httpCredentials: { username: 'u', password: 'p' } })\n  test('a', async () => {})\n})", "test.use({ httpCredentials }) at line 3"},
		{"browser in a fixture", "import { test as base } from '@playwright/test'\nconst test = base.extend({ ctx: async ({ browser }, use) => {\n  await use(await browser.newContext())\n} })\ntest('a', async ({ ctx }) => {})", "browser.newContext() at line 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := analyze(t, tc.src)
			if len(a.Refused) == 0 {
				t.Fatalf("nothing refused, want %q", tc.want)
			}
			if got := a.Refused[0].Error(); got != tc.want {
				t.Errorf("refused %q, want %q", got, tc.want)
			}
			if !strings.HasPrefix(a.Refused[0].Message(), "not supported: ") {
				t.Errorf("message %q", a.Refused[0].Message())
			}
		})
	}
}

func TestAnalyzeAcceptsWhatOthersBuild(t *testing.T) {
	t.Parallel()
	src := `import { test, expect, request, devices } from '@playwright/test'
test.use({ viewport: { width: 800, height: 600 } })
test('a', async ({ page, context, request: api }, testInfo) => {
  page.on('response', () => {})
  await page.route('**/x', r => r.abort())
  const popup = await context.newPage()
  await context.addCookies([])
  const r = await api.get('https://example.com')
  await expect(r).toBeOK()
  await page.screenshot({ path: 'x.png' })
  await testInfo.attach('x', { body: 'y' })
  const cdp = await context.newCDPSession(page)
  await page.frameLocator('#f').locator('a').click()
  await expect(page.getByRole('main')).toMatchAriaSnapshot('- main')
  const s = { pdf() {}, video: 1 }
  s.pdf()
  expect.soft(1).toBe(1)
})`
	a := analyze(t, src)
	if !a.DeclaresTest {
		t.Error("DeclaresTest = false")
	}
	for _, u := range a.Refused {
		t.Errorf("refused %s", u.Error())
	}
}
