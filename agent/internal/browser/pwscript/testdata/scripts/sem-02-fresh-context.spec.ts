// expect: pass
import { test, expect } from '@playwright/test';

test.describe.serial('cart', () => {
  test('adds to the cart and remembers it', async ({ page }) => {
    await page.goto(process.env.BASE_URL + '/products.html');
    await page.getByRole('listitem').filter({ hasText: 'Red mug' }).getByRole('button', { name: 'Add to cart' }).click();
    await expect(page.getByTestId('cart-count')).toHaveText('1');
    await page.evaluate(() => localStorage.setItem('cart', '1'));
  });
  test('a new visitor has an empty cart', async ({ page }) => {
    await page.goto(process.env.BASE_URL + '/products.html');
    expect(await page.evaluate(() => localStorage.getItem('cart'))).toBeNull();
    await expect(page.getByTestId('cart-count')).toHaveText('0');
  });
});
