package pwscript

import "testing"

func TestSelectorExtensions(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('selectors', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/selectors.html');
  const n = (sel) => page.locator(sel).count();
  // :has-text: case-insensitive substring of the normalized text, any element holding it.
  expect(await n('div.plan:has-text("pro plan")')).toBe(1);
  expect(await n('.plan:has-text("Buy")')).toBe(3);
  expect(await n('li:has-text("apple")')).toBe(2);
  // :text: the smallest element; :text-is: the whole text, case-sensitive.
  expect(await page.locator(':text("pro plan")').evaluate((e) => e.tagName)).toBe('SPAN');
  expect(await n('li:text-is("apple")')).toBe(1);
  expect(await n('li:text-is("Apple")')).toBe(0);
  expect(await n('li:text-matches("^apple", "i")')).toBe(2);
  expect(await n('li:text-matches("^apple")')).toBe(1);
  // :visible, :nth-match, :has, :is and :not holding extensions.
  expect(await n('.plan:visible')).toBe(2);
  expect(await n('.plan button:visible')).toBe(2);
  await expect(page.locator(':nth-match(.plan button, 2)')).toHaveCount(1);
  expect(await page.locator(':nth-match(.plan:visible, 2) span').textContent()).toBe('Pro  plan');
  expect(await n('.plan:has(span:text-is("Basic"))')).toBe(1);
  expect(await n('li:is(:text("Banana"), :text-is("apple"))')).toBe(2);
  expect(await n('.plan:not(:has-text("Basic"))')).toBe(2);
  expect(await n('article > .plan + .plan:has-text("Pro")')).toBe(1);
  // Plain CSS still goes to the browser as it is (shadow roots pierced).
  expect(await n('div.plan, h2')).toBe(4);
  // Layout: B is right of A, C below A; nearest first.
  expect(await page.locator('.box:right-of(#a)').first().textContent()).toBe('B');
  expect(await page.locator('.box:below(#a)').first().textContent()).toBe('C');
  expect(await page.locator('.box:left-of(#b)').first().textContent()).toBe('A');
  expect(await page.locator('.box:above(#c)').first().textContent()).toBe('A');
  expect(await n('.box:near(#a)')).toBe(2);
  // Engines in chains.
  await expect(page.locator('article >> role=button[name="buy"] >> nth=1')).toHaveCount(1);
  expect(await n('role=button[name="Buy"s]')).toBe(2);
  expect(await n('role=button[pressed]')).toBe(1);
  expect(await n('role=button[disabled]')).toBe(1);
  expect(await n('role=heading[level=2]')).toBe(1);
  expect(await n('internal:role=button[name="Bold"i]')).toBe(1);
  expect(await n('.plan >> internal:text="buy"i')).toBe(3);
  expect(await n('internal:text="Buy"s')).toBe(3);
  expect(await n('internal:label="Email"i')).toBe(1);
  expect(await n('internal:attr=[id="email"s]')).toBe(1);
  expect(await n('div >> internal:has-text="Basic"i')).toBe(1);
  expect(await n('.plan >> internal:has="span >> text=Pro"')).toBe(1);
  expect(await n('css=.plan >> text=Basic')).toBe(1);
  await page.locator('.plan:has-text("Basic") >> role=button').click();
});
`)
}

func TestSelectorEngineUnknown(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runFail(t, srv, other, `
test('unknown engine', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/selectors.html');
  await page.locator('vue=Button').click();
});
`, "not supported: the vue= selector engine")
}
