// expect: pass
import { test, expect } from '@playwright/test';

test('explicit waits', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/delayed.html', { waitUntil: 'domcontentloaded' });
  await page.waitForLoadState('load');
  await page.getByRole('heading', { name: 'Results are in' }).waitFor();
  await page.locator('#spinner').waitFor({ state: 'detached' });
  await page.locator('#fading').waitFor({ state: 'hidden' });
  const start = Date.now();
  await page.waitForTimeout(200);
  expect(Date.now() - start).toBeGreaterThanOrEqual(190);
  await page.goto(process.env.BASE_URL + '/slow?ms=300', { waitUntil: 'commit' });
  await page.waitForURL('**/slow?ms=300');
  await page.waitForLoadState();
  await expect(page.getByRole('heading', { name: 'Slow page' })).toBeVisible();
  await page.goto(process.env.BASE_URL + '/home.html', { waitUntil: 'networkidle' });
  await page.waitForSelector('#intro');
});
