// expect: pass
import { test, expect } from '@playwright/test';

test('the cart count settles', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await page.getByRole('button', { name: 'Add to cart' }).first().click();
  await expect.poll(async () => Number(await page.getByTestId('cart-count').textContent()), { intervals: [50, 100] }).toBe(1);
  await expect.poll(() => page.title(), { timeout: 2000 }).toContain('Products');
});
