package pwscript

import (
	"strings"
	"testing"
)

func TestExpectAPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       []string // nil: passes
	}{
		{"soft failures add up", `
  expect.soft(1).toBe(2)
  await expect.soft(page.locator('h1')).toHaveText('nope', { timeout: 100 })
  log.push('went on')
  expect(log).toEqual(['went on'])`, []string{"2 soft assertions failed", "Expected: 2", "toHaveText", "t.spec.ts:6:"}},
		{"soft passes", `expect.soft(1).toBe(1); expect.soft([1]).toEqual([1])`, nil},
		{"poll passes", `
  let n = 0
  await expect.poll(() => ++n, { intervals: [10] }).toBeGreaterThan(3)
  await expect.poll(async () => n).not.toBe(0)`, nil},
		{"poll times out", `await expect.poll(() => 1, { timeout: 300, intervals: [50] }).toBe(2)`, []string{"Expected: 2", "Timeout 300ms exceeded while waiting on the predicate", "t.spec.ts:5:"}},
		{"configure soft", `const soft = expect.configure({ soft: true }); soft(1).toBe(3); log.push('after')`, []string{"Expected: 3"}},
		{"configure timeout", `await expect.configure({ timeout: 100 })(page.locator('#missing')).toBeVisible()`, []string{"Timeout: 100ms"}},
		{"asymmetric", `
  expect({ id: 7, name: 'Ann', tags: ['a', 'b'], at: 1.004 }).toEqual({
    id: expect.any(Number), name: expect.stringContaining('nn'), tags: expect.arrayContaining(['b']), at: expect.closeTo(1, 2),
  })
  expect({ a: { b: 1, c: 2 } }).toEqual({ a: expect.objectContaining({ b: 1 }) })
  expect('hello').toEqual(expect.stringMatching(/^h/))
  expect(['x']).toEqual(expect.not.arrayContaining(['y']))
  expect({ x: null }).not.toEqual({ x: expect.anything() })`, nil},
		{"asymmetric mismatch", `expect({ id: 'x' }).toEqual({ id: expect.any(Number) })`, []string{"toEqual"}},
		{"resolves and rejects", `
  await expect(Promise.resolve(3)).resolves.toBe(3)
  await expect(Promise.reject(new Error('boom'))).rejects.toThrow('boom')
  await expect(Promise.resolve(1)).resolves.not.toBe(2)`, nil},
		{"resolves of a rejection", `await expect(Promise.reject(new Error('boom'))).resolves.toBe(1)`, []string{"Received promise rejected instead of resolved"}},
		{"extend sync and async", `
  expect.extend({
    toBeEven(received: number) { return { pass: received % 2 === 0, message: () => 'expected ' + received + (this.isNot ? ' not' : '') + ' to be even' } },
    async toBeEventually(received: number, want: number) { await new Promise(r => setTimeout(r, 10)); return { pass: received === want, message: () => 'no' } },
  })
  expect(4).toBeEven()
  expect(3).not.toBeEven()
  await expect(5).toBeEventually(5)
  expect(4).not.toBeEven()`, []string{"expected 4 not to be even", "t.spec.ts:13:"}},
		{"unknown matcher", `expect(1).toBeShiny()`, []string{"not supported: expect(received).toBeShiny()"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "import { test, expect } from '@playwright/test'\nconst log: string[] = []\ntest('t', async ({ page }) => {\n  await page.setContent ? null : null\n" + tc.body + "\n})"
			src = strings.Replace(src, "  await page.setContent ? null : null\n", "  await page.goto('data:text/html,<h1>Hi</h1>')\n", 1)
			rep := runScript(t, "t.spec.ts", src, Options{})
			if tc.want == nil {
				if !rep.Passed {
					t.Fatalf("want a pass:\n%s", describeReport(rep))
				}
				return
			}
			if rep.Passed || rep.Failure == nil {
				t.Fatalf("want a failure:\n%s", describeReport(rep))
			}
			all := rep.Failure.Message + " at " + rep.Failure.Location
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("failure lacks %q:\n%s", w, all)
				}
			}
		})
	}
}
