// expect: pass
import { test, expect } from '@playwright/test';

test('search hits the backend', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  const response = page.waitForResponse((r) => r.url().includes('/echo'));
  await page.getByRole('searchbox', { name: 'Search products' }).fill('mug');
  await page.getByRole('searchbox', { name: 'Search products' }).press('Enter');
  expect((await response).status()).toBe(200);
});
