// expect: fail
// message: Expected: "€99"
import { test, expect } from '@playwright/test';

test('the product page, checked in full', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect.soft(page.locator('.price').first()).toHaveText('€99', { timeout: 500 });
  await expect.soft(page.getByRole('heading', { level: 1 })).toHaveText('Products');
  await expect(page.getByTestId('cart-count')).toHaveText('0');
});
