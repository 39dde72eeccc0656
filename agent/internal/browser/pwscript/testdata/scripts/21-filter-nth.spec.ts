// expect: pass
import { test, expect } from '@playwright/test';

test('lists: filter, nth, first, last', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  const products = page.getByRole('listitem');
  await expect(products).toHaveCount(3);
  await expect(products.filter({ hasText: 'mug' })).toHaveCount(2);
  await expect(products.filter({ hasNotText: 'mug' })).toHaveText(/Green tea/);
  await expect(products.filter({ has: page.getByRole('button') })).toHaveCount(2);
  await expect(products.filter({ hasNot: page.getByRole('button') })).toContainText('Sold out');
  await expect(products.first()).toContainText('Red mug');
  await expect(products.last()).toContainText('Green tea');
  await expect(products.nth(1).getByRole('heading')).toHaveText('Blue mug');
  await products.filter({ hasText: 'Blue mug' }).getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.getByTestId('cart-count')).toHaveText('1');
  await expect(products.nth(1).getByRole('button')).toHaveText('Added');
  expect(await products.count()).toBe(3);
});
