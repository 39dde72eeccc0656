// expect: pass
import { test, expect } from '@playwright/test';

test('hidden elements', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByText('This is hidden')).toBeHidden();
  await expect(page.getByText('Also hidden')).not.toBeVisible();
  await expect(page.getByText('Invisible')).toBeHidden();
  await expect(page.locator('p.secret')).toHaveCount(3);
  expect(await page.getByText('Invisible').isVisible()).toBe(false);
  expect(await page.getByText('Welcome').isVisible()).toBe(true);
  expect(await page.getByText('Nothing like this').isHidden()).toBe(true);
  await expect(page.getByText('Nothing like this')).toBeHidden();
});
