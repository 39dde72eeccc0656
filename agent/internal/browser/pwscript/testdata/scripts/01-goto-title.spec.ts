// expect: pass
import { test, expect } from '@playwright/test';

test('home page has the shop title', async ({ page }) => {
  const response = await page.goto(process.env.BASE_URL + '/home.html');
  expect(response?.status()).toBe(200);
  await expect(page).toHaveTitle('Vantage Shop');
  await expect(page).toHaveTitle(/vantage/i);
  expect(await page.title()).toBe('Vantage Shop');
  expect(page.url()).toContain('/home.html');
  await expect(page).toHaveURL(/home\.html$/);
});
