// expect: pass
import { test, expect } from '@playwright/test';

test('name matching: substring, exact, regular expression', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByRole('button', { name: 'subscribe' })).toHaveCount(1);
  await expect(page.getByRole('button', { name: 'subscribe', exact: true })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Subscribe to news', exact: true })).toHaveCount(1);
  await expect(page.getByRole('button', { name: /^(buy|sell)$/i })).toHaveCount(2);
  await expect(page.getByRole('heading', { name: "Today's deals" })).toBeVisible();
});
