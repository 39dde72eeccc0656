// expect: pass
import { test, expect } from '@playwright/test';

test('the check variables are in process.env', async ({ page }) => {
  expect(process.env.BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(process.env.NOT_SET).toBeUndefined();
  console.log('base is', process.env.BASE_URL);
  await page.goto(`${process.env.BASE_URL}/login.html`);
  await page.getByLabel('Password').fill(process.env.SHOP_PASSWORD ?? 'secret');
  await expect(page.getByLabel('Password')).toHaveValue(process.env.SHOP_PASSWORD ?? 'secret');
});
