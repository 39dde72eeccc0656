// expect: pass
import { test as it, expect } from '@playwright/test';

it.describe('shop', () => {
  it('lists the products', async ({ page }) => {
    await page.goto(process.env.BASE_URL + '/products.html');
    await expect(page.getByRole('listitem')).toHaveCount(3);
  });
});
