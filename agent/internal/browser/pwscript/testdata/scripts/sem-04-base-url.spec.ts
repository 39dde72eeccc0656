// expect: pass
import { test, expect } from '@playwright/test';

test.use({ baseURL: process.env.BASE_URL, testIdAttribute: 'data-testid' });

test('relative navigation', async ({ page }) => {
  await page.goto('/login.html');
  await expect(page).toHaveURL(/\/login\.html$/);
  await page.goto('products.html');
  await expect(page.getByTestId('cart-count')).toHaveText('0');
});
