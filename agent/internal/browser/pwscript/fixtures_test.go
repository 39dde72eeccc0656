package pwscript

import (
	"fmt"
	"strings"
	"testing"
)

func TestExtendFixtures(t *testing.T) {
	t.Parallel()
	srv, _ := echoSite(t)
	src := fmt.Sprintf(`import { test as base, expect } from '@playwright/test'
const log: string[] = []
type F = { user: string, greeting: string, shared: number, home: void }
let made = 0
const test = base.extend<F>({
  user: ['anonymous', { option: true }],
  greeting: async ({ user }, use) => { log.push('setup ' + user); await use('hello ' + user); log.push('teardown ' + user) },
  shared: [async ({}, use) => { made++; await use(made) }, { scope: 'worker' }],
  page: async ({ page }, use) => { await page.goto('%s/fixture'); await use(page) },
})
test('uses the fixtures', async ({ greeting, shared, page }) => {
  expect(greeting).toBe('hello anonymous')
  expect(shared).toBe(1)
  expect(page.url()).toBe('%s/fixture')
})
test.describe('with an option', () => {
  test.use({ user: 'ann' })
  test('sees the option', async ({ greeting, shared }) => {
    expect(greeting).toBe('hello ann')
    expect(shared).toBe(1)
    expect(log).toEqual(['setup anonymous', 'teardown anonymous', 'setup ann'])
  })
})
const { test: it } = require('@playwright/test')
it('the base keeps its fixtures', async ({ page }) => {
  expect(page.url()).toBe('about:blank')
})
`, srv.URL, srv.URL)
	rep := runScript(t, "extend.spec.ts", src, Options{})
	if !rep.Passed || len(rep.Tests) != 3 {
		t.Fatalf("want three tests passed:\n%s", describeReport(rep))
	}
}

func TestExtendFixtureFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, fixture, want string }{
		{"throws in setup", "async ({}, use) => { throw new Error('no database') }", "no database"},
		{"never calls use", "async ({}, use) => {}", `Fixture "db" finished without calling use(value)`},
		{"throws in teardown", "async ({}, use) => { await use(1); throw new Error('teardown broke') }", "teardown broke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "import { test as base } from '@playwright/test'\nconst test = base.extend({ db: " + tc.fixture + " })\ntest('a', async ({ db }) => {})"
			rep := runScript(t, "fx.spec.ts", src, Options{})
			if rep.Passed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, tc.want) {
				t.Fatalf("want a failure with %q:\n%s", tc.want, describeReport(rep))
			}
		})
	}
}
