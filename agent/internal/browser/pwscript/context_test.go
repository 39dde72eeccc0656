package pwscript

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// echoSite serves a page that stores what it is asked to and records the headers of every
// request, so tests can see what a test's browser context sent.
func echoSite(t *testing.T) (*httptest.Server, func(path string) http.Header) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>Echo</title><h1>Echo</h1>")
	}))
	t.Cleanup(srv.Close)
	return srv, func(path string) http.Header {
		mu.Lock()
		defer mu.Unlock()
		return seen[path]
	}
}

func TestFreshContextPerTest(t *testing.T) {
	t.Parallel()
	srv, _ := echoSite(t)
	for _, describe := range []string{"test.describe", "test.describe.serial"} {
		t.Run(describe, func(t *testing.T) {
			t.Parallel()
			src := fmt.Sprintf(`import { test, expect } from '@playwright/test'
%s('isolation', () => {
  test('leaves state behind', async ({ page }) => {
    await page.goto('%s/one')
    await page.evaluate(() => { localStorage.setItem('k', 'v'); sessionStorage.setItem('s', 'v'); document.cookie = 'c=1; path=/' })
    expect(await page.evaluate(() => localStorage.getItem('k'))).toBe('v')
  })
  test('starts clean', async ({ page }) => {
    expect(page.url()).toBe('about:blank')
    await page.goto('%s/two')
    expect(await page.evaluate(() => localStorage.getItem('k'))).toBeNull()
    expect(await page.evaluate(() => sessionStorage.getItem('s'))).toBeNull()
    expect(await page.evaluate(() => document.cookie)).toBe('')
  })
})`, describe, srv.URL, srv.URL)
			rep := runScript(t, "iso.spec.ts", src, Options{})
			if !rep.Passed || len(rep.Tests) != 2 {
				t.Fatalf("want both tests passed:\n%s", describeReport(rep))
			}
		})
	}
}

func TestUseOptionsReachThePage(t *testing.T) {
	t.Parallel()
	srv, seen := echoSite(t)
	src := fmt.Sprintf(`import { test, expect } from '@playwright/test'
test.use({ locale: 'de-DE', timezoneId: 'Asia/Tokyo', baseURL: '%s', headless: false, trace: 'on' })
test.describe('configured', () => {
  test.use({
    viewport: { width: 640, height: 480 },
    userAgent: 'VantageTest/1.0',
    extraHTTPHeaders: { 'X-Check': 'yes' },
    colorScheme: 'dark',
    testIdAttribute: 'data-qa',
  })
  test('sees its options', async ({ page }) => {
    await page.goto('/configured')
    expect(page.url()).toBe('%s/configured')
    const got = await page.evaluate(() => [navigator.userAgent, navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone, innerWidth, innerHeight, matchMedia('(prefers-color-scheme: dark)').matches])
    expect(got).toEqual(['VantageTest/1.0', 'de-DE', 'Asia/Tokyo', 640, 480, true])
    await page.evaluate(() => { document.body.innerHTML = '<b data-qa="x">qa</b>' })
    await expect(page.getByTestId('x')).toHaveText('qa')
  })
})
test('outside the describe keeps the defaults', async ({ page }) => {
  await page.goto('/plain')
  expect(await page.evaluate(() => [innerWidth, navigator.userAgent.includes('VantageTest'), navigator.language])).toEqual([1280, false, 'de-DE'])
})`, srv.URL, srv.URL)
	rep := runScript(t, "use.spec.ts", src, Options{})
	if !rep.Passed || len(rep.Tests) != 2 {
		t.Fatalf("want both tests passed:\n%s", describeReport(rep))
	}
	h := seen("/configured")
	if h.Get("X-Check") != "yes" || h.Get("User-Agent") != "VantageTest/1.0" || !strings.HasPrefix(h.Get("Accept-Language"), "de-DE") {
		t.Errorf("headers of the configured test: %v", h)
	}
	if h := seen("/plain"); h.Get("X-Check") != "" {
		t.Errorf("the extra header leaked to the next test: %v", h)
	}
}

func TestUseOptionsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, use, want string }{
		{"httpCredentials", "{ httpCredentials: { username: 'u', password: 'p' } }", "not supported: test.use({ httpCredentials })"},
		{"unknown", "{ viewPort: { width: 1, height: 1 } }", "not supported: test.use({ viewPort })"},
		{"firefox", "{ browserName: 'firefox' }", "not supported: test.use({ browserName: 'firefox' })"},
		{"bad viewport", "{ viewport: { width: 0 } }", "test.use: viewport: expected { width, height }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "import { test } from '@playwright/test'\ntest.use(" + tc.use + ")\ntest('a', async () => {})"
			rep := runScript(t, "refused.spec.ts", src, Options{})
			if rep.Passed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, tc.want) {
				t.Fatalf("want a failure with %q:\n%s", tc.want, describeReport(rep))
			}
			if !strings.HasPrefix(rep.Failure.Location, "refused.spec.ts:2:") {
				t.Errorf("location %q", rep.Failure.Location)
			}
		})
	}
}

func TestContextFixture(t *testing.T) {
	t.Parallel()
	srv, seen := echoSite(t)
	src := fmt.Sprintf(`import { test, expect } from '@playwright/test'
test('cookies, headers and storage', async ({ page, context }) => {
  expect(page.context()).toBe(context)
  expect(context.pages()).toEqual([page])
  await context.addCookies([{ name: 'session', value: 'abc', url: '%s' }])
  await context.setExtraHTTPHeaders({ 'X-From-Context': '1' })
  await page.goto('%s/cookies')
  expect(await page.evaluate(() => document.cookie)).toBe('session=abc')
  const cookies = await context.cookies('%s')
  expect(cookies).toEqual([expect.objectContaining({ name: 'session', value: 'abc', domain: '127.0.0.1', path: '/' })])
  await page.evaluate(() => localStorage.setItem('token', 't1'))
  const state = await context.storageState()
  expect(state.origins).toEqual([{ origin: '%s', localStorage: [{ name: 'token', value: 't1' }] }])
  expect(state.cookies.length).toBe(1)
  await context.clearCookies()
  expect(await context.cookies()).toEqual([])
  await context.setOffline(true)
  await expect(page.goto('%s/offline')).rejects.toThrow()
})
test('the next test has none of it', async ({ context }) => {
  expect(await context.cookies()).toEqual([])
})`, srv.URL, srv.URL, srv.URL, srv.URL, srv.URL)
	rep := runScript(t, "ctx.spec.ts", src, Options{})
	if !rep.Passed || len(rep.Tests) != 2 {
		t.Fatalf("want both tests passed:\n%s", describeReport(rep))
	}
	if h := seen("/cookies"); h.Get("X-From-Context") != "1" || h.Get("Cookie") != "session=abc" {
		t.Errorf("headers seen: %v", h)
	}
	if h := seen("/offline"); h != nil {
		t.Errorf("an offline page reached the server: %v", h)
	}
}
