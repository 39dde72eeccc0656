package pwscript

import "testing"

func TestAriaSnapshot(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	rep := runPass(t, srv, other, `
test('aria', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/selectors.html');
  const snap = await page.locator('article').ariaSnapshot();
  console.log(snap);
  expect(snap).toContain('- heading "Plans" [level=2]');
  expect(snap).toContain('- button "Buy"');
  expect(snap).not.toContain('Hidden');
  expect(await page.locator('ul').ariaSnapshot()).toBe('- list:\n  - listitem: Apple pie\n  - listitem: apple\n  - listitem: Banana');
  await expect(page.locator('body')).toMatchAriaSnapshot(`+"`"+`
    - article:
      - heading "Plans" [level=2]
    - list:
      - listitem: Apple pie
      - listitem: /^Ban/
    - button "Bold" [pressed]
  `+"`"+`);
  await expect(page.getByRole('list')).toMatchAriaSnapshot('- listitem: Banana');
  await expect(page.locator('ul')).not.toMatchAriaSnapshot('- listitem: Cherry', { timeout: 200 });
});
`)
	if len(rep.Console) == 0 {
		t.Fatal("no snapshot logged")
	}
	t.Logf("snapshot:\n%s", rep.Console[0])
}

func TestAriaSnapshotMismatch(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runFail(t, srv, other, `
test('aria mismatch', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/selectors.html');
  await expect(page.locator('ul')).toMatchAriaSnapshot('- list:\n  - listitem: Cherry', { timeout: 300 });
});
`, "expect(locator).toMatchAriaSnapshot(expected) failed")
}
