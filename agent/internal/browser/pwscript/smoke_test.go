package pwscript

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	srv := site(t)
	rep := runScript(t, "smoke.spec.ts", `import { test, expect } from '@playwright/test'
test('home', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/slow?ms=10')
  await expect(page).toHaveTitle('Slow')
  await expect(page.getByRole('heading', { name: 'Slow page' })).toBeVisible()
  const t = await page.locator('p').textContent()
  expect(t).toContain('waited')
  await expect(page.getByText('waited 10ms')).toHaveText('nope', { timeout: 500 })
})
`, Options{Env: map[string]string{"BASE_URL": srv.URL}})
	t.Logf("%+v", rep)
	if rep.Failure != nil {
		t.Logf("failure: %s\n%s\n%s", rep.Failure.Message, rep.Failure.Location, rep.Failure.Step)
	}
	for _, tr := range rep.Tests {
		for _, s := range tr.Steps {
			t.Logf("step %s %s %v %s", s.Title, s.Location, s.Duration, s.Error)
		}
	}
}
