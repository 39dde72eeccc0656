// expect: pass
import { test, expect } from '@playwright/test';

test('evaluate in the page', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  expect(await page.evaluate(() => document.title)).toBe('Vantage Shop');
  expect(await page.evaluate(([a, b]) => a + b, [40, 2])).toBe(42);
  expect(await page.evaluate(async () => { await new Promise((r) => setTimeout(r, 10)); return { ok: true, list: [1, 2] }; })).toEqual({ ok: true, list: [1, 2] });
  expect(await page.evaluate('1 + 1')).toBe(2);
  expect(await page.locator('#intro').evaluate((el) => el.tagName)).toBe('P');
  expect(await page.getByRole('button', { name: 'Buy' }).evaluate((el, suffix) => el.textContent + suffix, '!')).toBe('Buy!');
});
